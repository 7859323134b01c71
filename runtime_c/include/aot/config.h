/*
 * Every capacity of the aot C runtime, in one place.
 *
 * Each value can be overridden on the compiler command line (-DAOT_MAX_FRAME=1024);
 * the checks at the end reject combinations the protocol cannot carry.  The host
 * learns the values actually built in from the INFO command, so it never has to
 * guess them.  RAM cost of the RPC server: about 2 * AOT_MAX_FRAME bytes plus a
 * few dozen bytes of state (see aot_rpc_server_t).
 */
#ifndef AOT_CONFIG_H
#define AOT_CONFIG_H

/* Largest frame body (header + payload + CRC) before byte stuffing, in bytes.
 * Bounds the receive buffer and the cached last reply.  Larger frames move bulk
 * data faster over a slow link; smaller ones lose less to one corrupted byte. */
#ifndef AOT_MAX_FRAME
#define AOT_MAX_FRAME 512
#endif

/* Most runs one RUN command may ask for (each returns a 64-bit timing). */
#ifndef AOT_MAX_RUNS
#define AOT_MAX_RUNS 32
#endif

/* Most dimensions a tensor descriptor may declare. */
#ifndef AOT_MAX_DIMS
#define AOT_MAX_DIMS 6
#endif

/* Most tensors and named kernels one model descriptor may declare. */
#ifndef AOT_MAX_TENSORS
#define AOT_MAX_TENSORS 256
#endif
#ifndef AOT_MAX_KERNELS
#define AOT_MAX_KERNELS 256
#endif

/* Strings (names, board tag, build id, target hash) are cut to this many bytes
 * on the wire. */
#ifndef AOT_MAX_NAME
#define AOT_MAX_NAME 63
#endif

/* Bytes of RAM reserved for code the host loads over the RPC (LOAD_CODE,
 * COMMIT_CODE; docs/runtime.md), or 0 for no loader at all, the default.  Only
 * tuning images set it: the loader runs whatever the host sends, so ordinary
 * firmware must not contain it.  Needs RAM the core can execute from (the
 * board record's memory.ram_code_bytes says so).  AOT_RPC_LOADER_DRY_RUN=1
 * keeps every check but never calls the loaded code (fuzzing on a host whose
 * data memory is not executable): the loaded kernel then returns 0. */
#ifndef AOT_RPC_LOADER_BYTES
#define AOT_RPC_LOADER_BYTES 0
#endif
#ifndef AOT_RPC_LOADER_DRY_RUN
#define AOT_RPC_LOADER_DRY_RUN 0
#endif

/* 1: the Cortex-M reset handler fills the free RAM from the end of .bss up to
 * the stack pointer with AOT_STACK_PAINT_WORD before it calls main(), so a
 * debugger (or a test under QEMU, tests/firmware/test_stack.py) can see how deep
 * the stack has grown: the lowest word that no longer holds the pattern.  0 (the
 * default): no painting. */
#ifndef AOT_STACK_PAINT
#define AOT_STACK_PAINT 0
#endif
#define AOT_STACK_PAINT_WORD 0xA5A5A5A5u

/* Fixed parts of a frame body; not configurable, listed here for the sums. */
#define AOT_FRAME_HEADER 8u
#define AOT_FRAME_CRC 4u
#define AOT_MAX_PAYLOAD (AOT_MAX_FRAME - AOT_FRAME_HEADER - AOT_FRAME_CRC)

/* Slots of each work queue core 0 hands further cores work through
 * (include/aot/cores.h; a power of two).  A full queue makes core 0 wait. */
#ifndef AOT_CORE_QUEUE_SLOTS
#define AOT_CORE_QUEUE_SLOTS 8
#endif

/* Compile-time checks (C99 has no _Static_assert). */
#define AOT_CHECK_CONFIG(name, cond) typedef char aot_config_check_##name[(cond) ? 1 : -1]
AOT_CHECK_CONFIG(frame_fits_u16, AOT_MAX_FRAME <= 65535);
AOT_CHECK_CONFIG(frame_holds_info, AOT_MAX_FRAME >= 64 + 4 * (AOT_MAX_NAME + 1));
AOT_CHECK_CONFIG(frame_holds_runs, AOT_MAX_PAYLOAD >= 8 + 8 * AOT_MAX_RUNS);
AOT_CHECK_CONFIG(frame_holds_tensor_info,
                 AOT_MAX_PAYLOAD >= 10 + 4 * AOT_MAX_DIMS + AOT_MAX_NAME);
AOT_CHECK_CONFIG(runs_positive, AOT_MAX_RUNS >= 1 && AOT_MAX_RUNS <= 65535);
AOT_CHECK_CONFIG(dims_fit_u8, AOT_MAX_DIMS >= 1 && AOT_MAX_DIMS <= 255);
AOT_CHECK_CONFIG(name_fits_u8, AOT_MAX_NAME >= 8 && AOT_MAX_NAME <= 255);
AOT_CHECK_CONFIG(loader_fits_u32, AOT_RPC_LOADER_BYTES >= 0 &&
                 AOT_RPC_LOADER_BYTES <= 0x7FFFFFFF && AOT_RPC_LOADER_BYTES % 4 == 0);
AOT_CHECK_CONFIG(tensors_fit_u16, AOT_MAX_TENSORS <= 65535 && AOT_MAX_KERNELS < 65535);
AOT_CHECK_CONFIG(core_queue_pow2, AOT_CORE_QUEUE_SLOTS >= 2 &&
                 (AOT_CORE_QUEUE_SLOTS & (AOT_CORE_QUEUE_SLOTS - 1)) == 0);
AOT_CHECK_CONFIG(stack_paint_flag, AOT_STACK_PAINT == 0 || AOT_STACK_PAINT == 1);

#endif /* AOT_CONFIG_H */
