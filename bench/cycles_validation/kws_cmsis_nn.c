/*
 * MLPerf Tiny's keyword-spotting DS-CNN (mlperf_kws_dscnn.tflite) as a plain
 * sequence of CMSIS-NN calls, the way TFLM with OPTIMIZED_KERNEL_DIR=cmsis_nn
 * runs it: conv 10x4/2 to 25x5x64, four depthwise 3x3 + pointwise 1x1 pairs,
 * average pool, fully connected 64 -> 12, softmax.  Weights and inputs are
 * pseudo-random (CMSIS-NN's int8 kernels take the same path whatever the
 * values); requantization constants are typical of the model.
 *
 * Bare metal for qemu/mps2-an386; bench/validate_cycles.py traces
 * inference() up to inference_done() and prices it with aot.cycles.
 * CMSIS-NN is used unmodified from ../shared/third_party/CMSIS-NN.
 */
#include <stdint.h>
#include <string.h>

#include "arm_nnfunctions.h"

#define H 25
#define W 5
#define C 64
#define CLASSES 12

static int8_t input[49 * 10];
static int8_t act_a[H * W * C];
static int8_t act_b[H * W * C];
static int8_t pooled[C];
static int8_t logits[CLASSES];
static int8_t probs[CLASSES];
static int8_t w_conv0[C * 10 * 4];
static int8_t w_dw[4][3 * 3 * C];
static int8_t w_pw[4][C * C];
static int8_t w_fc[CLASSES * C];
static int32_t bias[C];
static int32_t mult[C];
static int32_t shift[C];
static int16_t scratch[2048];

static uint32_t lcg = 12345u;

static void fill(int8_t *p, int n)
{
    for (int i = 0; i < n; ++i) {
        lcg = lcg * 1664525u + 1013904223u;
        p[i] = (int8_t)(lcg >> 24);
    }
}

static void setup(void)
{
    fill(input, sizeof input);
    fill(w_conv0, sizeof w_conv0);
    fill(&w_dw[0][0], sizeof w_dw);
    fill(&w_pw[0][0], sizeof w_pw);
    fill(w_fc, sizeof w_fc);
    for (int i = 0; i < C; ++i) {
        bias[i] = (i * 37) % 211 - 100;
        mult[i] = 1518500250 + i * 1000;
        shift[i] = -8;
    }
}

__attribute__((noinline)) void inference_done(void)
{
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void inference(void)
{
    cmsis_nn_context ctx = {scratch, sizeof scratch};
    cmsis_nn_per_channel_quant_params q = {mult, shift};
    cmsis_nn_conv_params conv0 = {.input_offset = 128, .output_offset = -128,
                                  .stride = {2, 2}, .padding = {1, 4}, .dilation = {1, 1},
                                  .activation = {-128, 127}};
    cmsis_nn_dims in0 = {1, 49, 10, 1}, f0 = {C, 10, 4, 1}, act = {1, H, W, C}, b = {1, 1, 1, C};
    arm_convolve_wrapper_s8(&ctx, &conv0, &q, &in0, input, &f0, w_conv0, &b, bias, &act, act_a);

    cmsis_nn_dw_conv_params dw = {.input_offset = 128, .output_offset = -128, .ch_mult = 1,
                                  .stride = {1, 1}, .padding = {1, 1}, .dilation = {1, 1},
                                  .activation = {-128, 127}};
    cmsis_nn_conv_params pw = {.input_offset = 128, .output_offset = -128, .stride = {1, 1},
                               .padding = {0, 0}, .dilation = {1, 1}, .activation = {-128, 127}};
    cmsis_nn_dims fdw = {1, 3, 3, C}, fpw = {C, 1, 1, C};
    for (int k = 0; k < 4; ++k) {
        arm_depthwise_conv_wrapper_s8(&ctx, &dw, &q, &act, act_a, &fdw, w_dw[k], &b, bias, &act,
                                      act_b);
        arm_convolve_wrapper_s8(&ctx, &pw, &q, &act, act_b, &fpw, w_pw[k], &b, bias, &act, act_a);
    }

    cmsis_nn_pool_params pool = {.stride = {1, 1}, .padding = {0, 0}, .activation = {-128, 127}};
    cmsis_nn_dims fpool = {1, H, W, 1}, out1 = {1, 1, 1, C};
    arm_avgpool_s8(&ctx, &pool, &act, act_a, &fpool, &out1, pooled);

    cmsis_nn_fc_params fc = {.input_offset = 128, .filter_offset = 0, .output_offset = 10,
                             .activation = {-128, 127}};
    cmsis_nn_per_tensor_quant_params fq = {1518500250, -7};
    cmsis_nn_dims fin = {1, 1, 1, C}, ffc = {C, 1, 1, CLASSES}, fb = {1, 1, 1, CLASSES},
                  fout = {1, 1, 1, CLASSES};
    arm_fully_connected_s8(&ctx, &fc, &fq, &fin, pooled, &ffc, w_fc, &fb, bias, &fout, logits);

    arm_softmax_s8(logits, 1, CLASSES, 1374639360, 23, -248, probs);
    inference_done();
}

/* Startup: .data copied from flash, .bss zeroed, FPU on, run, exit through semihosting. */
extern uint32_t __data_load, __data_start, __data_end, __bss_start, __bss_end;

static void semihosting_exit(int code)
{
    static volatile uint32_t block[2];
    block[0] = 0x20026u; /* ADP_Stopped_ApplicationExit */
    block[1] = (uint32_t)code;
    register uint32_t r0 __asm__("r0") = 0x20u; /* SYS_EXIT_EXTENDED */
    register volatile uint32_t *r1 __asm__("r1") = block;
    __asm__ volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
}

void reset(void)
{
    uint32_t *src = &__data_load, *dst = &__data_start;
    while (dst < &__data_end) {
        *dst++ = *src++;
    }
    for (dst = &__bss_start; dst < &__bss_end; ++dst) {
        *dst = 0;
    }
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20; /* CPACR: CP10, CP11 full access */
    __asm__ volatile("dsb\n\tisb");
    setup();
    inference();
    semihosting_exit(0);
}

__attribute__((section(".vectors"), used)) static const void *const vectors[2] = {
    (void *)0x20400000u, /* top of the 4 MiB RAM */
    (void *)reset,
};
