/*
 * The register recorder a port's set-up runs against on the host
 * (tests/runtime_c/test_port_registers.py).  The port is compiled with
 * -DAOT_MMIO_RECORD, so every register access of aot/mmio.h lands here.
 *
 * A tiny model of the chip, given on the command line (numbers in hex):
 *   ADDR=VALUE          the register's value at reset (0 otherwise)
 *   ready:ADDR:MASK     these bits always read 1 (a ready flag that is set)
 *   echo:ADDR:MASK:SH   reads also show (value & MASK) << SH (SWS mirrors SW)
 *   count:ADDR:STEP     a free-running counter: each read returns STEP more
 * Written values are stored and read back, except counters.
 *
 * Output, one line per access, in order:
 *   W ADDR VALUE        a write
 *   R ADDR VALUE [*N]   a read (N identical reads in a row as one line)
 *   S                   a barrier (aot_mmio_sync)
 *   C NAME              a call to a hook outside the port (aot_dwt_start)
 * then "clock_hz N" (aot_port_clock_hz) and "report MEASURED WS CACHES"
 * (aot_port_report).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot/mmio.h"
#include "aot/platform.h"

#define MAX_REGS 256

typedef struct {
    uint32_t addr;
    uint32_t value;
    uint32_t ready;
    uint32_t echo_mask;
    uint32_t echo_shift;
    uint32_t step; /* != 0: a counter */
} reg_t;

static reg_t regs[MAX_REGS];
static int nregs;
static uint32_t last_addr, last_value, repeats;
static int have_last;

static reg_t *find(uint32_t addr)
{
    int i;
    for (i = 0; i < nregs; ++i) {
        if (regs[i].addr == addr) {
            return &regs[i];
        }
    }
    if (nregs == MAX_REGS) {
        fprintf(stderr, "regsim: more than %d registers\n", MAX_REGS);
        exit(3);
    }
    memset(&regs[nregs], 0, sizeof regs[nregs]);
    regs[nregs].addr = addr;
    return &regs[nregs++];
}

static void flush_reads(void)
{
    if (have_last) {
        if (repeats > 1) {
            printf("R %08x %08x *%u\n", last_addr, last_value, repeats);
        } else {
            printf("R %08x %08x\n", last_addr, last_value);
        }
        have_last = 0;
    }
}

uint32_t aot_mmio_read(uint32_t addr)
{
    reg_t *r = find(addr);
    uint32_t v;
    if (r->step != 0) {
        r->value += r->step;
        v = r->value;
    } else {
        v = r->value | r->ready | ((r->value & r->echo_mask) << r->echo_shift);
    }
    if (have_last && last_addr == addr && last_value == v) {
        ++repeats;
    } else {
        flush_reads();
        have_last = 1;
        last_addr = addr;
        last_value = v;
        repeats = 1;
    }
    return v;
}

void aot_mmio_write(uint32_t addr, uint32_t value)
{
    flush_reads();
    printf("W %08x %08x\n", addr, value);
    if (find(addr)->step == 0) {
        find(addr)->value = value;
    }
}

void aot_mmio_sync(void)
{
    flush_reads();
    printf("S\n");
}

void aot_dwt_start(void);

void aot_dwt_start(void)
{
    flush_reads();
    printf("C aot_dwt_start\n");
}

static uint32_t hex(const char *s)
{
    return (uint32_t)strtoul(s, NULL, 16);
}

int main(int argc, char **argv)
{
    aot_device_report_t report;
    int i;
    for (i = 1; i < argc; ++i) {
        char *a = argv[i];
        char *p;
        if (strncmp(a, "ready:", 6) == 0) {
            p = strchr(a + 6, ':');
            find(hex(a + 6))->ready |= hex(p + 1);
        } else if (strncmp(a, "echo:", 5) == 0) {
            reg_t *r;
            p = strchr(a + 5, ':');
            r = find(hex(a + 5));
            r->echo_mask = hex(p + 1);
            r->echo_shift = hex(strchr(p + 1, ':') + 1);
        } else if (strncmp(a, "count:", 6) == 0) {
            p = strchr(a + 6, ':');
            find(hex(a + 6))->step = hex(p + 1);
        } else if ((p = strchr(a, '=')) != NULL) {
            find(hex(a))->value = hex(p + 1);
        } else {
            fprintf(stderr, "regsim: cannot read %s\n", a);
            return 2;
        }
    }
    aot_port_init();
    flush_reads();
    printf("clock_hz %u\n", aot_port_clock_hz());
    memset(&report, 0, sizeof report);
    aot_port_report(&report);
    flush_reads();
    printf("report %u %u %u\n", report.measured_clock_hz, report.flash_wait_states,
           report.caches);
    return 0;
}
