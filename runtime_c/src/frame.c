/* Frame codec: see aot/frame.h for the format. */
#include "aot/frame.h"

#include "aot/platform.h"

/* Decoder states. */
enum {
    HUNT = 0,    /* waiting for the first flag */
    BODY = 1,    /* collecting bytes */
    ESCAPED = 2, /* the previous byte was ESCAPE */
    BROKEN = 3   /* frame already bad; skip to the next flag */
};

uint32_t aot_crc32(uint32_t crc, const uint8_t *data, uint32_t len)
{
    /* Bitwise, no table: 1 KiB of flash saved matters more than speed at
     * serial-link rates. */
    uint32_t i;
    crc = ~crc;
    for (i = 0; i < len; ++i) {
        int bit;
        crc ^= data[i];
        for (bit = 0; bit < 8; ++bit) {
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
        }
    }
    return ~crc;
}

void aot_frame_decoder_init(aot_frame_decoder_t *dec, uint8_t *buf, uint16_t cap)
{
    dec->buf = buf;
    dec->cap = cap;
    dec->len = 0;
    dec->state = HUNT;
}

static aot_frame_event_t finish(aot_frame_decoder_t *dec, uint16_t *body_len)
{
    uint16_t len = dec->len;
    uint8_t state = dec->state;
    uint32_t want;
    uint32_t got;

    dec->len = 0;
    dec->state = BODY;
    if (state == HUNT || (state == BODY && len == 0)) {
        return AOT_FRAME_PENDING; /* idle flags between frames */
    }
    if (state != BODY || len < AOT_FRAME_CRC + 1u) {
        return AOT_FRAME_DROPPED;
    }
    len = (uint16_t)(len - AOT_FRAME_CRC);
    want = (uint32_t)dec->buf[len] | ((uint32_t)dec->buf[len + 1] << 8) |
           ((uint32_t)dec->buf[len + 2] << 16) | ((uint32_t)dec->buf[len + 3] << 24);
    got = aot_crc32(0, dec->buf, len);
    if (want != got) {
        return AOT_FRAME_DROPPED;
    }
    *body_len = len;
    return AOT_FRAME_READY;
}

aot_frame_event_t aot_frame_decoder_push(aot_frame_decoder_t *dec, uint8_t byte,
                                         uint16_t *body_len)
{
    if (byte == AOT_FRAME_FLAG) {
        return finish(dec, body_len);
    }
    switch (dec->state) {
    case HUNT:
    case BROKEN:
        return AOT_FRAME_PENDING;
    case ESCAPED:
        byte ^= AOT_FRAME_XOR;
        if (byte != AOT_FRAME_FLAG && byte != AOT_FRAME_ESCAPE) {
            dec->state = BROKEN; /* only the two special bytes are ever escaped */
            return AOT_FRAME_PENDING;
        }
        dec->state = BODY;
        break;
    default:
        if (byte == AOT_FRAME_ESCAPE) {
            dec->state = ESCAPED;
            return AOT_FRAME_PENDING;
        }
        break;
    }
    if (dec->len >= dec->cap) {
        dec->state = BROKEN;
        return AOT_FRAME_PENDING;
    }
    dec->buf[dec->len++] = byte;
    return AOT_FRAME_PENDING;
}

/* Stuff bytes into a small chunk so the port sees few, larger writes. */
typedef struct {
    uint8_t out[64];
    uint8_t n;
} chunk_t;

static void put_raw(chunk_t *c, uint8_t byte)
{
    if (c->n == sizeof c->out) {
        aot_port_write(c->out, c->n);
        c->n = 0;
    }
    c->out[c->n++] = byte;
}

static void put_stuffed(chunk_t *c, const uint8_t *data, uint32_t len)
{
    uint32_t i;
    for (i = 0; i < len; ++i) {
        if (data[i] == AOT_FRAME_FLAG || data[i] == AOT_FRAME_ESCAPE) {
            put_raw(c, AOT_FRAME_ESCAPE);
            put_raw(c, (uint8_t)(data[i] ^ AOT_FRAME_XOR));
        } else {
            put_raw(c, data[i]);
        }
    }
}

void aot_frame_send(const uint8_t *body, uint16_t len)
{
    chunk_t c;
    uint8_t crc_bytes[4];
    uint32_t crc = aot_crc32(0, body, len);

    crc_bytes[0] = (uint8_t)crc;
    crc_bytes[1] = (uint8_t)(crc >> 8);
    crc_bytes[2] = (uint8_t)(crc >> 16);
    crc_bytes[3] = (uint8_t)(crc >> 24);
    c.n = 0;
    put_raw(&c, AOT_FRAME_FLAG);
    put_stuffed(&c, body, len);
    put_stuffed(&c, crc_bytes, 4);
    put_raw(&c, AOT_FRAME_FLAG);
    aot_port_write(c.out, c.n);
}
