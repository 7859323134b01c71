"""The host frame codec: round trips, resynchronisation, rejection of damage."""

import struct
import zlib

from hypothesis import given
from hypothesis import strategies as st

from aot.rpc.framing import FrameDecoder, Header, encode_frame


@given(st.lists(st.binary(min_size=1, max_size=300), max_size=5))
def test_frames_round_trip_in_any_chunking(bodies):
    wire = b"".join(encode_frame(b) for b in bodies)
    decoder = FrameDecoder()
    got = []
    for i in range(0, len(wire), 7):
        got += decoder.feed(wire[i : i + 7])
    assert got == bodies
    assert decoder.dropped == 0


def test_special_bytes_are_escaped_and_never_appear_inside():
    body = bytes([0x7E, 0x7D, 0x00, 0x7E])
    wire = encode_frame(body)
    assert wire[0] == wire[-1] == 0x7E
    assert 0x7E not in wire[1:-1]
    assert wire.startswith(b"\x7e\x7d\x5e\x7d\x5d\x00\x7d\x5e")


def test_crc_is_zlib_crc32_little_endian():
    wire = encode_frame(b"abc")
    assert wire[4:8] == struct.pack("<I", zlib.crc32(b"abc"))


def test_garbage_before_and_between_frames_is_skipped():
    decoder = FrameDecoder()
    wire = b"junk" + encode_frame(b"one") + b"\x7e\x7e" + encode_frame(b"two")
    assert decoder.feed(wire) == [b"one", b"two"]


def test_bad_crc_bad_escape_and_overlong_frames_are_dropped():
    decoder = FrameDecoder(max_body=8)
    good = encode_frame(b"ok")
    corrupted = bytearray(encode_frame(b"hello"))
    corrupted[2] ^= 0x01
    bad_escape = b"\x7e\x7d\x00abcdef\x7e"
    overlong = encode_frame(b"x" * 9)
    got = decoder.feed(bytes(corrupted) + bad_escape + overlong + good)
    assert got == [b"ok"]
    assert decoder.dropped == 3


def test_a_lost_flag_or_byte_costs_at_most_the_frame_it_touches():
    decoder = FrameDecoder()
    first = encode_frame(b"first")[:-1]  # end flag lost: the next start flag ends it
    assert decoder.feed(first + encode_frame(b"second")) == [b"first", b"second"]
    damaged = encode_frame(b"third")
    damaged = damaged[:3] + damaged[4:]  # one byte lost
    assert decoder.feed(damaged + encode_frame(b"fourth")) == [b"fourth"]
    assert decoder.dropped == 1


def test_header_layout():
    head = Header(0x82, 3, 0x11223344, 0xBEEF)
    assert head.pack() == bytes([0x82, 3, 0x44, 0x33, 0x22, 0x11, 0xEF, 0xBE])
    assert Header.unpack(head.pack() + b"payload") == head
