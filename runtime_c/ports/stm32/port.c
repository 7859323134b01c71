/*
 * Port for STM32 boards: clock setup, caches, the console USART or LPUART
 * (polled), and the timer the board record names.  The same code serves real
 * boards (the st/ boards) and QEMU's STM32F405 (qemu/netduinoplus2); they
 * differ only in the board facts the project passes as -D flags
 * (aot.firmware.project.board_defines):
 *
 *   AOT_BOARD_<TAG>            picks the chip's pins and RCC bits below
 *   AOT_CONSOLE_BASE, _BAUD    [console] base and baud
 *   AOT_CONSOLE_KIND_<KIND>    [console] kind: STM32_USART and STM32_LPUART
 *                              have the F7/L4 registers (ISR/RDR/TDR),
 *                              STM32F4_USART the F1/F2/F4 ones (SR/DR)
 *   AOT_CPU_HZ                 clock_hz, the core clock the PLL is set up for
 *   AOT_TIMER_KIND_<KIND>      [timer] kind: DWT_CYCCNT (../cortex-m/dwt.c) or
 *                              STM32_TIM2 (here: TIM2 counting at 1 GHz, which
 *                              QEMU derives from -icount: one tick per instruction)
 *
 * Boards (register values from the reference manuals):
 *   st/nucleo-f746zg  RM0385: USART3 on PD8/PD9 (AF7).  Clock: HSE 8 MHz
 *                     (ST-LINK MCO, bypass) / 4 * 216 / 2 = 216 MHz, over-drive,
 *                     7 wait states; APB1 = 54 MHz clocks USART3.  Caches: the
 *                     Cortex-M7 L1 I- and D-caches (AN4667; see l1_caches_on).
 *                     Also the default when no board is named (a plain
 *                     runtime.mk build).
 *   st/nucleo-l4r5zi  RM0432: LPUART1 on PG7/PG8 (AF8), port G powered from
 *                     VDDIO2 (PWR_CR2.IOSV).  Clock: HSI16 / 4 * 60 / 2 =
 *                     120 MHz in range 1 boost mode, 5 wait states, prefetch and
 *                     the flash I/D caches on; PCLK1 = 120 MHz clocks LPUART1.
 *   qemu/netduinoplus2 RM0090 (STM32F405): USART1 on PA9/PA10 (AF7), the USART
 *                     QEMU connects to its first serial port.  Clock: HSE 25 MHz
 *                     / 25 * 336 / 2 = 168 MHz, 5 wait states, ART (I/D caches,
 *                     prefetch); APB2 = 84 MHz clocks USART1.
 * A project for another STM32 board stops the build with #error.
 *
 * Clock setup never hangs: each wait for a ready flag (HSE, HSI, PLL, the
 * clock switch, the over-drive) gives up after AOT_CLOCK_WAIT polls, and the
 * core then stays on its reset clock.  QEMU does not model the RCC (its
 * registers read 0), so there the port always runs on the reset clock (HSI
 * 16 MHz).  aot_port_clock_hz() reports the clock the core really runs at,
 * aot_port_report() the wait states and caches read back from the hardware
 * and the core clock measured at boot against the LSE crystal (see
 * measure_clock), and the USART divisor is computed from the bus clock
 * actually selected.
 * Registers go through aot/mmio.h, so tests/runtime_c/test_port_registers.py
 * runs this set-up on the host against a recorded register space.
 */
#include <stdint.h>

#include "aot/mmio.h"
#include "aot/platform.h"
#include "../cortex-m/dwt.h"

#ifndef AOT_CONSOLE_BAUD
#define AOT_CONSOLE_BAUD 115200u
#endif
/* Polls of a ready flag before the clock setup gives up: about 0.1 s at the
 * 16 MHz reset clock, far above the HSE's and PLL's start-up times. */
#ifndef AOT_CLOCK_WAIT
#define AOT_CLOCK_WAIT 300000u
#endif

#if defined(AOT_BOARD_ST_NUCLEO_L4R5ZI)
/* STM32L4R5 (RM0432) */
#define AOT_USART_BASE 0x40008000u /* LPUART1 */
#define AOT_RESET_HZ 4000000u      /* MSI 4 MHz = PCLK1, the LPUART1 clock at reset */
#define AOT_GPIO_BASE 0x48001800u /* GPIOG */
#define AOT_GPIO_TX_PIN 7u
#define AOT_GPIO_RX_PIN 8u
#define AOT_GPIO_AF 8u
#define AOT_RCC_GPIO_EN_REG 0x4002104Cu /* RCC_AHB2ENR */
#define AOT_RCC_GPIO_EN_BIT 6u          /* GPIOGEN */
#define AOT_RCC_USART_EN_REG 0x4002105Cu /* RCC_APB1ENR2 */
#define AOT_RCC_USART_EN_BIT 0u          /* LPUART1EN */
#define AOT_RCC_PWR_EN_REG 0x40021058u   /* RCC_APB1ENR1 */
#define AOT_RCC_PWR_EN_BIT 28u           /* PWREN */
#define AOT_PWR_IOSV_REG 0x40007004u     /* PWR_CR2 */
#define AOT_PWR_IOSV_BIT 9u              /* IOSV: VDDIO2 (port G) valid */
#define AOT_LPUART_DEFAULT 1
/* 120 MHz (RM0432 6.2.2 HSI16, 6.2.5 PLL, 6.4.4 RCC_PLLCFGR): HSI16 / M 4 =
 * 4 MHz, * N 60 = VCO 240 MHz, / R 2.  HSI16 is factory-trimmed to 1 % over
 * temperature and supply; MSI without its PLL mode (MSIPLLEN, which needs
 * the LSE) drifts further, and the LPUART's baud with it.  Voltage range 1
 * boost mode, 5 flash wait states (RM0432 3.3.3); PCLK1 = 120 MHz clocks
 * LPUART1. */
#define AOT_STM32_L4 1
#define AOT_PLL_HZ 120000000u
#define AOT_PLL_M 4u
#define AOT_PLL_N 60u
#define AOT_FLASH_LATENCY 5u
#elif defined(AOT_BOARD_QEMU_NETDUINOPLUS2)
/* STM32F405 (RM0090) on the Netduino Plus 2 */
#define AOT_USART_BASE 0x40011000u /* USART1 */
#define AOT_RESET_HZ 16000000u     /* HSI */
#define AOT_GPIO_BASE 0x40020000u  /* GPIOA */
#define AOT_GPIO_TX_PIN 9u
#define AOT_GPIO_RX_PIN 10u
#define AOT_GPIO_AF 7u
#define AOT_RCC_GPIO_EN_REG 0x40023830u  /* RCC_AHB1ENR */
#define AOT_RCC_GPIO_EN_BIT 0u           /* GPIOAEN */
#define AOT_RCC_USART_EN_REG 0x40023844u /* RCC_APB2ENR */
#define AOT_RCC_USART_EN_BIT 4u          /* USART1EN */
#define AOT_F4_USART_DEFAULT 1
/* The PLL (RM0090 6.3.2): HSE 25 MHz crystal / M 25 = 1 MHz, * N 336 = VCO
 * 336 MHz, / P 2 = 168 MHz; Q 7 gives 48 MHz for USB. */
#define AOT_PLL_HZ 168000000u
#define AOT_PLL_HSE_BYPASS 0
#define AOT_PLL_M 25u
#define AOT_PLL_N 336u
#define AOT_PLL_P 2u
#define AOT_PLL_Q 7u
#define AOT_FLASH_LATENCY 5u  /* 150 < HCLK <= 168 MHz at 2.7-3.6 V */
#define AOT_PPRE1 5u          /* APB1 = HCLK / 4 = 42 MHz (at most 42) */
#define AOT_PPRE2 4u          /* APB2 = HCLK / 2 = 84 MHz (at most 84) */
#define AOT_USART_ON_APB2 1
#define AOT_OVERDRIVE 0
#define AOT_STM32_F4 1        /* ART: flash I/D caches and prefetch (RM0090 3.5.2) */
#elif defined(AOT_BOARD_ST_NUCLEO_F746ZG) || !defined(AOT_CONSOLE_BASE)
/* STM32F746 (RM0385) */
#define AOT_USART_BASE 0x40004800u /* USART3 */
#define AOT_RESET_HZ 16000000u     /* HSI */
#define AOT_GPIO_BASE 0x40020C00u  /* GPIOD */
#define AOT_GPIO_TX_PIN 8u
#define AOT_GPIO_RX_PIN 9u
#define AOT_GPIO_AF 7u
#define AOT_RCC_GPIO_EN_REG 0x40023830u /* RCC_AHB1ENR */
#define AOT_RCC_GPIO_EN_BIT 3u          /* GPIODEN */
#define AOT_RCC_USART_EN_REG 0x40023840u /* RCC_APB1ENR */
#define AOT_RCC_USART_EN_BIT 18u         /* USART3EN */
/* The PLL (RM0385 5.3.2): HSE 8 MHz from the ST-LINK's MCO (bypass) / M 4 =
 * 2 MHz, * N 216 = VCO 432 MHz, / P 2 = 216 MHz; Q 9 gives 48 MHz. */
#define AOT_PLL_HZ 216000000u
#define AOT_PLL_HSE_BYPASS 1
#define AOT_PLL_M 4u
#define AOT_PLL_N 216u
#define AOT_PLL_P 2u
#define AOT_PLL_Q 9u
#define AOT_FLASH_LATENCY 7u  /* 210 < HCLK <= 216 MHz at 2.7-3.6 V */
#define AOT_PPRE1 5u          /* APB1 = HCLK / 4 = 54 MHz (at most 54) */
#define AOT_PPRE2 4u          /* APB2 = HCLK / 2 = 108 MHz (at most 108) */
#define AOT_USART_ON_APB2 0
#define AOT_OVERDRIVE 1       /* above 180 MHz (RM0385 4.1.4) */
#define AOT_STM32_F7 1        /* Cortex-M7 L1 caches (AN4667) */
#else
#error "stm32 port: no pins and clocks for this board; add it to ports/stm32/port.c"
#endif

/* The console's registers, from the record's console kind (or the chip's). */
#if defined(AOT_CONSOLE_KIND_STM32F4_USART) || \
    (defined(AOT_F4_USART_DEFAULT) && !defined(AOT_CONSOLE_KIND_STM32_USART))
#define AOT_USART_F4 1
#define AOT_USART_IS_LPUART 0
#elif defined(AOT_CONSOLE_KIND_STM32_LPUART) || \
    (defined(AOT_LPUART_DEFAULT) && !defined(AOT_CONSOLE_KIND_STM32_USART))
#define AOT_USART_F4 0
#define AOT_USART_IS_LPUART 1
#else
#define AOT_USART_F4 0
#define AOT_USART_IS_LPUART 0
#endif

#if defined(AOT_CONSOLE_BASE) && AOT_CONSOLE_BASE != AOT_USART_BASE
#error "stm32 port: the board's console base differs from the UART this port sets up"
#endif
#if defined(AOT_CPU_HZ) && defined(AOT_PLL_HZ) && AOT_CPU_HZ != AOT_PLL_HZ
#error "stm32 port: the board's clock_hz differs from the PLL setting this port knows"
#endif

#if AOT_USART_F4
#define USART_SR (AOT_USART_BASE + 0x00u)
#define USART_DR (AOT_USART_BASE + 0x04u)
#define USART_BRR (AOT_USART_BASE + 0x08u)
#define USART_CR1 (AOT_USART_BASE + 0x0Cu)
#define USART_STATUS USART_SR
#define USART_RX USART_DR
#define USART_TX USART_DR
#define CR1_UE (1u << 13)
#else
#define USART_CR1 (AOT_USART_BASE + 0x00u)
#define USART_BRR (AOT_USART_BASE + 0x0Cu)
#define USART_ISR (AOT_USART_BASE + 0x1Cu)
#define USART_ICR (AOT_USART_BASE + 0x20u)
#define USART_STATUS USART_ISR
#define USART_RX (AOT_USART_BASE + 0x24u)
#define USART_TX (AOT_USART_BASE + 0x28u)
#define CR1_UE 1u
#endif
#define ST_ORE (1u << 3)
#define ST_RXNE (1u << 5)
#define ST_TXE (1u << 7)
#define CR1_RE (1u << 2)
#define CR1_TE (1u << 3)

#define GPIO_MODER (AOT_GPIO_BASE + 0x00u)
#define GPIO_AFRL (AOT_GPIO_BASE + 0x20u)
#define GPIO_AFRH (AOT_GPIO_BASE + 0x24u)

/* RCC and flash interface of the F4 and F7 (same layout). */
#define RCC_CR 0x40023800u
#define RCC_PLLCFGR 0x40023804u
#define RCC_CFGR 0x40023808u
#define RCC_APB1ENR 0x40023840u
#define FLASH_ACR 0x40023C00u
#define PWR_CR1 0x40007000u
#define PWR_CSR1 0x40007004u
#define CR_HSION (1u << 0)
#define CR_HSIRDY (1u << 1)
#define CR_HSEON (1u << 16)
#define CR_HSERDY (1u << 17)
#define CR_HSEBYP (1u << 18)
#define CR_PLLON (1u << 24)
#define CR_PLLRDY (1u << 25)
#define CFGR_SW_PLL 2u
#define CFGR_SWS_PLL (2u << 2)
#define CFGR_SW_MASK 3u
#define CFGR_SWS_MASK (3u << 2)
#define APB1ENR_PWREN (1u << 28)
#define PWR_ODEN (1u << 16)
#define PWR_ODSWEN (1u << 17)
#define PWR_ODRDY (1u << 16)
#define PWR_ODSWRDY (1u << 17)
/* PLLCFGR fields of the F4/F7 (RM0090 6.3.2, RM0385 5.3.2): PLLM 5:0, PLLN
 * 14:6, PLLP 17:16, PLLSRC 22, PLLQ 27:24.  Everything else is reserved and
 * keeps its reset value (0x24003010 has reserved bit 29 set). */
#define PLLCFGR_FIELDS 0x0F437FFFu
/* FLASH_ACR: LATENCY 3:0, PRFTEN 8; F4 and L4: ICEN 9, DCEN 10; F7: ARTEN 9. */
#define FLASH_ACR_LATENCY_MASK 0xFu
#define FLASH_ACR_PRFTEN (1u << 8)
#define FLASH_ACR_ICEN (1u << 9)
#define FLASH_ACR_ARTEN (1u << 9)
#define FLASH_ACR_DCEN (1u << 10)

static uint32_t core_hz = AOT_RESET_HZ;
static uint32_t usart_hz = AOT_RESET_HZ;

#if defined(AOT_STM32_L4)
#define L4_RCC_CR 0x40021000u
#define L4_RCC_CFGR 0x40021008u
#define L4_RCC_PLLCFGR 0x4002100Cu
#define L4_RCC_APB1ENR1 0x40021058u
#define L4_PWR_CR5 0x40007080u
#define L4_FLASH_ACR 0x40022000u
#define L4_CR_HSION (1u << 8)
#define L4_CR_HSIRDY (1u << 10)
#define L4_CFGR_HPRE_DIV2 (8u << 4)
#define L4_CFGR_HPRE_MASK (0xFu << 4)
#define L4_CFGR_SW_PLL 3u
#define L4_CFGR_SWS_PLL (3u << 2)
/* RCC_PLLCFGR (RM0432 6.4.4): PLLSRC 1:0 (2 = HSI16), PLLM 7:4 (M - 1),
 * PLLN 14:8, PLLREN 24, PLLR 26:25 (0 = / 2). */
#define L4_PLLCFGR_FIELDS 0x07007FF3u
#define L4_PLLCFGR_HSI16 2u
#define L4_PLLCFGR_PLLREN (1u << 24)
#define FLASH_ACR_ADDR L4_FLASH_ACR

/* HSI16 -> PLL -> SYSCLK at 120 MHz in boost mode (RM0432 5.1.8: the AHB
 * runs at half speed across the switch above 80 MHz), or nothing changed
 * where a step does not answer. */
static void clock_init(void)
{
    uint32_t n;
    aot_mmio_set(L4_RCC_APB1ENR1, 1u << 28); /* PWREN */
    (void)aot_mmio_read(L4_RCC_APB1ENR1);
    aot_mmio_set(L4_RCC_CR, L4_CR_HSION);
    if (!aot_mmio_wait(L4_RCC_CR, L4_CR_HSIRDY, L4_CR_HSIRDY, AOT_CLOCK_WAIT)) {
        return;
    }
    aot_mmio_modify(L4_RCC_PLLCFGR, L4_PLLCFGR_FIELDS,
                    L4_PLLCFGR_HSI16 | ((AOT_PLL_M - 1u) << 4) | (AOT_PLL_N << 8) |
                        L4_PLLCFGR_PLLREN); /* PLLR = 0: / 2 */
    aot_mmio_set(L4_RCC_CR, CR_PLLON);
    if (!aot_mmio_wait(L4_RCC_CR, CR_PLLRDY, CR_PLLRDY, AOT_CLOCK_WAIT)) {
        aot_mmio_clear(L4_RCC_CR, CR_PLLON);
        return;
    }
    aot_mmio_modify(L4_RCC_CFGR, L4_CFGR_HPRE_MASK, L4_CFGR_HPRE_DIV2);
    aot_mmio_clear(L4_PWR_CR5, 1u << 8); /* R1MODE = 0: range 1 boost */
    /* More wait states first (RM0432 3.3.3); they must read back before the
     * clock goes up. */
    aot_mmio_modify(L4_FLASH_ACR, FLASH_ACR_LATENCY_MASK | FLASH_ACR_PRFTEN | FLASH_ACR_ICEN |
                                      FLASH_ACR_DCEN,
                    AOT_FLASH_LATENCY | FLASH_ACR_PRFTEN | FLASH_ACR_ICEN | FLASH_ACR_DCEN);
    if ((aot_mmio_read(L4_FLASH_ACR) & FLASH_ACR_LATENCY_MASK) != AOT_FLASH_LATENCY) {
        aot_mmio_clear(L4_RCC_CFGR, L4_CFGR_HPRE_MASK);
        return;
    }
    aot_mmio_modify(L4_RCC_CFGR, CFGR_SW_MASK, L4_CFGR_SW_PLL);
    if (!aot_mmio_wait(L4_RCC_CFGR, CFGR_SWS_MASK, L4_CFGR_SWS_PLL, AOT_CLOCK_WAIT)) {
        aot_mmio_clear(L4_RCC_CFGR, CFGR_SW_MASK | L4_CFGR_HPRE_MASK); /* back to MSI */
        return;
    }
    for (n = 0; n < 64u; ++n) { /* at least 1 us at 60 MHz before AHB / 1 */
        __asm__ volatile("nop");
    }
    aot_mmio_clear(L4_RCC_CFGR, L4_CFGR_HPRE_MASK);
    core_hz = AOT_PLL_HZ;
    usart_hz = AOT_PLL_HZ; /* PPRE1 / 1 */
}
#elif defined(AOT_PLL_HZ)
#define FLASH_ACR_ADDR FLASH_ACR
#if defined(AOT_STM32_F4)
/* RM0090 3.5.2: the ART accelerator's caches and prefetch serve the flash
 * at 5 wait states. */
#define FLASH_ACR_SPEEDUP (FLASH_ACR_PRFTEN | FLASH_ACR_ICEN | FLASH_ACR_DCEN)
#else
/* RM0385 chapter 3 (ART accelerator), AN4667: ART and prefetch act on the
 * ITCM flash interface only; this image runs from the AXIM address, behind
 * the L1 caches. */
#define FLASH_ACR_SPEEDUP 0u
#endif

/* HSE -> PLL -> SYSCLK at AOT_PLL_HZ, or nothing changed where a step does
 * not answer (the core then stays on HSI). */
static void clock_init(void)
{
    aot_mmio_set(RCC_CR, AOT_PLL_HSE_BYPASS ? CR_HSEBYP : 0u); /* only while HSE is off */
    aot_mmio_set(RCC_CR, CR_HSEON);
    if (!aot_mmio_wait(RCC_CR, CR_HSERDY, CR_HSERDY, AOT_CLOCK_WAIT)) {
        aot_mmio_clear(RCC_CR, CR_HSEON | CR_HSEBYP);
        return;
    }
    /* Read-modify-write: the reserved bits keep their reset values. */
    aot_mmio_modify(RCC_PLLCFGR, PLLCFGR_FIELDS,
                    AOT_PLL_M | (AOT_PLL_N << 6) | ((AOT_PLL_P / 2u - 1u) << 16) | (1u << 22) |
                        (AOT_PLL_Q << 24)); /* PLLSRC = HSE */
    aot_mmio_set(RCC_CR, CR_PLLON);
    if (!aot_mmio_wait(RCC_CR, CR_PLLRDY, CR_PLLRDY, AOT_CLOCK_WAIT)) {
        aot_mmio_clear(RCC_CR, CR_PLLON | CR_HSEON | CR_HSEBYP);
        return;
    }
#if AOT_OVERDRIVE
    aot_mmio_set(RCC_APB1ENR, APB1ENR_PWREN);
    (void)aot_mmio_read(RCC_APB1ENR);
    aot_mmio_set(PWR_CR1, PWR_ODEN);
    if (!aot_mmio_wait(PWR_CSR1, PWR_ODRDY, PWR_ODRDY, AOT_CLOCK_WAIT)) {
        return;
    }
    aot_mmio_set(PWR_CR1, PWR_ODSWEN);
    if (!aot_mmio_wait(PWR_CSR1, PWR_ODSWRDY, PWR_ODSWRDY, AOT_CLOCK_WAIT)) {
        return;
    }
#endif
    /* More wait states first (RM0090 3.5.1; RM0385 chapter 3, flash read
     * access latency); they must read back before the clock goes up. */
    aot_mmio_modify(FLASH_ACR, FLASH_ACR_LATENCY_MASK | FLASH_ACR_SPEEDUP,
                    AOT_FLASH_LATENCY | FLASH_ACR_SPEEDUP);
    if ((aot_mmio_read(FLASH_ACR) & FLASH_ACR_LATENCY_MASK) != AOT_FLASH_LATENCY) {
        return;
    }
    aot_mmio_modify(RCC_CFGR, CFGR_SW_MASK | (0xFu << 4) | (0x3Fu << 10),
                    (AOT_PPRE1 << 10) | (AOT_PPRE2 << 13) | CFGR_SW_PLL);
    if (!aot_mmio_wait(RCC_CFGR, CFGR_SWS_MASK, CFGR_SWS_PLL, AOT_CLOCK_WAIT)) {
        aot_mmio_clear(RCC_CFGR, CFGR_SW_MASK); /* back to HSI */
        return;
    }
    core_hz = AOT_PLL_HZ;
    usart_hz = AOT_PLL_HZ / (AOT_USART_ON_APB2 ? 2u : 4u); /* PPRE2 /2, PPRE1 /4 */
}
#endif

#if defined(AOT_STM32_F7)
/* System control block of the Cortex-M7 (Armv7-M ARM B3.2; cache
 * maintenance B2.2.7). */
#define SCB_CCR 0xE000ED14u
#define SCB_CCSIDR 0xE000ED80u
#define SCB_CSSELR 0xE000ED84u
#define SCB_ICIALLU 0xE000EF50u
#define SCB_DCISW 0xE000EF60u
#define CCR_DC (1u << 16)
#define CCR_IC (1u << 17)

/* AN4667 (STM32F7 system architecture and performance) section 3: code and
 * constants are linked at the flash's AXIM address 0x08000000, where they
 * reach the core through the AXI bus and the L1 caches; ART and prefetch
 * only serve the ITCM address (0x00200000).  Running from ITCM + ART would
 * also be full speed, but needs another link address for the whole image
 * and the RAM loader; with AXIM + L1 the D-cache also holds the weights and
 * SRAM1/SRAM2 data.  Both caches power up with undefined contents and must
 * be invalidated before they are enabled (PM0253 4.8.3 and the Cortex-M7
 * TRM's cache initialisation sequence): I-cache by ICIALLU, D-cache set by
 * set and way by DCISW, each followed by DSB and ISB.  Nothing else masters
 * the bus here (the UART is polled, no DMA), so write-back data is safe;
 * the RAM loader cleans and invalidates around code it writes. */
static void l1_caches_on(void)
{
    uint32_t ccsidr, sets, ways, line_shift, way_shift, set, way, n;
    aot_mmio_sync();
    aot_mmio_write(SCB_ICIALLU, 0);
    aot_mmio_sync();
    aot_mmio_set(SCB_CCR, CCR_IC);
    aot_mmio_sync();

    aot_mmio_write(SCB_CSSELR, 0); /* level 1, data cache */
    aot_mmio_sync();
    ccsidr = aot_mmio_read(SCB_CCSIDR);
    sets = ((ccsidr >> 13) & 0x7FFFu) + 1u;
    ways = ((ccsidr >> 3) & 0x3FFu) + 1u;
    line_shift = (ccsidr & 7u) + 4u; /* log2(bytes per line) */
    way_shift = 32u;                  /* the way index sits in the top bits */
    for (n = ways - 1u; n != 0u; n >>= 1) {
        --way_shift;
    }
    for (set = 0; set < sets; ++set) {
        for (way = 0; way < ways; ++way) {
            aot_mmio_write(SCB_DCISW,
                           (way_shift < 32u ? way << way_shift : 0u) | (set << line_shift));
        }
    }
    aot_mmio_sync();
    aot_mmio_set(SCB_CCR, CCR_DC);
    aot_mmio_sync();
}
#endif

/*
 * The measured clock (the device report's measured_clock_hz): core cycles
 * (DWT CYCCNT) over MEASURE_PERIODS periods of the 32.768 kHz LSE crystal,
 * which runs from nothing the core clock runs from.  Every timer of these
 * chips is clocked from the core's clock tree, but one timer input can be
 * switched inside the chip to the LSE, for calibration: its input capture
 * then flags every 8th LSE edge (input prescaler / 8), and the port reads
 * CYCCNT at two flags 41 captures apart (328 periods, 10.0 ms).  Polling the
 * flag costs the same few cycles at both ends, well below 1e-5 of the count.
 *
 *   F405 (RM0090), F746 (RM0385): TIM5 channel 4, TIM5_OR (offset 0x50)
 *     TI4_RMP bits 7:6 = 10 (LSE); the "TIM5 option register (TIM5_OR)"
 *     of the TIM2 to TIM5 chapter of both manuals.  TIM5EN is RCC_APB1ENR
 *     bit 3.
 *   L4R5 (RM0432): TIM16 channel 1, TIM16_OR1 (offset 0x50) TI1_RMP bits
 *     2:0 = 010 (LSE; 3 bits on the L4+, 000 GPIO, 001 LSI, 011 RTC wakeup,
 *     1xx MSI, HSE / 32, MCO); the "TIM16 option register 1 (TIM16_OR1)" of
 *     the TIM15/TIM16/TIM17 chapter.  TIM16EN is RCC_APB2ENR bit 17.
 * The manuals' register pages name these fields; their positions and the
 * LSE values were cross-checked against ST's HAL/CMSIS headers for the F4,
 * F7 and L4 (TIM_TIM5_LSE = TI4_RMP_1 = 0x80; TIM_TIM16_TI1_LSE =
 * TI1_RMP_1 = 0x2, with TI1_RMP_2 present on the L4+) and the SVD register
 * maps of the STM32F405, F7x6 and L4R5, which all agree.
 *
 * The LSE lives in the backup domain (RM0090 "Battery backup domain",
 * RM0385/RM0432 "Backup domain"): RCC_BDCR is write-protected until PWR's
 * DBP (bit 8 of PWR_CR, PWR_CR1 on the F7 and L4) is set, with the PWR
 * clock on (PWREN, RCC_APB1ENR(1) bit 28).  RCC_BDCR (F4/F7 offset 0x70, L4
 * offset 0x90): LSEON bit 0, LSERDY bit 1, LSEBYP bit 2.  The backup domain
 * keeps its state over a reset, so an LSE another program (or an earlier
 * boot of this one) started is used as it is, bypass or not; the port
 * starts it only when LSEON is clear, with the reset drive (LSEDRV low),
 * and leaves it running once it worked (the next boot measures at once).
 *
 * Nothing here can hang the boot: DBP must read back set, within
 * AOT_DBP_WAIT polls (it takes effect with the write; ST's HAL allows 2 ms).
 * It reads 0 under QEMU, which models neither PWR nor RCC, so the emulated
 * board reports "not measured" after those polls, before any LSE wait;
 * LSERDY is awaited for at most AOT_LSE_WAIT_MS (the datasheets give a
 * typical LSE start-up of 2 s; a board without the crystal pays this at
 * every boot, and the LSEON the port set is cleared again); each capture
 * for at most AOT_CAPTURE_WAIT_MS (LSERDY can read 1 on floating OSC32
 * pins while nothing oscillates).  A capture missed (CCxOF) gives "not
 * measured", not a wrong number.  The waits are timed with CYCCNT at the
 * clock the port set up, with a poll count as a backstop should CYCCNT not
 * count.
 */
#ifndef AOT_LSE_WAIT_MS
#define AOT_LSE_WAIT_MS 2500u
#endif
#ifndef AOT_DBP_WAIT
#define AOT_DBP_WAIT 10000u /* polls: 0.2 ms at 216 MHz, 2.5 ms at 4 MHz */
#endif
#ifndef AOT_CAPTURE_WAIT_MS
#define AOT_CAPTURE_WAIT_MS 2u /* a capture comes every 0.24 ms */
#endif
#if AOT_LSE_WAIT_MS > 15000u
#error "stm32 port: AOT_LSE_WAIT_MS must keep (core_hz / 1000) * ms within 32 bits of CYCCNT"
#endif
#define LSE_HZ 32768u
#define MEASURE_PSC 8u        /* input prescaler: ICxPSC = 11 */
#define MEASURE_CAPTURES 41u  /* 41 * 8 = 328 LSE periods, 10.0 ms */
#define MEASURE_PERIODS (MEASURE_CAPTURES * MEASURE_PSC)
#define DWT_CYCCNT 0xE0001004u /* Armv7-M ARM C1.8; started by aot_dwt_start() */

#if defined(AOT_STM32_L4)
#define MEASURE_PWR_EN_REG L4_RCC_APB1ENR1
#define MEASURE_BDCR 0x40021090u      /* RCC_BDCR */
#define MEASURE_TIM 0x40014400u       /* TIM16 */
#define MEASURE_CH 1u
#define MEASURE_TIM_EN_REG 0x40021060u /* RCC_APB2ENR */
#define MEASURE_TIM_EN_BIT 17u         /* TIM16EN */
#define MEASURE_OR_MASK 0x7u           /* TIM16_OR1 TI1_RMP[2:0] */
#define MEASURE_OR_LSE 0x2u
#define MEASURE_ARR 0xFFFFu            /* 16-bit counter */
#else
#define MEASURE_PWR_EN_REG RCC_APB1ENR
#define MEASURE_BDCR 0x40023870u      /* RCC_BDCR */
#define MEASURE_TIM 0x40000C00u       /* TIM5 */
#define MEASURE_CH 4u
#define MEASURE_TIM_EN_REG RCC_APB1ENR
#define MEASURE_TIM_EN_BIT 3u          /* TIM5EN */
#define MEASURE_OR_MASK (3u << 6)      /* TIM5_OR TI4_RMP[1:0] */
#define MEASURE_OR_LSE (2u << 6)
#define MEASURE_ARR 0xFFFFFFFFu        /* 32-bit counter */
#endif
#define PWR_DBP_REG 0x40007000u /* PWR_CR (F4), PWR_CR1 (F7, L4) */
#define PWR_DBP (1u << 8)
#define BDCR_LSEON (1u << 0)
#define BDCR_LSERDY (1u << 1)

/* The general-purpose timer registers (same offsets on TIM5 and TIM16). */
#define TIM_CR1 (MEASURE_TIM + 0x00u)
#define TIM_SR (MEASURE_TIM + 0x10u)
#define TIM_EGR (MEASURE_TIM + 0x14u)
#define TIM_CCMR (MEASURE_TIM + 0x18u + 4u * ((MEASURE_CH - 1u) / 2u))
#define TIM_CCER (MEASURE_TIM + 0x20u)
#define TIM_PSC (MEASURE_TIM + 0x28u)
#define TIM_ARR (MEASURE_TIM + 0x2Cu)
#define TIM_OR (MEASURE_TIM + 0x50u)
#define CCMR_SHIFT (8u * ((MEASURE_CH - 1u) % 2u))
/* CCxS = 01 (input, ICx on TIx), ICxPSC = 11 (every 8th edge), no filter */
#define CCMR_CAPTURE_8 ((1u | (3u << 2)) << CCMR_SHIFT)
#define CCER_SHIFT (4u * (MEASURE_CH - 1u))
#define CCER_CCE (1u << CCER_SHIFT) /* CCxP = CCxNP = 0: rising edges */
#define SR_CCIF (1u << MEASURE_CH)
#define SR_CCOF (1u << (MEASURE_CH + 8u))

static uint32_t measured_hz;

/* Poll until (addr & mask) == value, for at most `ms` milliseconds of CYCCNT
 * at core_hz (and at most one poll per cycle of that time, should CYCCNT
 * not count).  1: got there. */
static int wait_ms(uint32_t addr, uint32_t mask, uint32_t value, uint32_t ms)
{
    uint32_t limit = (core_hz / 1000u) * ms;
    uint32_t start = aot_mmio_read(DWT_CYCCNT);
    uint32_t round;
    for (round = 0; round <= limit / 1000u; ++round) {
        if (aot_mmio_wait(addr, mask, value, 1000u)) {
            return 1;
        }
        if (aot_mmio_read(DWT_CYCCNT) - start >= limit) {
            return 0;
        }
    }
    return 0;
}

static uint32_t count_lse_periods(void)
{
    uint32_t n, c0, c1;
    aot_mmio_set(MEASURE_TIM_EN_REG, 1u << MEASURE_TIM_EN_BIT);
    (void)aot_mmio_read(MEASURE_TIM_EN_REG);
    aot_mmio_write(TIM_CR1, 0);
    aot_mmio_write(TIM_PSC, 0);
    aot_mmio_write(TIM_ARR, MEASURE_ARR);
    aot_mmio_write(TIM_EGR, 1u); /* UG */
    aot_mmio_modify(TIM_OR, MEASURE_OR_MASK, MEASURE_OR_LSE);
    aot_mmio_modify(TIM_CCMR, 0xFFu << CCMR_SHIFT, CCMR_CAPTURE_8);
    aot_mmio_modify(TIM_CCER, 0xFu << CCER_SHIFT, CCER_CCE);
    aot_mmio_write(TIM_SR, 0);
    aot_mmio_write(TIM_CR1, 1u); /* CEN */
    /* Start on a capture, then count cycles to the 41st after it. */
    if (!wait_ms(TIM_SR, SR_CCIF, SR_CCIF, AOT_CAPTURE_WAIT_MS)) {
        return 0;
    }
    c0 = aot_mmio_read(DWT_CYCCNT);
    c1 = c0;
    aot_mmio_write(TIM_SR, ~(SR_CCIF | SR_CCOF)); /* rc_w0: clears these two only */
    for (n = 0; n < MEASURE_CAPTURES; ++n) {
        if (!wait_ms(TIM_SR, SR_CCIF, SR_CCIF, AOT_CAPTURE_WAIT_MS)) {
            return 0;
        }
        c1 = aot_mmio_read(DWT_CYCCNT);
        if ((aot_mmio_read(TIM_SR) & SR_CCOF) != 0) {
            return 0; /* a capture was missed: the count would be short */
        }
        aot_mmio_write(TIM_SR, ~SR_CCIF);
    }
    return (uint32_t)(((uint64_t)(c1 - c0) * LSE_HZ + MEASURE_PERIODS / 2u) / MEASURE_PERIODS);
}

static uint32_t measure_clock(void)
{
    uint32_t hz, started = 0;
    aot_mmio_set(MEASURE_PWR_EN_REG, 1u << 28); /* PWREN */
    (void)aot_mmio_read(MEASURE_PWR_EN_REG);
    aot_mmio_set(PWR_DBP_REG, PWR_DBP);
    if (!aot_mmio_wait(PWR_DBP_REG, PWR_DBP, PWR_DBP, AOT_DBP_WAIT)) {
        return 0; /* no backup domain access (QEMU): not measured */
    }
#if defined(AOT_TIMER_KIND_STM32_TIM2)
    aot_dwt_start(); /* the port times with TIM2; CYCCNT still counts the cycles here */
#endif
    if ((aot_mmio_read(MEASURE_BDCR) & BDCR_LSEON) == 0) {
        aot_mmio_set(MEASURE_BDCR, BDCR_LSEON);
        started = 1;
    }
    if (!wait_ms(MEASURE_BDCR, BDCR_LSERDY, BDCR_LSERDY, AOT_LSE_WAIT_MS)) {
        if (started) {
            aot_mmio_clear(MEASURE_BDCR, BDCR_LSEON); /* no crystal: leave it off */
        }
        aot_mmio_clear(PWR_DBP_REG, PWR_DBP);
        return 0;
    }
    aot_mmio_clear(PWR_DBP_REG, PWR_DBP);
    hz = count_lse_periods();
    /* The timer back to its reset state and unclocked: it is the user's. */
    aot_mmio_write(TIM_CR1, 0);
    aot_mmio_write(TIM_CCER, 0);
    aot_mmio_write(TIM_CCMR, 0);
    aot_mmio_write(TIM_OR, 0);
    aot_mmio_write(TIM_SR, 0);
    aot_mmio_clear(MEASURE_TIM_EN_REG, 1u << MEASURE_TIM_EN_BIT);
    return hz;
}

void aot_port_report(aot_device_report_t *report)
{
#if defined(FLASH_ACR_ADDR)
    uint32_t acr = aot_mmio_read(FLASH_ACR_ADDR);
    uint16_t caches = 0;
#if defined(AOT_STM32_F7)
    uint32_t ccr = aot_mmio_read(SCB_CCR);
    caches |= (ccr & CCR_IC) != 0 ? AOT_CACHE_L1_ICACHE : 0u;
    caches |= (ccr & CCR_DC) != 0 ? AOT_CACHE_L1_DCACHE : 0u;
    caches |= (acr & FLASH_ACR_ARTEN) != 0 ? AOT_CACHE_ART : 0u;
#else
    caches |= (acr & FLASH_ACR_ICEN) != 0 ? AOT_CACHE_FLASH_ICACHE : 0u;
    caches |= (acr & FLASH_ACR_DCEN) != 0 ? AOT_CACHE_FLASH_DCACHE : 0u;
#endif
    caches |= (acr & FLASH_ACR_PRFTEN) != 0 ? AOT_CACHE_FLASH_PREFETCH : 0u;
    report->flash_wait_states = (uint8_t)(acr & FLASH_ACR_LATENCY_MASK);
    report->caches = caches;
#else
    report->flash_wait_states = AOT_NO_WAIT_STATES;
    report->caches = 0;
#endif
    report->measured_clock_hz = measured_hz;
}

static void pin_af(uint32_t pin)
{
    uint32_t afr = pin < 8u ? GPIO_AFRL : GPIO_AFRH;
    uint32_t shift = (pin & 7u) * 4u;
    aot_mmio_modify(GPIO_MODER, 3u << (pin * 2u), 2u << (pin * 2u));
    aot_mmio_modify(afr, 0xFu << shift, AOT_GPIO_AF << shift);
}

#if defined(AOT_TIMER_KIND_STM32_TIM2)
/* TIM2, 32 bits, counting from PSC = 0: under QEMU's STM32 timer model one
 * tick per nanosecond of virtual time, i.e. one per instruction with
 * -icount shift=0.  The 32-bit difference is exact for 4.29 G instructions. */
#define RCC_TIM2_EN_REG 0x40023840u /* RCC_APB1ENR */
#define TIM2_CR1 0x40000000u
#define TIM2_EGR 0x40000014u
#define TIM2_CNT 0x40000024u
#define TIM2_PSC 0x40000028u
#define TIM2_ARR 0x4000002Cu

#include "../cortex-m/semihost.h"

static uint32_t timer_origin;

static void timer_init(void)
{
    aot_mmio_set(RCC_TIM2_EN_REG, 1u); /* TIM2EN */
    (void)aot_mmio_read(RCC_TIM2_EN_REG);
    aot_mmio_write(TIM2_PSC, 0);
    aot_mmio_write(TIM2_ARR, 0xFFFFFFFFu);
    aot_mmio_write(TIM2_EGR, 1u); /* UG: load the prescaler */
    aot_mmio_write(TIM2_CR1, 1u); /* CEN */
}

void aot_systick_handler(void);

void aot_systick_handler(void)
{
}

void aot_port_timer_start(void)
{
    timer_origin = aot_mmio_read(TIM2_CNT);
}

uint64_t aot_port_timer_stop(void)
{
    return (uint32_t)(aot_mmio_read(TIM2_CNT) - timer_origin);
}

uint8_t aot_port_timer_unit(void)
{
    return AOT_TIMER_INSTRUCTIONS;
}

uint32_t aot_port_entropy(void)
{
    return aot_mmio_read(TIM2_CNT);
}

void aot_port_exit(int code)
{
    aot_semihost_exit(code);  /* the QEMU process ends with `code` */
}
#else
static void timer_init(void)
{
    aot_dwt_start();
}
#endif

uint32_t aot_port_clock_hz(void)
{
    return core_hz;
}

void aot_port_init(void)
{
#if defined(AOT_STM32_F7)
    l1_caches_on();
#endif
    clock_init();
#ifdef AOT_PWR_IOSV_REG
    aot_mmio_set(AOT_RCC_PWR_EN_REG, 1u << AOT_RCC_PWR_EN_BIT);
    (void)aot_mmio_read(AOT_RCC_PWR_EN_REG);
    aot_mmio_set(AOT_PWR_IOSV_REG, 1u << AOT_PWR_IOSV_BIT);
#endif
    aot_mmio_set(AOT_RCC_GPIO_EN_REG, 1u << AOT_RCC_GPIO_EN_BIT);
    aot_mmio_set(AOT_RCC_USART_EN_REG, 1u << AOT_RCC_USART_EN_BIT);
    (void)aot_mmio_read(AOT_RCC_USART_EN_REG); /* let the clock enable take effect */
    pin_af(AOT_GPIO_TX_PIN);
    pin_af(AOT_GPIO_RX_PIN);
#if AOT_USART_IS_LPUART
    /* LPUART: BRR = 256 * clock / baud, at least 0x300 (RM0432 LPUART baud rate). */
    aot_mmio_write(USART_BRR,
                   (uint32_t)((256ull * usart_hz + AOT_CONSOLE_BAUD / 2u) / AOT_CONSOLE_BAUD));
#else
    /* USART, oversampling by 16: BRR = clock / baud. */
    aot_mmio_write(USART_BRR, (usart_hz + AOT_CONSOLE_BAUD / 2u) / AOT_CONSOLE_BAUD);
#endif
    aot_mmio_write(USART_CR1, CR1_UE | CR1_RE | CR1_TE);

    timer_init();
    measured_hz = measure_clock(); /* once, at boot: INFO answers at once */
}

int aot_port_read_byte(void)
{
    for (;;) {
        uint32_t status = aot_mmio_read(USART_STATUS);
        if ((status & ST_ORE) != 0) {
            /* A lost byte only costs a frame: the host retries.  F4: reading
             * SR then DR clears ORE; F7/L4: ICR. */
#if AOT_USART_F4
            if ((status & ST_RXNE) == 0) {
                (void)aot_mmio_read(USART_RX);
            }
#else
            aot_mmio_write(USART_ICR, ST_ORE);
#endif
        }
        if ((status & ST_RXNE) != 0) {
            return (int)(aot_mmio_read(USART_RX) & 0xFFu);
        }
    }
}

void aot_port_write(const uint8_t *data, size_t len)
{
    size_t i;
    for (i = 0; i < len; ++i) {
        while ((aot_mmio_read(USART_STATUS) & ST_TXE) == 0) {
        }
        aot_mmio_write(USART_TX, data[i]);
    }
}
