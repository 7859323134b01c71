/*
 * libFuzzer target for the frame decoder and the RPC dispatcher.
 *
 * The first input byte picks a mode:
 *   even: the rest goes byte by byte into the server, as from the wire
 *         (exercises the decoder: flags, escapes, CRC, lengths);
 *   odd:  the rest is cut into requests, each preceded by a length byte, and
 *         every request is sent as a valid frame in the current session (so
 *         the fuzzer gets past the CRC and explores the dispatcher).
 * A HELLO opens a session first in both modes.  The fuzz port stubs check that
 * every reply the server sends is a well-formed frame no longer than
 * AOT_MAX_FRAME.  Built by tests/runtime_c/test_runtime_fuzz.py, either with
 * clang -fsanitize=fuzzer,address,undefined or, with FUZZ_MAIN, as a plain
 * program that replays the files named on its command line.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot/frame.h"
#include "aot/platform.h"
#include "aot/rpc.h"

extern const aot_model_t aot_rpc_model;

static uint8_t reply_buf[AOT_MAX_FRAME + 8];
static aot_frame_decoder_t reply_decoder;
static uint64_t fake_clock;

void aot_port_init(void) {}
int aot_port_read_byte(void) { return -1; }
void aot_port_timer_start(void) { fake_clock = 0; }
uint64_t aot_port_timer_stop(void) { return fake_clock += 17; }
uint8_t aot_port_timer_unit(void) { return AOT_TIMER_CYCLES; }
uint32_t aot_port_entropy(void) { return 1234; }
uint32_t aot_port_clock_hz(void) { return 48000000u; }
void aot_port_report(aot_device_report_t *report)
{
    report->measured_clock_hz = 47999000u;
    report->flash_wait_states = 2;
    report->caches = AOT_CACHE_FLASH_ICACHE;
}
void aot_port_exit(int code) { exit(code); }

void aot_port_write(const uint8_t *data, size_t len)
{
    size_t i;
    for (i = 0; i < len; ++i) {
        uint16_t body = 0;
        aot_frame_event_t ev = aot_frame_decoder_push(&reply_decoder, data[i], &body);
        if (ev == AOT_FRAME_DROPPED) {
            fprintf(stderr, "the server sent a malformed frame\n");
            abort();
        }
        if (ev == AOT_FRAME_READY && (body < AOT_FRAME_HEADER || (reply_buf[0] & 0x80) == 0)) {
            fprintf(stderr, "the server sent a frame that is not a reply\n");
            abort();
        }
    }
}

static void send_frame(aot_rpc_server_t *srv, const uint8_t *body, size_t len)
{
    uint8_t wire[2 * (AOT_MAX_FRAME + 8) + 2];
    size_t n = 0;
    size_t i;
    uint8_t raw[AOT_MAX_FRAME + 8];
    uint32_t crc = aot_crc32(0, body, (uint32_t)len);
    memcpy(raw, body, len);
    raw[len] = (uint8_t)crc;
    raw[len + 1] = (uint8_t)(crc >> 8);
    raw[len + 2] = (uint8_t)(crc >> 16);
    raw[len + 3] = (uint8_t)(crc >> 24);
    wire[n++] = AOT_FRAME_FLAG;
    for (i = 0; i < len + 4; ++i) {
        if (raw[i] == AOT_FRAME_FLAG || raw[i] == AOT_FRAME_ESCAPE) {
            wire[n++] = AOT_FRAME_ESCAPE;
            wire[n++] = (uint8_t)(raw[i] ^ AOT_FRAME_XOR);
        } else {
            wire[n++] = raw[i];
        }
    }
    wire[n++] = AOT_FRAME_FLAG;
    for (i = 0; i < n; ++i) {
        aot_rpc_server_feed(srv, wire[i]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const aot_device_info_t device = {"fuzz/host", "fuzz"};
    static aot_rpc_server_t srv;
    uint8_t hello[AOT_FRAME_HEADER] = {AOT_CMD_HELLO, 0, 1, 2, 3, 4, 0, 0};
    uint8_t body[AOT_MAX_FRAME + 8];
    size_t pos = 1;
    uint16_t next_id = 1;

    aot_frame_decoder_init(&reply_decoder, reply_buf, sizeof reply_buf);
    if (aot_rpc_server_init(&srv, &aot_rpc_model, &device) != AOT_OK) {
        abort();
    }
    send_frame(&srv, hello, sizeof hello);
    if (size == 0) {
        return 0;
    }
    if ((data[0] & 1) == 0) {
        for (; pos < size; ++pos) {
            aot_rpc_server_feed(&srv, data[pos]);
        }
        return 0;
    }
    while (pos < size) {
        /* Length byte, then a command byte and payload; header filled in. */
        size_t len = data[pos++];
        size_t take = len < size - pos ? len : size - pos;
        if (take == 0) {
            break;
        }
        if (AOT_FRAME_HEADER + take - 1 > AOT_MAX_FRAME) {
            take = AOT_MAX_FRAME - AOT_FRAME_HEADER + 1;
        }
        body[0] = data[pos];
        body[1] = 0;
        body[2] = (uint8_t)srv.session;
        body[3] = (uint8_t)(srv.session >> 8);
        body[4] = (uint8_t)(srv.session >> 16);
        body[5] = (uint8_t)(srv.session >> 24);
        body[6] = (uint8_t)next_id;
        body[7] = (uint8_t)(next_id >> 8);
        next_id++;
        memcpy(body + AOT_FRAME_HEADER, data + pos + 1, take - 1);
        send_frame(&srv, body, AOT_FRAME_HEADER + take - 1);
        pos += take;
    }
    return 0;
}

#ifdef FUZZ_MAIN
/* Replay inputs without libFuzzer (e.g. under gcc's sanitizers). */
int main(int argc, char **argv)
{
    static uint8_t buf[1 << 16];
    int i;
    for (i = 1; i < argc; ++i) {
        FILE *f = fopen(argv[i], "rb");
        size_t n;
        if (f == NULL) {
            perror(argv[i]);
            return 2;
        }
        n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
    }
    return 0;
}
#endif
