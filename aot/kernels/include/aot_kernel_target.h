/* What the core and the compiler give the kernel helpers: the DSP extension,
   Helium (MVE) and the attributes the helpers use.  Every other support
   header includes this one first, so each also compiles on its own. */
#ifndef AOT_KERNEL_TARGET_H
#define AOT_KERNEL_TARGET_H

#include <stdint.h>
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>
#define AOT_HAVE_DSP 1
#endif
/* AOT_NO_MVE (defined by a tuned kernel's file) keeps the DSP helpers on a
   core with Helium. */
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1) && !defined(AOT_NO_MVE)
#define AOT_HAVE_MVE 1 /* Helium: the dot products use aot_kernel_mve.h */
#endif

/* AOT_DSP_ASM: the DSP helpers' few single-instruction inline assembly
   statements are used.  The LLVM bitcode of these headers
   (aot/kernels/bitcode.py) defines AOT_LLVM_BITCODE: llvmlite cannot assemble
   inline assembly for a microcontroller, so those helpers take their C forms
   there, which LLVM selects to the same instructions. */
#if defined(AOT_HAVE_DSP) && !defined(AOT_LLVM_BITCODE)
#define AOT_DSP_ASM 1
#endif

#if defined(__GNUC__)
#define AOT_ALIGNED(n) __attribute__((aligned(n)))
#else
#define AOT_ALIGNED(n)
#endif

/* A kernel function that runs from RAM (docs/memory.md "Code in RAM"): its
   own input section (.aot_ram_text.<kernel>), which the port's linker script
   puts in RAM with its load address in flash, copied at start-up with .data.
   The helpers, always inlined, come along. */
#if defined(__GNUC__)
#define AOT_RAM_CODE(name) __attribute__((section(name)))
#else
#define AOT_RAM_CODE(name)
#endif

/* The helpers are always inlined: GCC then specializes their loops for the
   constant shapes of each call. */
#if defined(__GNUC__)
#define AOT_INLINE static inline __attribute__((always_inline))
#else
#define AOT_INLINE static inline
#endif

/* Full unrolling of the short tap loops (their trip counts are constants once
   the helpers are inlined); GCC -O2 does not unroll by itself. */
#if defined(__GNUC__) && !defined(__clang__)
#define AOT_UNROLL(n) _Pragma(n)
#else
#define AOT_UNROLL(n)
#endif

#endif /* AOT_KERNEL_TARGET_H */
