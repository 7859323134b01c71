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
 *   protect:ADDR:GATE:BIT  writes to ADDR are ignored unless bit BIT of GATE
 *                       is set (the STM32 backup domain behind PWR DBP)
 * Written values are stored and read back, except counters.
 *
 * Simulated time, for ports that measure their clock (all numbers in hex):
 *   clock:HZ            the core runs at HZ; every register access takes
 *                       `tick` core cycles of simulated time
 *   tick:N              cycles per access (default 8)
 *   cycles:ADDR         reads of ADDR give the cycle count (DWT CYCCNT)
 *   lse:BDCR:HZ:START   a 32 kHz crystal behind an STM32 RCC_BDCR: once LSEON
 *                       (bit 0) is written, LSERDY (bit 1) reads 1 after START
 *                       cycles and the oscillator runs at HZ from then on;
 *                       without this rule LSERDY never sets (no crystal)
 *   capture:BASE:CH:EN:ENBIT:ORMASK:ORVAL
 *                       channel CH of the STM32 timer at BASE captures the
 *                       LSE's edges when its clock enable (bit ENBIT of EN),
 *                       CEN, CCxS = 01 (input on TIx), CCxE and the input
 *                       remap ((BASE + 0x50) & ORMASK) == ORVAL are all set;
 *                       ICxPSC divides the edges by 1, 2, 4 or 8, CCxP and
 *                       CCxNP both set count both edges.  A capture sets
 *                       CCxIF in SR, a capture while CCxIF is still set also
 *                       CCxOF; SR's flags clear by writing 0 (rc_w0), CCxIF
 *                       also by reading CCRx.  Any other remap value, a
 *                       stopped LSE or a missing enable gives no capture.
 *
 * Output, one line per access, in order:
 *   W ADDR VALUE        a write
 *   R ADDR VALUE [*N]   a read (N identical reads in a row as one line)
 *   S                   a barrier (aot_mmio_sync)
 *   C NAME              a call to a hook outside the port (aot_dwt_start)
 * then "clock_hz N" (aot_port_clock_hz), "report MEASURED WS CACHES"
 * (aot_port_report) and, with a time model, "cycles N": the simulated
 * cycles aot_port_init took.
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

/* Simulated time (see the header comment); 0 Hz: no time model. */
static uint64_t now, tick = 8, core_hz;
static uint32_t cycles_addr;
static int have_cycles;

typedef struct {
    int on;
    uint32_t bdcr, hz;
    uint64_t start, on_at; /* cycles to start up; when LSEON was written */
    int started;
} lse_t;
static lse_t lse;

typedef struct {
    int on;
    uint32_t base, ch, en, enbit, ormask, orval;
    int armed;
    uint64_t edges; /* LSE edges seen since the capture was armed */
    uint64_t last;  /* the LSE edge count at the last update */
} capture_t;
static capture_t cap;

typedef struct {
    uint32_t addr, gate, bit;
} protect_t;
static protect_t protects[8];
static int nprotects;
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

static uint32_t raw(uint32_t addr)
{
    return find(addr)->value;
}

static int lse_ready(void)
{
    return lse.on && lse.started && (raw(lse.bdcr) & 1u) != 0 && now - lse.on_at >= lse.start;
}

/* LSE rising edges from the moment it became ready until now. */
static uint64_t lse_edges(void)
{
    if (!lse_ready() || core_hz == 0) {
        return 0;
    }
    return (now - lse.on_at - lse.start) * lse.hz / core_hz;
}

static uint32_t ch_shift(void)
{
    return 8u * ((cap.ch - 1u) % 2u);
}

static uint32_t ccmr_addr(void)
{
    return cap.base + 0x18u + 4u * ((cap.ch - 1u) / 2u);
}

/* Advance the capture channel to `now`: every PSC-th LSE edge (both edges
 * with CCxP = CCxNP = 1) sets CCxIF, or CCxOF as well if CCxIF was still set
 * or several captures happened since the last look. */
static void update_capture(void)
{
    uint32_t ccmr, ccer, psc, sr;
    uint64_t e, captures_before, captures_after;
    int both;
    if (!cap.on) {
        return;
    }
    ccmr = raw(ccmr_addr()) >> ch_shift();
    ccer = raw(cap.base + 0x20u) >> (4u * (cap.ch - 1u));
    if (((raw(cap.en) >> cap.enbit) & 1u) == 0 || (raw(cap.base) & 1u) == 0 ||
        (ccmr & 3u) != 1u || (ccer & 1u) == 0 ||
        (raw(cap.base + 0x50u) & cap.ormask) != cap.orval || !lse_ready()) {
        cap.armed = 0; /* the input prescaler restarts when capture is enabled again */
        return;
    }
    both = (ccer & 2u) != 0 && (ccer & 8u) != 0;
    e = lse_edges() * (both ? 2u : 1u);
    if (!cap.armed) {
        cap.armed = 1;
        cap.edges = 0;
        cap.last = e;
        return;
    }
    psc = 1u << ((ccmr >> 2) & 3u);
    captures_before = cap.edges / psc;
    cap.edges += e - cap.last;
    cap.last = e;
    captures_after = cap.edges / psc;
    if (captures_after > captures_before) {
        uint32_t ccif = 1u << cap.ch, ccof = 1u << (cap.ch + 8u);
        sr = raw(cap.base + 0x10u);
        if ((sr & ccif) != 0 || captures_after - captures_before > 1) {
            sr |= ccof;
        }
        find(cap.base + 0x10u)->value = sr | ccif;
    }
}

static void advance(void)
{
    if (core_hz != 0) {
        now += tick;
        update_capture();
    }
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
    reg_t *r;
    uint32_t v;
    advance();
    r = find(addr);
    if (have_cycles && addr == cycles_addr) {
        v = (uint32_t)now;
    } else if (lse.on && addr == lse.bdcr) {
        v = r->value | (lse_ready() ? 2u : 0u);
    } else if (r->step != 0) {
        r->value += r->step;
        v = r->value;
    } else {
        v = r->value | r->ready | ((r->value & r->echo_mask) << r->echo_shift);
    }
    if (cap.on && addr == cap.base + 0x34u + 4u * (cap.ch - 1u)) {
        find(cap.base + 0x10u)->value &= ~(1u << cap.ch); /* reading CCRx clears CCxIF */
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
    int i;
    advance();
    flush_reads();
    printf("W %08x %08x\n", addr, value);
    for (i = 0; i < nprotects; ++i) {
        if (protects[i].addr == addr && ((raw(protects[i].gate) >> protects[i].bit) & 1u) == 0) {
            return; /* write-protected: ignored */
        }
    }
    if (cap.on && addr == cap.base + 0x10u) {
        value &= raw(addr); /* SR flags: rc_w0 */
    }
    if (lse.on && addr == lse.bdcr) {
        value &= ~2u; /* LSERDY is read-only */
        if ((value & 1u) != 0 && (raw(addr) & 1u) == 0) {
            lse.started = 1;
            lse.on_at = now;
        }
    }
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

/* Up to `n` colon-separated hex numbers from `s`; how many were read. */
static int fields(const char *s, uint32_t *out, int n)
{
    int i = 0;
    while (i < n && *s != '\0') {
        char *end;
        out[i++] = (uint32_t)strtoul(s, &end, 16);
        if (*end != ':') {
            break;
        }
        s = end + 1;
    }
    return i;
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
        } else if (strncmp(a, "protect:", 8) == 0) {
            uint32_t f[3];
            if (fields(a + 8, f, 3) != 3 || nprotects == 8) {
                fprintf(stderr, "regsim: cannot read %s\n", a);
                return 2;
            }
            protects[nprotects].addr = f[0];
            protects[nprotects].gate = f[1];
            protects[nprotects].bit = f[2];
            ++nprotects;
        } else if (strncmp(a, "clock:", 6) == 0) {
            core_hz = hex(a + 6);
        } else if (strncmp(a, "tick:", 5) == 0) {
            tick = hex(a + 5);
        } else if (strncmp(a, "cycles:", 7) == 0) {
            cycles_addr = hex(a + 7);
            have_cycles = 1;
        } else if (strncmp(a, "lse:", 4) == 0) {
            uint32_t f[3];
            if (fields(a + 4, f, 3) != 3) {
                fprintf(stderr, "regsim: cannot read %s\n", a);
                return 2;
            }
            lse.on = 1;
            lse.bdcr = f[0];
            lse.hz = f[1];
            lse.start = f[2];
        } else if (strncmp(a, "capture:", 8) == 0) {
            uint32_t f[6];
            if (fields(a + 8, f, 6) != 6 || f[1] < 1 || f[1] > 4) {
                fprintf(stderr, "regsim: cannot read %s\n", a);
                return 2;
            }
            cap.on = 1;
            cap.base = f[0];
            cap.ch = f[1];
            cap.en = f[2];
            cap.enbit = f[3];
            cap.ormask = f[4];
            cap.orval = f[5];
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
    if (lse.on && (raw(lse.bdcr) & 1u) != 0) {
        lse.started = 1; /* an LSE already on at reset (the backup domain kept it) */
    }
    aot_port_init();
    flush_reads();
    if (core_hz != 0) {
        printf("cycles %llu\n", (unsigned long long)now);
    }
    printf("clock_hz %u\n", aot_port_clock_hz());
    memset(&report, 0, sizeof report);
    aot_port_report(&report);
    flush_reads();
    printf("report %u %u %u\n", report.measured_clock_hz, report.flash_wait_states,
           report.caches);
    return 0;
}
