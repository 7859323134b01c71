/*
 * The RPC server: request validation, dispatch and the duplicate cache.
 * Protocol: docs/runtime.md.  Everything read from a request is checked
 * against the received length before use, and every tensor access against the
 * descriptor, so no wire value can reach memory outside the declared buffers.
 */
#include "aot/rpc.h"

#include <stddef.h>
#include <string.h>

#include "aot/loader.h"
#include "aot/platform.h"

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static void wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void wr32(uint8_t *p, uint32_t v)
{
    wr16(p, (uint16_t)v);
    wr16(p + 2, (uint16_t)(v >> 16));
}

/* Writes into the reply payload: never past AOT_MAX_PAYLOAD. */
typedef struct {
    uint8_t *p;
    uint16_t len;
} out_t;

static void put_u8(out_t *o, uint8_t v)
{
    if (o->len < AOT_MAX_PAYLOAD) {
        o->p[o->len++] = v;
    }
}

static void put_u16(out_t *o, uint16_t v)
{
    put_u8(o, (uint8_t)v);
    put_u8(o, (uint8_t)(v >> 8));
}

static void put_u32(out_t *o, uint32_t v)
{
    put_u16(o, (uint16_t)v);
    put_u16(o, (uint16_t)(v >> 16));
}

static void put_str(out_t *o, const char *s)
{
    size_t n = 0;
    size_t i;
    if (s != NULL) {
        while (n < AOT_MAX_NAME && s[n] != '\0') {
            ++n;
        }
    }
    put_u8(o, (uint8_t)n);
    for (i = 0; i < n; ++i) {
        put_u8(o, (uint8_t)s[i]);
    }
}

typedef struct {
    const uint8_t *p; /* request payload */
    uint16_t len;
} in_t;

static aot_status_t cmd_info(aot_rpc_server_t *srv, const in_t *in, out_t *out)
{
    const aot_model_t *m = srv->model;
    uint32_t clock_hz;
    uint32_t caps;
    aot_device_report_t report;
    if (in->len != 0) {
        return AOT_ERR_BAD_LENGTH;
    }
    put_u16(out, AOT_RPC_PROTOCOL_VERSION);
    put_u16(out, AOT_MAX_FRAME);
    put_u16(out, AOT_MAX_RUNS);
    put_u16(out, m->num_tensors);
    put_u16(out, m->num_kernels);
    put_u8(out, aot_port_timer_unit());
    put_u8(out, AOT_MAX_DIMS);
    put_u32(out, srv->timer_overhead);
    put_str(out, srv->device->board_tag);
    put_str(out, srv->device->build_id);
    put_str(out, m->name);
    put_str(out, m->target_hash);
    /* Appended in a backward-compatible way: older hosts stop reading above.
     * The capabilities say which of the optional fields follow, in order. */
    clock_hz = aot_port_clock_hz();
    caps = (clock_hz != 0 ? AOT_RPC_CAP_CLOCK : 0u) | AOT_RPC_CAP_DEVICE;
#if AOT_RPC_LOADER_BYTES > 0
    caps |= AOT_RPC_CAP_RAM_LOADER;
#endif
    put_u32(out, caps);
#if AOT_RPC_LOADER_BYTES > 0
    put_u32(out, aot_loader_origin());
    put_u32(out, aot_loader_size());
#endif
    if (clock_hz != 0) {
        put_u32(out, clock_hz);
    }
    memset(&report, 0, sizeof report);
    aot_port_report(&report);
    put_u8(out, AOT_RPC_DEVICE_REPORT_BYTES);
    put_u32(out, report.measured_clock_hz);
    put_u8(out, report.flash_wait_states);
    put_u16(out, (uint16_t)(report.caches & AOT_CACHE_ALL));
    return AOT_OK;
}

static aot_status_t cmd_tensor_info(aot_rpc_server_t *srv, const in_t *in, out_t *out)
{
    const aot_tensor_t *t;
    uint16_t index;
    uint8_t d;
    if (in->len != 2) {
        return AOT_ERR_BAD_LENGTH;
    }
    index = rd16(in->p);
    if (index >= srv->model->num_tensors) {
        return AOT_ERR_BAD_TENSOR;
    }
    t = &srv->model->tensors[index];
    put_u8(out, t->dtype);
    put_u8(out, t->role);
    put_u8(out, t->flags);
    put_u8(out, t->ndim);
    put_u32(out, t->size_bytes);
    for (d = 0; d < t->ndim; ++d) {
        put_u32(out, t->shape[d]);
    }
    put_str(out, t->name);
    return AOT_OK;
}

static aot_status_t cmd_kernel_info(aot_rpc_server_t *srv, const in_t *in, out_t *out)
{
    uint16_t index;
    if (in->len != 2) {
        return AOT_ERR_BAD_LENGTH;
    }
    index = rd16(in->p);
    if (index >= srv->model->num_kernels) {
        return AOT_ERR_BAD_KERNEL;
    }
    put_str(out, srv->model->kernels[index].name);
    return AOT_OK;
}

/* The tensor a request names, after checking [offset, offset + len) lies in it. */
static aot_status_t locate(aot_rpc_server_t *srv, uint16_t index, uint32_t offset,
                           uint32_t len, const aot_tensor_t **found)
{
    const aot_tensor_t *t;
    if (index >= srv->model->num_tensors) {
        return AOT_ERR_BAD_TENSOR;
    }
    t = &srv->model->tensors[index];
    /* Written so that no sum can overflow. */
    if (offset > t->size_bytes || len > t->size_bytes - offset) {
        return AOT_ERR_OUT_OF_RANGE;
    }
    *found = t;
    return AOT_OK;
}

static aot_status_t cmd_write(aot_rpc_server_t *srv, const in_t *in, out_t *out)
{
    const aot_tensor_t *t = NULL;
    uint32_t len;
    aot_status_t st;
    (void)out;
    if (in->len < 6) {
        return AOT_ERR_BAD_LENGTH;
    }
    len = (uint32_t)in->len - 6u;
    st = locate(srv, rd16(in->p), rd32(in->p + 2), len, &t);
    if (st != AOT_OK) {
        return st;
    }
    if ((t->flags & AOT_TENSOR_WRITABLE) == 0) {
        return AOT_ERR_READ_ONLY;
    }
    /* The descriptor promises this storage is writable (see aot/model.h). */
    memcpy((uint8_t *)(uintptr_t)t->data + rd32(in->p + 2), in->p + 6, len);
    return AOT_OK;
}

static aot_status_t cmd_read(aot_rpc_server_t *srv, const in_t *in, out_t *out)
{
    const aot_tensor_t *t = NULL;
    uint32_t offset;
    uint16_t len;
    aot_status_t st;
    if (in->len != 8) {
        return AOT_ERR_BAD_LENGTH;
    }
    offset = rd32(in->p + 2);
    len = rd16(in->p + 6);
    if (len > AOT_MAX_PAYLOAD) {
        return AOT_ERR_BAD_LENGTH;
    }
    st = locate(srv, rd16(in->p), offset, len, &t);
    if (st != AOT_OK) {
        return st;
    }
    memcpy(out->p, (const uint8_t *)t->data + offset, len);
    out->len = len;
    return AOT_OK;
}

static uint64_t timed_call(aot_rpc_server_t *srv, aot_run_fn fn, int32_t *rc)
{
    uint64_t t;
    aot_port_timer_start();
    *rc = fn(srv->model->ctx);
    t = aot_port_timer_stop();
    return t > srv->timer_overhead ? t - srv->timer_overhead : 0;
}

static int32_t nothing(void *ctx)
{
    (void)ctx;
    return 0;
}

static aot_status_t cmd_run(aot_rpc_server_t *srv, const in_t *in, out_t *out)
{
    aot_run_fn fn;
    uint16_t kernel;
    uint16_t count;
    uint16_t i;
    if (in->len != 4) {
        return AOT_ERR_BAD_LENGTH;
    }
    kernel = rd16(in->p);
    count = rd16(in->p + 2);
    if (kernel == AOT_RPC_WHOLE_MODEL) {
        fn = srv->model->run;
    } else if (kernel == AOT_RPC_LOADED_KERNEL) {
        fn = srv->loaded; /* NULL unless code was committed since the last write */
        if (fn == NULL) {
            return AOT_ERR_BAD_KERNEL;
        }
    } else if (kernel < srv->model->num_kernels) {
        fn = srv->model->kernels[kernel].run;
    } else {
        return AOT_ERR_BAD_KERNEL;
    }
    if (count == 0 || count > AOT_MAX_RUNS) {
        return AOT_ERR_BAD_COUNT;
    }
    put_u8(out, aot_port_timer_unit());
    put_u8(out, 0);
    put_u16(out, count);
    for (i = 0; i < count; ++i) {
        int32_t rc = 0;
        uint64_t t = timed_call(srv, fn, &rc);
        if (rc != 0) {
            out->len = 0;
            put_u32(out, (uint32_t)rc);
            put_u16(out, i);
            return AOT_ERR_RUN_FAILED;
        }
        put_u32(out, (uint32_t)t);
        put_u32(out, (uint32_t)(t >> 32));
    }
    return AOT_OK;
}

#if AOT_RPC_LOADER_BYTES > 0
static aot_status_t cmd_load_code(aot_rpc_server_t *srv, const in_t *in, out_t *out)
{
    (void)out;
    if (in->len < 4) {
        return AOT_ERR_BAD_LENGTH;
    }
    srv->loaded = NULL; /* even a rejected write may follow a partial one */
    return aot_loader_write(rd32(in->p), in->p + 4, (uint32_t)in->len - 4u);
}

static aot_status_t cmd_commit_code(aot_rpc_server_t *srv, const in_t *in, out_t *out)
{
    aot_run_fn fn = NULL;
    aot_status_t st;
    (void)out;
    if (in->len != 12) {
        return AOT_ERR_BAD_LENGTH;
    }
    srv->loaded = NULL;
    st = aot_loader_commit(rd32(in->p), rd32(in->p + 4), rd32(in->p + 8), &fn);
    if (st == AOT_OK) {
        srv->loaded = fn;
    }
    return st;
}
#endif

/* A new session id, never 0 (no session) and never the current one. */
static uint32_t new_session(aot_rpc_server_t *srv, uint32_t nonce)
{
    uint8_t mix[12];
    uint32_t session;
    srv->handshakes++;
    wr32(mix, nonce);
    wr32(mix + 4, aot_port_entropy());
    wr32(mix + 8, srv->handshakes);
    session = aot_crc32(0, mix, sizeof mix);
    if (session == 0 || session == srv->session) {
        session ^= 0x5A5A0001u;
    }
    return session;
}

static aot_status_t cmd_hello(aot_rpc_server_t *srv, uint32_t nonce, const in_t *in,
                              out_t *out)
{
    if (in->len != 0) {
        return AOT_ERR_BAD_LENGTH;
    }
    /* A late copy of the HELLO that opened this session gets the same answer,
     * rather than a new session that the host would take for a reset. */
    if (srv->session == 0 || nonce != srv->hello_nonce) {
        srv->session = new_session(srv, nonce);
        srv->hello_nonce = nonce;
    }
    put_u32(out, srv->session);
    put_u16(out, AOT_RPC_PROTOCOL_VERSION);
    put_u16(out, AOT_MAX_FRAME);
    return AOT_OK;
}

static aot_status_t dispatch(aot_rpc_server_t *srv, uint8_t cmd, const in_t *in,
                             out_t *out)
{
    switch (cmd) {
    case AOT_CMD_INFO:
        return cmd_info(srv, in, out);
    case AOT_CMD_TENSOR_INFO:
        return cmd_tensor_info(srv, in, out);
    case AOT_CMD_KERNEL_INFO:
        return cmd_kernel_info(srv, in, out);
    case AOT_CMD_WRITE:
        return cmd_write(srv, in, out);
    case AOT_CMD_READ:
        return cmd_read(srv, in, out);
    case AOT_CMD_RUN:
        return cmd_run(srv, in, out);
#if AOT_RPC_LOADER_BYTES > 0
    case AOT_CMD_LOAD_CODE:
        return cmd_load_code(srv, in, out);
    case AOT_CMD_COMMIT_CODE:
        return cmd_commit_code(srv, in, out);
#endif
    case AOT_CMD_ECHO:
        if (in->len > AOT_MAX_PAYLOAD) {
            return AOT_ERR_BAD_LENGTH;
        }
        memcpy(out->p, in->p, in->len);
        out->len = in->len;
        return AOT_OK;
    default:
        return AOT_ERR_UNKNOWN_COMMAND;
    }
}

/* Build the reply header in tx, then send tx[0..8+payload). */
static void reply(aot_rpc_server_t *srv, uint8_t cmd, aot_status_t st, uint32_t session,
                  uint16_t id, uint16_t payload_len)
{
    srv->tx[0] = (uint8_t)(cmd | AOT_RPC_REPLY);
    srv->tx[1] = (uint8_t)st;
    wr32(srv->tx + 2, session);
    wr16(srv->tx + 6, id);
    srv->tx_len = (uint16_t)(AOT_FRAME_HEADER + payload_len);
    aot_frame_send(srv->tx, srv->tx_len);
}

/* An error reply that leaves the cached last reply alone. */
static void reply_uncached(uint8_t cmd, aot_status_t st, uint32_t session, uint16_t id)
{
    uint8_t body[AOT_FRAME_HEADER];
    body[0] = (uint8_t)(cmd | AOT_RPC_REPLY);
    body[1] = (uint8_t)st;
    wr32(body + 2, session);
    wr16(body + 6, id);
    aot_frame_send(body, sizeof body);
}

static void handle(aot_rpc_server_t *srv, uint16_t len)
{
    const uint8_t *rx = srv->rx;
    uint8_t cmd;
    uint32_t session;
    uint16_t id;
    uint32_t crc;
    in_t in;
    out_t out;
    aot_status_t st;

    if (len < AOT_FRAME_HEADER || (rx[0] & AOT_RPC_REPLY) != 0 || rx[1] != 0) {
        srv->frames_dropped++; /* not a request: perhaps our own echo */
        return;
    }
    cmd = rx[0];
    session = rd32(rx + 2);
    id = rd16(rx + 6);
    crc = rd32(rx + len); /* the decoder leaves the checked CRC after the body */

    if (srv->has_last && id == srv->last_id && crc == srv->last_crc) {
        aot_frame_send(srv->tx, srv->tx_len); /* a retry: same answer, no re-run */
        return;
    }
    in.p = rx + AOT_FRAME_HEADER;
    in.len = (uint16_t)(len - AOT_FRAME_HEADER);
    out.p = srv->tx + AOT_FRAME_HEADER;
    out.len = 0;

    if (cmd == AOT_CMD_HELLO) {
        st = cmd_hello(srv, session, &in, &out);
    } else if (srv->session == 0 || session != srv->session) {
        reply_uncached(cmd, AOT_ERR_SESSION, session, id);
        return;
    } else if (srv->has_last && (int16_t)(uint16_t)(id - srv->last_id) <= 0) {
        if (id == srv->last_id) {
            reply_uncached(cmd, AOT_ERR_DUPLICATE_ID, session, id);
        }
        /* Older ids are stale copies of requests already answered: drop. */
        return;
    } else {
        st = dispatch(srv, cmd, &in, &out);
    }
    if (st != AOT_OK && st != AOT_ERR_RUN_FAILED) {
        out.len = 0;
    }
    reply(srv, cmd, st, session, id, out.len);
    srv->has_last = 1;
    srv->last_id = id;
    srv->last_crc = crc;
}

aot_status_t aot_rpc_server_init(aot_rpc_server_t *srv, const aot_model_t *model,
                                 const aot_device_info_t *device)
{
    aot_status_t st;
    uint64_t best;
    int i;
    if (srv == NULL || device == NULL) {
        return AOT_ERR_BAD_ARGUMENT;
    }
    memset(srv, 0, sizeof *srv);
    st = aot_model_check(model);
    if (st != AOT_OK) {
        return st;
    }
    srv->model = model;
    srv->device = device;
    aot_frame_decoder_init(&srv->decoder, srv->rx, AOT_MAX_FRAME);
    /* The smallest of a few empty timings is the cost of the measurement
     * itself; subtracting it makes an empty kernel read as 0. */
    srv->timer_overhead = 0;
    best = 0xFFFFFFFFu;
    for (i = 0; i < 3; ++i) {
        int32_t rc;
        uint64_t t = timed_call(srv, nothing, &rc);
        if (t < best) {
            best = t;
        }
    }
    srv->timer_overhead = (uint32_t)best;
    return AOT_OK;
}

void aot_rpc_server_feed(aot_rpc_server_t *srv, uint8_t byte)
{
    uint16_t len = 0;
    switch (aot_frame_decoder_push(&srv->decoder, byte, &len)) {
    case AOT_FRAME_READY:
        handle(srv, len);
        break;
    case AOT_FRAME_DROPPED:
        srv->frames_dropped++;
        break;
    default:
        break;
    }
}

void aot_rpc_server_serve(aot_rpc_server_t *srv)
{
    for (;;) {
        int c = aot_port_read_byte();
        if (c < 0) {
            return;
        }
        aot_rpc_server_feed(srv, (uint8_t)c);
    }
}
