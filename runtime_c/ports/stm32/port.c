/*
 * Port for STM32 boards with an STM32F7-style USART (CR1/BRR/ISR/RDR/TDR),
 * running from the reset clock (16 MHz HSI), timing with the DWT cycle
 * counter.  Defaults: NUCLEO-F746ZG, USART3 on PD8/PD9 (AF7), which the
 * on-board ST-LINK exposes as a USB serial port.  NOT VERIFIED ON HARDWARE:
 * it builds; the register values follow RM0385.
 *
 * DWT CYCCNT does not exist under QEMU (reads 0): use the mps2 ports there.
 * CYCCNT is 32 bits; timer_stop() extends it to 64 bits assuming a run is
 * shorter than 2^32 cycles (20 s at 216 MHz), and reports AOT_TIMER_CYCLES.
 *
 * Board parameters (from port.mk / the board record):
 *   AOT_USART_BASE, AOT_USART_BRR (clock / baud), AOT_GPIO_BASE,
 *   AOT_GPIO_TX_PIN, AOT_GPIO_RX_PIN, AOT_GPIO_AF,
 *   AOT_RCC_GPIO_EN_REG/BIT, AOT_RCC_USART_EN_REG/BIT
 */
#include <stdint.h>

#include "aot/platform.h"

#ifndef AOT_USART_BASE
#define AOT_USART_BASE 0x40004800u /* USART3 */
#define AOT_USART_BRR 139u         /* 16 MHz / 115200 */
#define AOT_GPIO_BASE 0x40020C00u  /* GPIOD */
#define AOT_GPIO_TX_PIN 8u
#define AOT_GPIO_RX_PIN 9u
#define AOT_GPIO_AF 7u
#define AOT_RCC_GPIO_EN_REG 0x40023830u /* RCC_AHB1ENR */
#define AOT_RCC_GPIO_EN_BIT 3u          /* GPIODEN */
#define AOT_RCC_USART_EN_REG 0x40023840u /* RCC_APB1ENR */
#define AOT_RCC_USART_EN_BIT 18u         /* USART3EN */
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

#define DEMCR REG(0xE000EDFCu)
#define DWT_CTRL REG(0xE0001000u)
#define DWT_CYCCNT REG(0xE0001004u)
#define DWT_LAR REG(0xE0001FB0u)

static uint32_t timer_origin;

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
    REG(AOT_RCC_GPIO_EN_REG) |= 1u << AOT_RCC_GPIO_EN_BIT;
    REG(AOT_RCC_USART_EN_REG) |= 1u << AOT_RCC_USART_EN_BIT;
    (void)REG(AOT_RCC_USART_EN_REG); /* let the clock enable take effect */
    pin_af(AOT_GPIO_TX_PIN);
    pin_af(AOT_GPIO_RX_PIN);
    USART_BRR = AOT_USART_BRR;
    USART_CR1 = CR1_UE | CR1_RE | CR1_TE;

    DEMCR |= 1u << 24; /* TRCENA: power the DWT */
    DWT_LAR = 0xC5ACCE55u; /* unlock on Cortex-M7; ignored elsewhere */
    DWT_CYCCNT = 0;
    DWT_CTRL |= 1u;
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

void aot_port_timer_start(void)
{
    timer_origin = DWT_CYCCNT;
}

uint64_t aot_port_timer_stop(void)
{
    return (uint32_t)(DWT_CYCCNT - timer_origin);
}

uint8_t aot_port_timer_unit(void)
{
    return AOT_TIMER_CYCLES;
}

uint32_t aot_port_entropy(void)
{
    return DWT_CYCCNT; /* depends on how long the host took to connect */
}

void aot_port_exit(int code)
{
    (void)code;
    /* No host to report to: stop where a debugger can see it. */
    for (;;) {
        __asm__ volatile("bkpt 0");
    }
}
