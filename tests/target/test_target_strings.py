"""Targets from strings, JSON and tags: canonical forms, equality, validation."""

import json
import pickle
import re
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aot.errors import AotError
from aot.target import KINDS, Target, TargetError, list_boards

BOARDS = list_boards()
TAGS = [b.tag for b in BOARDS]


def roundtrips(t: Target) -> None:
    """Both canonical forms parse back to an equal target that prints identically."""
    s, j = str(t), t.to_json()
    assert str(Target(s)) == s
    assert Target(s) == t
    assert Target(j).to_json() == j
    assert Target(json.loads(j)) == t
    assert Target(t.to_dict()).digest() == t.digest()


def test_string_example_is_canonical():
    text = "c -keys=arm_cpu,cpu -mcpu=cortex-m4 -mfloat-abi=hard"
    t = Target(text)
    assert str(t) == text
    assert t.kind == "c"
    assert t.keys == ("arm_cpu", "cpu")
    assert t.attrs["mcpu"] == "cortex-m4"
    assert t.attrs["mfpu"] is None
    assert t.attrs["workspace-byte-alignment"] is None  # derived: the vector width
    roundtrips(t)


def test_canonical_string_sorts_attributes_and_derives_keys():
    t = Target("c   -mfloat-abi=hard -mcpu=cortex-m4")
    assert str(t) == "c -keys=arm_cpu,cpu -mcpu=cortex-m4 -mfloat-abi=hard"


def test_json_example():
    t = Target(
        {"kind": "c", "mcpu": "cortex-m4", "host": {"kind": "c", "mtriple": "x86_64-linux-gnu"}}
    )
    assert t.host == Target("c -mtriple=x86_64-linux-gnu")
    assert t.to_dict() == {
        "kind": "c",
        "keys": ["arm_cpu", "cpu"],
        "mcpu": "cortex-m4",
        "host": {"kind": "c", "keys": ["cpu"], "mtriple": "x86_64-linux-gnu"},
    }
    assert (
        str(t)
        == "c -keys=arm_cpu,cpu -mcpu=cortex-m4 -host={c -keys=cpu -mtriple=x86_64-linux-gnu}"
    )
    roundtrips(t)


def test_json_text_is_compact_and_sorted():
    t = Target("c -mcpu=cortex-m3")
    assert t.to_json() == '{"keys":["arm_cpu","cpu"],"kind":"c","mcpu":"cortex-m3"}'


@pytest.mark.parametrize("tag", TAGS)
def test_every_board_target_roundtrips(tag):
    t = Target(tag)
    assert t.tag == tag
    assert t == Target(str(t)) == Target(t.to_json())
    assert t == Target(tag + ":v1")
    roundtrips(t)
    # Without its tag it is a different (untagged) target with the same facts.
    plain = t.with_tag(None)
    assert plain != t and plain.isa == t.isa
    roundtrips(plain)


def test_alias_resolves_to_canonical_tag():
    assert Target("qemu/an386").tag == "qemu/mps2-an386"
    assert Target("qemu/an386") == Target("qemu/mps2-an386")


def test_defaults_are_not_printed_and_do_not_change_identity():
    assert Target("llvm -opt-level=3") == Target("llvm")
    assert (
        str(Target("c -workspace-byte-alignment=32")) == "c -keys=cpu -workspace-byte-alignment=32"
    )
    assert str(Target("llvm -system-lib")) == "llvm -keys=cpu -system-lib=true"
    assert Target("llvm -system-lib=false") == Target("llvm")


def test_typed_values():
    t = Target("llvm -opt-level=2 -fast-math=1 -mattr=+dsp,-mve -libs=cmsis_nn")
    assert t.attrs["opt-level"] == 2
    assert t.attrs["fast-math"] is True
    assert t.attrs["mattr"] == ("+dsp", "-mve")
    assert t.attrs["libs"] == ("cmsis_nn",)
    roundtrips(t)


def test_quoted_strings_roundtrip():
    t = Target({"kind": "c", "model": 'my board, "rev b"', "mattr": ["a,b", "c"]})
    assert str(t) == 'c -keys=cpu -mattr="a,b",c -model="my board, \\"rev b\\""'
    roundtrips(t)


def test_equality_hash_and_digest():
    a = Target("c -mcpu=cortex-m7 -mfloat-abi=hard")
    b = Target('{"kind": "c", "mfloat-abi": "hard", "mcpu": "cortex-m7"}')
    assert a == b and hash(a) == hash(b) and a.digest() == b.digest()
    assert len({a, b, Target("c")}) == 2
    assert a != Target("c -mcpu=cortex-m7")
    assert a.digest() != Target("c -mcpu=cortex-m7").digest()
    assert a != "c -keys=arm_cpu,cpu -mcpu=cortex-m7 -mfloat-abi=hard"


def test_digest_is_stable_across_processes():
    t = Target("qemu/mps2-an386")
    code = "from aot.target import Target; print(Target('qemu/mps2-an386').digest())"
    env = {"PYTHONHASHSEED": "123"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout.strip()
    assert out == t.digest()
    assert re.fullmatch(r"[0-9a-f]{64}", out)


def test_digest_is_sha256_of_the_canonical_json():
    import hashlib

    t = Target("c -mcpu=cortex-m55")
    assert t.digest() == hashlib.sha256(t.to_json().encode()).hexdigest()


def test_immutable_and_picklable():
    t = Target("qemu/mps2-an386")
    with pytest.raises(AttributeError):
        t.kind = "llvm"
    with pytest.raises(TypeError):
        t.attrs["mcpu"] = "cortex-m7"
    assert pickle.loads(pickle.dumps(t)) == t


def test_explicit_keys_come_first():
    t = Target("c -keys=my_key -device=arm_cpu")
    assert t.keys == ("my_key", "arm_cpu", "cpu")
    roundtrips(t)


def test_host_and_composite():
    host = Target("llvm -mtriple=x86_64-linux-gnu")
    dev = Target("c -mcpu=cortex-m4 -mfloat-abi=hard", host=host)
    assert dev.host == host
    comp = Target(
        {
            "kind": "composite",
            "targets": [dev.to_dict(), {"kind": "c", "march": "rv32imac"}],
            "host": "c -mtriple=x86_64-linux-gnu",
        }
    )
    assert comp.kind == "composite" and comp.device_type == "composite"
    assert comp.keys == ()
    assert [t.kind for t in comp.targets] == ["c", "c"]
    assert comp.targets[0].host == host
    assert comp.targets[1].keys == ("riscv", "cpu")
    assert comp.host == Target("c -mtriple=x86_64-linux-gnu")
    assert str(comp) == (
        "composite -targets={c -keys=arm_cpu,cpu -mcpu=cortex-m4 -mfloat-abi=hard "
        "-host={llvm -keys=cpu -mtriple=x86_64-linux-gnu}},{c -keys=riscv,cpu -march=rv32imac} "
        "-host={c -keys=cpu -mtriple=x86_64-linux-gnu}"
    )
    roundtrips(comp)
    assert Target("c").targets == (Target("c"),)


def test_with_host_and_with_tag_make_new_targets():
    t = Target("c -mcpu=cortex-m4")
    h = t.with_host("c")
    assert t.host is None and h.host == Target("c") and h != t
    assert h.with_host(None) == t
    assert t.with_tag("qemu/mps2-an386").tag == "qemu/mps2-an386"


def test_every_kind_is_registered_once():
    assert KINDS.names() == ["c", "composite", "llvm"]
    with pytest.raises(ValueError, match="already registered"):
        KINDS.register(KINDS.get("c"))
    assert KINDS.get("c").default_keys == ("cpu",)
    assert KINDS.get("c").device_type == "cpu"


# -- validation ----------------------------------------------------------------
@pytest.mark.parametrize(
    "spec, message",
    [
        (
            "cc -mcpu=cortex-m4",
            r"unknown target kind 'cc' \(did you mean 'c'\?\); known kinds: c, composite, llvm",
        ),
        (
            "c -mcpuu=cortex-m4",
            r"no attribute -mcpuu \(did you mean -mcpu\?\); allowed: .*-march, -mattr, -mcpu,",
        ),
        ("c -foo=1", r"no attribute -foo; allowed: -constants-byte-alignment"),
        ("llvm -opt-level=high", r"-opt-level expects an integer, got 'high'"),
        ("llvm -fast-math=maybe", r"-fast-math expects true or false, got 'maybe'"),
        ("c -mcpu", r"-mcpu needs a value"),
        (
            "c -mfloat-abi=hardd",
            r"-mfloat-abi=hardd is not allowed \(did you mean -mfloat-abi=hard\?\); "
            r"one of: hard, soft, softfp",
        ),
        ({"kind": "c", "mabi": "ilp64"}, r"-mabi=ilp64 is not allowed"),
        ("c -mcpu=a,b", r"-mcpu expects a string, got 2 items; quote"),
        ("c -mcpu=a -mcpu=b", r"-mcpu is given twice"),
        ("c -keys=Arm", r"'Arm' is not a key"),
        ("c -host=c", r"-host expects one target in braces"),
        ("c -host={c -host={c}}", r"a host target cannot have a host of its own"),
        ("composite", r"a 'composite' target needs -targets"),
        ("composite -targets=c", r"-targets expects targets in braces"),
        ("c mcpu=x", r"bad target string: expected an option starting with '-'"),
        ("c -mcpu=x}", r"bad target string: unexpected text"),
        ("c -host={c", r"expected '}' closing a nested target"),
        ('c -model="abc', r"unterminated quoted string"),
        ("", r"expected a target kind"),
        ("c -tag=nonsense", r"-tag=nonsense is not a board tag"),
        (
            "qemu/mps2-an368",
            r"unknown board tag 'qemu/mps2-an368' \(did you mean 'qemu/mps2-an386'\?\); "
            r"known tags: .*qemu/mps2-an385",
        ),
        ("qemu/mps2-an386 -mcpu=cortex-m7", r"a board tag stands alone"),
        ("qemu/mps2-an386:v9", r"is at version v1, not v9"),
        ({"mcpu": "cortex-m4"}, r'needs "kind"'),
        (
            {"kind": "c", "mcpuu": "x"},
            r"no attribute mcpuu \(did you mean 'mcpu'\?\); allowed: constants-byte-alignment",
        ),
        ({"kind": "c", "mcpu": 4}, r"mcpu expects a string, got 4"),
        ({"kind": "llvm", "opt-level": True}, r"opt-level expects an integer, got True"),
        ({"kind": "llvm", "opt-level": "3"}, r"opt-level expects an integer, got '3'"),
        ({"kind": "c", "mattr": "+dsp"}, r"mattr expects a list of strings"),
        ({"kind": "c", "keys": "cpu"}, r'"keys" expects a list of strings'),
        ({"kind": "c", "host": 3}, r"host expects a target, got 3"),
        ("{not json", r"bad target JSON"),
    ],
)
def test_validation_errors(spec, message):
    with pytest.raises(TargetError, match=message):
        Target(spec)


def test_target_error_is_an_aot_error():
    assert issubclass(TargetError, AotError)
    with pytest.raises(AotError):
        Target(42)


def test_host_given_twice():
    with pytest.raises(TargetError, match="already has a host"):
        Target("c -host={c}", host="llvm")


# -- property: printing and parsing are inverse ------------------------------------
_word = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=8)
_cpu = st.fixed_dictionaries(
    {},
    optional={
        "mcpu": st.sampled_from(["cortex-m0plus", "cortex-m4", "cortex-m7", "cortex-m55+nomve"]),
        "model": _word,
        "mattr": st.lists(_word, max_size=3),
        "workspace-byte-alignment": st.integers(-5, 1 << 40),
        "opt-level": st.integers(0, 3),
        "fast-math": st.booleans(),
    },
)


@given(_cpu, st.booleans())
def test_printing_and_parsing_are_inverse(attrs, with_host):
    spec = {"kind": "llvm", **attrs}
    if with_host:
        spec["host"] = {"kind": "c", "model": attrs.get("model", "h")}
    t = Target(spec)
    assert Target(str(t)) == t
    assert str(Target(str(t))) == str(t)
    assert Target(t.to_json()) == t
