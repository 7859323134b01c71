/*
 * The RPC server: serves one model descriptor over a byte stream.
 *
 * Protocol (full specification in docs/runtime.md).  Every frame body starts
 * with an 8-byte header, little-endian:
 *   [0] command (requests) or command | 0x80 (replies)
 *   [1] status: 0 in requests, an aot_status_t in replies
 *   [2..6) session: the session id (HELLO: the host's nonce), echoed in replies
 *   [6..8) request id, echoed in replies
 * The server answers each good request with exactly one reply, except stale
 * requests (an id older than the last one served), which it drops.  A request
 * equal to the last one served (same id and CRC) gets the cached reply again
 * without being executed twice.
 */
#ifndef AOT_RPC_H
#define AOT_RPC_H

#include <stdint.h>

#include "aot/config.h"
#include "aot/frame.h"
#include "aot/model.h"
#include "aot/status.h"

#define AOT_RPC_PROTOCOL_VERSION 1u
#define AOT_RPC_REPLY 0x80u
#define AOT_RPC_WHOLE_MODEL 0xFFFFu /* kernel index meaning "the model's run" */
#define AOT_RPC_LOADED_KERNEL 0xFFFEu /* kernel index meaning "the code loaded into RAM" */

/* Bits of the capabilities word at the end of the INFO reply. */
#define AOT_RPC_CAP_RAM_LOADER 0x01u /* LOAD_CODE / COMMIT_CODE (built with AOT_RPC_LOADER) */
#define AOT_RPC_CAP_CLOCK 0x02u      /* a u32 core clock in Hz follows (aot_port_clock_hz) */
#define AOT_RPC_CAP_DEVICE 0x04u     /* the device report follows (aot_port_report):
                                        u8 length, then that many bytes: u32 measured clock
                                        in Hz (0: not measured), u8 flash wait states
                                        (0xFF: none), u16 AOT_CACHE_* bits */
#define AOT_RPC_DEVICE_REPORT_BYTES 7u

/* Command codes (requests); see docs/runtime.md for payloads. */
enum {
    AOT_CMD_HELLO = 0x01,
    AOT_CMD_INFO = 0x02,
    AOT_CMD_TENSOR_INFO = 0x03,
    AOT_CMD_KERNEL_INFO = 0x04,
    AOT_CMD_WRITE = 0x05,
    AOT_CMD_READ = 0x06,
    AOT_CMD_RUN = 0x07,
    AOT_CMD_ECHO = 0x08,
    AOT_CMD_LOAD_CODE = 0x09,  /* tuning images only (AOT_RPC_LOADER): write code into RAM */
    AOT_CMD_COMMIT_CODE = 0x0A /* check it and make it the kernel AOT_RPC_LOADED_KERNEL */
};

/* What the firmware build says about itself, for INFO. */
typedef struct {
    const char *board_tag; /* canonical board tag, e.g. "qemu/mps2-an386" */
    const char *build_id;  /* anything that identifies the build */
} aot_device_info_t;

typedef struct {
    const aot_model_t *model;
    const aot_device_info_t *device;
    aot_frame_decoder_t decoder;
    uint8_t rx[AOT_MAX_FRAME];
    uint8_t tx[AOT_MAX_FRAME]; /* the last reply, kept for duplicates */
    uint16_t tx_len;
    uint8_t has_last;          /* tx holds the reply to (last_id, last_crc) */
    uint16_t last_id;
    uint32_t last_crc;
    uint32_t session;          /* 0: no session yet */
    uint32_t hello_nonce;      /* the host nonce that opened the session */
    uint32_t handshakes;
    uint32_t timer_overhead;   /* subtracted from every timing */
    uint32_t frames_dropped;   /* bad CRC, bad escape, too long, too short */
    aot_run_fn loaded;         /* committed RAM code (AOT_RPC_LOADER), or NULL */
} aot_rpc_server_t;

/* Check the model and prepare to serve.  AOT_ERR_BAD_MODEL or
 * AOT_ERR_BAD_ARGUMENT leave the server unusable.  Calls the timer hooks to
 * measure their own overhead. */
aot_status_t aot_rpc_server_init(aot_rpc_server_t *srv, const aot_model_t *model,
                                 const aot_device_info_t *device);

/* Take one received byte; when it completes a request, execute it and send
 * the reply before returning. */
void aot_rpc_server_feed(aot_rpc_server_t *srv, uint8_t byte);

/* Read bytes and serve until aot_port_read_byte() reports end of input. */
void aot_rpc_server_serve(aot_rpc_server_t *srv);

#endif /* AOT_RPC_H */
