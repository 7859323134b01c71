/*
 * Port for STM32 boards: clock setup, the console USART or LPUART (polled),
 * and the timer the board record names.  The same code serves real boards
 * (the st/ boards) and QEMU's STM32F405 (qemu/netduinoplus2); they differ only in the
 * board facts the project passes as -D flags (aot.firmware.project.board_defines):
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
 *                     7 wait states; APB1 = 54 MHz clocks USART3.  Also the
 *                     default when no board is named (a plain runtime.mk build).
 *   st/nucleo-l4r5zi  RM0432: LPUART1 on PG7/PG8 (AF8), port G powered from
 *                     VDDIO2 (PWR_CR2.IOSV).  Clock: MSI 4 MHz * 60 / 2 =
 *                     120 MHz in range 1 boost mode, 5 wait states; PCLK1 =
 *                     120 MHz clocks LPUART1.
 *   qemu/netduinoplus2 RM0090 (STM32F405): USART1 on PA9/PA10 (AF7), the USART
 *                     QEMU connects to its first serial port.  Clock: HSE 25 MHz
 *                     / 25 * 336 / 2 = 168 MHz, 5 wait states; APB2 = 84 MHz
 *                     clocks USART1.
 * A project for another STM32 board stops the build with #error.
 *
 * Clock setup never hangs: each wait for a ready flag (HSE, PLL, the clock
 * switch, the over-drive) gives up after AOT_CLOCK_WAIT polls, and the core
 * then stays on its reset clock.  QEMU does not model the RCC (its registers
 * read 0), so there the port always runs on the reset clock (HSI 16 MHz).
 * aot_port_clock_hz() reports the clock the core really runs at, and the
 * USART divisor is computed from the bus clock actually selected.
 */
#include <stdint.h>

#include "aot/platform.h"

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
/* 120 MHz (RM0432 6.2.5): MSI 4 MHz / M 1 * N 60 = VCO 240 MHz, / R 2;
 * voltage range 1 boost mode, 5 flash wait states; PCLK1 = 120 MHz clocks
 * LPUART1. */
#define AOT_STM32_L4 1
#define AOT_PLL_HZ 120000000u
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

#define REG(addr) (*(volatile uint32_t *)(addr))
#if AOT_USART_F4
#define USART_SR REG(AOT_USART_BASE + 0x00u)
#define USART_DR REG(AOT_USART_BASE + 0x04u)
#define USART_BRR REG(AOT_USART_BASE + 0x08u)
#define USART_CR1 REG(AOT_USART_BASE + 0x0Cu)
#define USART_STATUS USART_SR
#define USART_RX USART_DR
#define USART_TX USART_DR
#define CR1_UE (1u << 13)
#else
#define USART_CR1 REG(AOT_USART_BASE + 0x00u)
#define USART_BRR REG(AOT_USART_BASE + 0x0Cu)
#define USART_ISR REG(AOT_USART_BASE + 0x1Cu)
#define USART_ICR REG(AOT_USART_BASE + 0x20u)
#define USART_STATUS USART_ISR
#define USART_RX REG(AOT_USART_BASE + 0x24u)
#define USART_TX REG(AOT_USART_BASE + 0x28u)
#define CR1_UE 1u
#endif
#define ST_ORE (1u << 3)
#define ST_RXNE (1u << 5)
#define ST_TXE (1u << 7)
#define CR1_RE (1u << 2)
#define CR1_TE (1u << 3)

#define GPIO_MODER REG(AOT_GPIO_BASE + 0x00u)
#define GPIO_AFRL REG(AOT_GPIO_BASE + 0x20u)
#define GPIO_AFRH REG(AOT_GPIO_BASE + 0x24u)

/* RCC and flash interface of the F4 and F7 (same layout). */
#define RCC_CR REG(0x40023800u)
#define RCC_PLLCFGR REG(0x40023804u)
#define RCC_CFGR REG(0x40023808u)
#define RCC_APB1ENR REG(0x40023840u)
#define FLASH_ACR REG(0x40023C00u)
#define PWR_CR1 REG(0x40007000u)
#define PWR_CSR1 REG(0x40007004u)
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
#define FLASH_ACR_LATENCY_MASK 0xFu

static uint32_t core_hz = AOT_RESET_HZ;
static uint32_t usart_hz = AOT_RESET_HZ;

static int wait_for(volatile uint32_t *reg, uint32_t mask, uint32_t value)
{
    uint32_t n;
    for (n = 0; n < AOT_CLOCK_WAIT; ++n) {
        if ((*reg & mask) == value) {
            return 1;
        }
    }
    return 0;
}

#if defined(AOT_STM32_L4)
#define L4_RCC_CR REG(0x40021000u)
#define L4_RCC_CFGR REG(0x40021008u)
#define L4_RCC_PLLCFGR REG(0x4002100Cu)
#define L4_RCC_APB1ENR1 REG(0x40021058u)
#define L4_PWR_CR5 REG(0x40007080u)
#define L4_FLASH_ACR REG(0x40022000u)
#define L4_CFGR_HPRE_DIV2 (8u << 4)
#define L4_CFGR_HPRE_MASK (0xFu << 4)
#define L4_CFGR_SW_PLL 3u
#define L4_CFGR_SWS_PLL (3u << 2)

/* MSI -> PLL -> SYSCLK at 120 MHz in boost mode (RM0432 5.1.8: the AHB
 * runs at half speed across the switch), or nothing changed where a step
 * does not answer. */
static void clock_init(void)
{
    uint32_t n;
    L4_RCC_APB1ENR1 |= 1u << 28; /* PWREN */
    (void)L4_RCC_APB1ENR1;
    L4_RCC_PLLCFGR = 1u | (AOT_PLL_N << 8) | (1u << 24); /* MSI, M = 1, R = 2, PLLREN */
    L4_RCC_CR |= CR_PLLON;
    if (!wait_for(&L4_RCC_CR, CR_PLLRDY, CR_PLLRDY)) {
        L4_RCC_CR &= ~CR_PLLON;
        return;
    }
    L4_RCC_CFGR = (L4_RCC_CFGR & ~L4_CFGR_HPRE_MASK) | L4_CFGR_HPRE_DIV2;
    L4_PWR_CR5 &= ~(1u << 8); /* R1MODE = 0: range 1 boost */
    L4_FLASH_ACR = (L4_FLASH_ACR & ~FLASH_ACR_LATENCY_MASK) | AOT_FLASH_LATENCY;
    if ((L4_FLASH_ACR & FLASH_ACR_LATENCY_MASK) != AOT_FLASH_LATENCY) {
        L4_RCC_CFGR &= ~L4_CFGR_HPRE_MASK;
        return;
    }
    L4_RCC_CFGR = (L4_RCC_CFGR & ~CFGR_SW_MASK) | L4_CFGR_SW_PLL;
    if (!wait_for(&L4_RCC_CFGR, CFGR_SWS_MASK, L4_CFGR_SWS_PLL)) {
        L4_RCC_CFGR &= ~(CFGR_SW_MASK | L4_CFGR_HPRE_MASK); /* back to MSI, AHB / 1 */
        return;
    }
    for (n = 0; n < 64u; ++n) { /* at least 1 us at 60 MHz before AHB / 1 */
        __asm__ volatile("nop");
    }
    L4_RCC_CFGR &= ~L4_CFGR_HPRE_MASK;
    core_hz = AOT_PLL_HZ;
    usart_hz = AOT_PLL_HZ; /* PPRE1 / 1 */
}
#elif defined(AOT_PLL_HZ)
/* HSE -> PLL -> SYSCLK at AOT_PLL_HZ, or nothing changed where a step does
 * not answer (the core then stays on HSI). */
static void clock_init(void)
{
    RCC_CR |= AOT_PLL_HSE_BYPASS ? CR_HSEBYP : 0u; /* only while HSE is off */
    RCC_CR |= CR_HSEON;
    if (!wait_for(&RCC_CR, CR_HSERDY, CR_HSERDY)) {
        RCC_CR &= ~(CR_HSEON | CR_HSEBYP);
        return;
    }
    RCC_PLLCFGR = AOT_PLL_M | (AOT_PLL_N << 6) | ((AOT_PLL_P / 2u - 1u) << 16) | (1u << 22) |
                  (AOT_PLL_Q << 24); /* PLLSRC = HSE */
    RCC_CR |= CR_PLLON;
    if (!wait_for(&RCC_CR, CR_PLLRDY, CR_PLLRDY)) {
        RCC_CR &= ~(CR_PLLON | CR_HSEON | CR_HSEBYP);
        return;
    }
#if AOT_OVERDRIVE
    RCC_APB1ENR |= APB1ENR_PWREN;
    (void)RCC_APB1ENR;
    PWR_CR1 |= PWR_ODEN;
    if (!wait_for(&PWR_CSR1, PWR_ODRDY, PWR_ODRDY)) {
        return;
    }
    PWR_CR1 |= PWR_ODSWEN;
    if (!wait_for(&PWR_CSR1, PWR_ODSWRDY, PWR_ODSWRDY)) {
        return;
    }
#endif
    /* More wait states first; they must read back before the clock goes up. */
    FLASH_ACR = (FLASH_ACR & ~FLASH_ACR_LATENCY_MASK) | AOT_FLASH_LATENCY;
    if ((FLASH_ACR & FLASH_ACR_LATENCY_MASK) != AOT_FLASH_LATENCY) {
        return;
    }
    RCC_CFGR = (RCC_CFGR & ~(CFGR_SW_MASK | (0xFu << 4) | (0x3Fu << 10))) |
               (AOT_PPRE1 << 10) | (AOT_PPRE2 << 13) | CFGR_SW_PLL;
    if (!wait_for(&RCC_CFGR, CFGR_SWS_MASK, CFGR_SWS_PLL)) {
        RCC_CFGR &= ~CFGR_SW_MASK; /* back to HSI */
        return;
    }
    core_hz = AOT_PLL_HZ;
    usart_hz = AOT_PLL_HZ / (AOT_USART_ON_APB2 ? 2u : 4u); /* PPRE2 /2, PPRE1 /4 */
}
#endif

static void pin_af(uint32_t pin)
{
    volatile uint32_t *afr = pin < 8u ? &GPIO_AFRL : &GPIO_AFRH;
    uint32_t shift = (pin & 7u) * 4u;
    GPIO_MODER = (GPIO_MODER & ~(3u << (pin * 2u))) | (2u << (pin * 2u));
    *afr = (*afr & ~(0xFu << shift)) | (AOT_GPIO_AF << shift);
}

#if defined(AOT_TIMER_KIND_STM32_TIM2)
/* TIM2, 32 bits, counting from PSC = 0: under QEMU's STM32 timer model one
 * tick per nanosecond of virtual time, i.e. one per instruction with
 * -icount shift=0.  The 32-bit difference is exact for 4.29 G instructions. */
#define RCC_TIM2_EN_REG 0x40023840u /* RCC_APB1ENR */
#define TIM2_CR1 REG(0x40000000u)
#define TIM2_EGR REG(0x40000014u)
#define TIM2_CNT REG(0x40000024u)
#define TIM2_PSC REG(0x40000028u)
#define TIM2_ARR REG(0x4000002Cu)

#include "../cortex-m/semihost.h"

static uint32_t timer_origin;

static void timer_init(void)
{
    REG(RCC_TIM2_EN_REG) |= 1u; /* TIM2EN */
    (void)REG(RCC_TIM2_EN_REG);
    TIM2_PSC = 0;
    TIM2_ARR = 0xFFFFFFFFu;
    TIM2_EGR = 1u; /* UG: load the prescaler */
    TIM2_CR1 = 1u; /* CEN */
}

void aot_systick_handler(void);

void aot_systick_handler(void)
{
}

void aot_port_timer_start(void)
{
    timer_origin = TIM2_CNT;
}

uint64_t aot_port_timer_stop(void)
{
    return (uint32_t)(TIM2_CNT - timer_origin);
}

uint8_t aot_port_timer_unit(void)
{
    return AOT_TIMER_INSTRUCTIONS;
}

uint32_t aot_port_entropy(void)
{
    return TIM2_CNT;
}

void aot_port_exit(int code)
{
    aot_semihost_exit(code);  /* the QEMU process ends with `code` */
}
#else
#include "../cortex-m/dwt.h"
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
    clock_init();
#ifdef AOT_PWR_IOSV_REG
    REG(AOT_RCC_PWR_EN_REG) |= 1u << AOT_RCC_PWR_EN_BIT;
    (void)REG(AOT_RCC_PWR_EN_REG);
    REG(AOT_PWR_IOSV_REG) |= 1u << AOT_PWR_IOSV_BIT;
#endif
    REG(AOT_RCC_GPIO_EN_REG) |= 1u << AOT_RCC_GPIO_EN_BIT;
    REG(AOT_RCC_USART_EN_REG) |= 1u << AOT_RCC_USART_EN_BIT;
    (void)REG(AOT_RCC_USART_EN_REG); /* let the clock enable take effect */
    pin_af(AOT_GPIO_TX_PIN);
    pin_af(AOT_GPIO_RX_PIN);
#if AOT_USART_IS_LPUART
    /* LPUART: BRR = 256 * clock / baud, at least 0x300 (RM0432 LPUART baud rate). */
    USART_BRR = (uint32_t)((256ull * usart_hz + AOT_CONSOLE_BAUD / 2u) / AOT_CONSOLE_BAUD);
#else
    /* USART, oversampling by 16: BRR = clock / baud. */
    USART_BRR = (usart_hz + AOT_CONSOLE_BAUD / 2u) / AOT_CONSOLE_BAUD;
#endif
    USART_CR1 = CR1_UE | CR1_RE | CR1_TE;

    timer_init();
}

int aot_port_read_byte(void)
{
    for (;;) {
        uint32_t status = USART_STATUS;
        if ((status & ST_ORE) != 0) {
            /* A lost byte only costs a frame: the host retries.  F4: reading
             * SR then DR clears ORE; F7/L4: ICR. */
#if AOT_USART_F4
            if ((status & ST_RXNE) == 0) {
                (void)USART_RX;
            }
#else
            USART_ICR = ST_ORE;
#endif
        }
        if ((status & ST_RXNE) != 0) {
            return (int)(USART_RX & 0xFFu);
        }
    }
}

void aot_port_write(const uint8_t *data, size_t len)
{
    size_t i;
    for (i = 0; i < len; ++i) {
        while ((USART_STATUS & ST_TXE) == 0) {
        }
        USART_TX = data[i];
    }
}
