/*
 * Port for STM32 boards with an STM32F7/L4-style USART or LPUART
 * (CR1/BRR/ISR/ICR/RDR/TDR), running from the reset clock, timing with the
 * DWT cycle counter.  NOT VERIFIED ON HARDWARE: it builds and links; the
 * register values follow the reference manuals named per board below.
 *
 * Boards (the project passes -DAOT_BOARD_<TAG>, AOT_CONSOLE_BASE,
 * AOT_CONSOLE_BAUD and AOT_CPU_HZ from the board record):
 *   st/nucleo-f746zg  RM0385: USART3 on PD8/PD9 (AF7), HSI 16 MHz at reset.
 *                     Also the default when no board is named (a plain
 *                     runtime.mk build with AOT_PORT=stm32).
 *   st/nucleo-l4r5zi  RM0432: LPUART1 on PG7/PG8 (AF8), MSI 4 MHz at reset;
 *                     port G is powered from VDDIO2, enabled by PWR_CR2.IOSV.
 * Both consoles reach the ST-LINK's USB serial port.  A project for another
 * STM32 board stops the build with #error instead of using these pins.
 *
 * Clock: the port does not set up the PLL; the core runs at the reset clock
 * (AOT_USART_CLOCK_HZ), not at the record's clock_hz (AOT_CPU_HZ), and the
 * baud divisor is computed from the reset clock.  Cycle counts do not depend
 * on the clock except through flash wait states.
 *
 * The timer (DWT CYCCNT, exact for runs shorter than 2^32 cycles: 268 s at
 * 16 MHz) and aot_port_exit() (a breakpoint) are ../cortex-m/dwt.c.
 *
 * Per-board parameters (set below from the board define):
 *   AOT_USART_BASE, AOT_USART_CLOCK_HZ, AOT_USART_IS_LPUART, AOT_GPIO_BASE,
 *   AOT_GPIO_TX_PIN, AOT_GPIO_RX_PIN, AOT_GPIO_AF,
 *   AOT_RCC_GPIO_EN_REG/BIT, AOT_RCC_USART_EN_REG/BIT,
 *   AOT_RCC_PWR_EN_REG/BIT and AOT_PWR_IOSV_REG/BIT (L4: VDDIO2)
 */
#include <stdint.h>

#include "aot/platform.h"
#include "../cortex-m/dwt.h"

#ifndef AOT_CONSOLE_BAUD
#define AOT_CONSOLE_BAUD 115200u
#endif

#if defined(AOT_BOARD_ST_NUCLEO_L4R5ZI)
/* STM32L4R5 (RM0432) */
#define AOT_STM32_L4 1
#define AOT_USART_BASE 0x40008000u /* LPUART1 */
#define AOT_USART_IS_LPUART 1
#define AOT_USART_CLOCK_HZ 4000000u /* MSI 4 MHz = PCLK1, the LPUART1 clock at reset */
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
#elif defined(AOT_BOARD_ST_NUCLEO_F746ZG) || !defined(AOT_CONSOLE_BASE)
/* STM32F746 (RM0385) */
#define AOT_STM32_F7 1
#define AOT_USART_BASE 0x40004800u /* USART3 */
#define AOT_USART_IS_LPUART 0
#define AOT_USART_CLOCK_HZ 16000000u /* HSI 16 MHz = PCLK1 at reset */
#define AOT_GPIO_BASE 0x40020C00u  /* GPIOD */
#define AOT_GPIO_TX_PIN 8u
#define AOT_GPIO_RX_PIN 9u
#define AOT_GPIO_AF 7u
#define AOT_RCC_GPIO_EN_REG 0x40023830u /* RCC_AHB1ENR */
#define AOT_RCC_GPIO_EN_BIT 3u          /* GPIODEN */
#define AOT_RCC_USART_EN_REG 0x40023840u /* RCC_APB1ENR */
#define AOT_RCC_USART_EN_BIT 18u         /* USART3EN */
#else
#error "stm32 port: no pins and clocks for this board; add it to ports/stm32/port.c"
#endif

#if defined(AOT_CONSOLE_BASE) && AOT_CONSOLE_BASE != AOT_USART_BASE
#error "stm32 port: the board's console base differs from the UART this port sets up"
#endif

#if AOT_USART_IS_LPUART
/* LPUART: BRR = 256 * clock / baud, at least 0x300 (RM0432 LPUART baud rate). */
#define AOT_USART_BRR \
    ((uint32_t)((256ull * AOT_USART_CLOCK_HZ + AOT_CONSOLE_BAUD / 2u) / AOT_CONSOLE_BAUD))
#else
/* USART, oversampling by 16: BRR = clock / baud. */
#define AOT_USART_BRR ((AOT_USART_CLOCK_HZ + AOT_CONSOLE_BAUD / 2u) / AOT_CONSOLE_BAUD)
#endif

#define REG(addr) (*(volatile uint32_t *)(addr))
#define USART_CR1 REG(AOT_USART_BASE + 0x00u)
#define USART_BRR REG(AOT_USART_BASE + 0x0Cu)
#define USART_ISR REG(AOT_USART_BASE + 0x1Cu)
#define USART_ICR REG(AOT_USART_BASE + 0x20u)
#define USART_RDR REG(AOT_USART_BASE + 0x24u)
#define USART_TDR REG(AOT_USART_BASE + 0x28u)
#define ISR_RXNE (1u << 5)
#define ISR_TXE (1u << 7)
#define ISR_ORE (1u << 3)
#define CR1_UE 1u
#define CR1_RE (1u << 2)
#define CR1_TE (1u << 3)

#define GPIO_MODER REG(AOT_GPIO_BASE + 0x00u)
#define GPIO_AFRL REG(AOT_GPIO_BASE + 0x20u)
#define GPIO_AFRH REG(AOT_GPIO_BASE + 0x24u)


void aot_systick_handler(void);

void aot_systick_handler(void)
{
}

static void pin_af(uint32_t pin)
{
    volatile uint32_t *afr = pin < 8u ? &GPIO_AFRL : &GPIO_AFRH;
    uint32_t shift = (pin & 7u) * 4u;
    GPIO_MODER = (GPIO_MODER & ~(3u << (pin * 2u))) | (2u << (pin * 2u));
    *afr = (*afr & ~(0xFu << shift)) | (AOT_GPIO_AF << shift);
}

void aot_port_init(void)
{
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
    USART_BRR = AOT_USART_BRR;
    USART_CR1 = CR1_UE | CR1_RE | CR1_TE;

    aot_dwt_start();
}

int aot_port_read_byte(void)
{
    for (;;) {
        uint32_t isr = USART_ISR;
        if ((isr & ISR_ORE) != 0) {
            USART_ICR = ISR_ORE; /* a lost byte only costs a frame: the host retries */
        }
        if ((isr & ISR_RXNE) != 0) {
            return (int)(USART_RDR & 0xFFu);
        }
    }
}

void aot_port_write(const uint8_t *data, size_t len)
{
    size_t i;
    for (i = 0; i < len; ++i) {
        while ((USART_ISR & ISR_TXE) == 0) {
        }
        USART_TDR = data[i];
    }
}
