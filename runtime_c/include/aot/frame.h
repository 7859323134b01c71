/*
 * Frame codec of the serial RPC: byte stuffing and CRC-32.
 *
 * On the wire a frame is  FLAG stuffed(body || crc32(body) little-endian) FLAG
 * with FLAG = 0x7E.  Inside, 0x7E and 0x7D are sent as 0x7D followed by the
 * byte XOR 0x20.  A flag both ends a frame and may start the next, so a lost
 * byte costs at most the frames it touches: the decoder resynchronises on the
 * next flag.  The CRC is CRC-32/ISO-HDLC (the zlib one).
 */
#ifndef AOT_FRAME_H
#define AOT_FRAME_H

#include <stdint.h>

#include "aot/config.h"

#define AOT_FRAME_FLAG 0x7Eu
#define AOT_FRAME_ESCAPE 0x7Du
#define AOT_FRAME_XOR 0x20u

/* CRC-32 of len bytes continuing from crc (start with 0). */
uint32_t aot_crc32(uint32_t crc, const uint8_t *data, uint32_t len);

typedef enum {
    AOT_FRAME_PENDING = 0, /* byte taken, no complete frame yet */
    AOT_FRAME_READY = 1,   /* a frame with a good CRC is in the buffer */
    AOT_FRAME_DROPPED = 2  /* a frame ended but was bad (CRC, size, escape) */
} aot_frame_event_t;

typedef struct {
    uint8_t *buf;    /* caller's buffer, cap bytes */
    uint16_t cap;
    uint16_t len;    /* bytes collected of the current frame */
    uint8_t state;   /* private */
} aot_frame_decoder_t;

/* Use buf[0..cap) to collect frames; cap includes the 4 CRC bytes. */
void aot_frame_decoder_init(aot_frame_decoder_t *dec, uint8_t *buf, uint16_t cap);

/* Take one byte.  On AOT_FRAME_READY, buf[0..*body_len) is the body and
 * buf[*body_len..*body_len+4) its CRC; they stay valid until the next call. */
aot_frame_event_t aot_frame_decoder_push(aot_frame_decoder_t *dec, uint8_t byte,
                                         uint16_t *body_len);

/* Send body as one frame through aot_port_write(). */
void aot_frame_send(const uint8_t *body, uint16_t len);

#endif /* AOT_FRAME_H */
