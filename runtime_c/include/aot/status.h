/*
 * Status codes of the aot C runtime.  Every runtime call returns one; the RPC
 * server sends the same values in the status byte of a reply.  The numbers are
 * part of the wire protocol (docs/runtime.md) and never change meaning.
 */
#ifndef AOT_STATUS_H
#define AOT_STATUS_H

typedef enum {
    AOT_OK = 0,
    AOT_ERR_UNKNOWN_COMMAND = 1,  /* command byte not known to this firmware */
    AOT_ERR_BAD_LENGTH = 2,       /* payload too short, too long or malformed */
    AOT_ERR_BAD_TENSOR = 3,       /* tensor index not declared by the model */
    AOT_ERR_OUT_OF_RANGE = 4,     /* offset/length outside the tensor */
    AOT_ERR_READ_ONLY = 5,        /* write to a tensor not marked writable */
    AOT_ERR_SESSION = 6,          /* request from another (or no) session: device reset? */
    AOT_ERR_DUPLICATE_ID = 7,     /* request id reused for a different request */
    AOT_ERR_RUN_FAILED = 8,       /* the model or kernel returned non-zero */
    AOT_ERR_BAD_KERNEL = 9,       /* kernel index not declared by the model */
    AOT_ERR_BAD_COUNT = 10,       /* run count of 0 or above AOT_MAX_RUNS */
    AOT_ERR_BAD_MODEL = 11,       /* the model descriptor is inconsistent */
    AOT_ERR_BAD_ARGUMENT = 12,    /* a NULL pointer or similar caller bug */
    AOT_ERR_BAD_CHECKSUM = 13     /* loaded code does not match the host's CRC-32 */
} aot_status_t;

#endif /* AOT_STATUS_H */
