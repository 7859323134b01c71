/* A QEMU TCG plugin that counts the guest instructions each vCPU (each core
 * of a multi-core board) executes inside measured windows: from a block
 * starting at `start` (run by any core) to one starting at `stop`, both
 * included; without `start` and `stop` the whole run is one window.
 *
 * It also counts *turns*: how often, inside a window, the next block comes
 * from another vCPU than the last one did.  Under -icount QEMU 7.2 runs the
 * vCPUs in turn on one thread; two cores working at once give many turns,
 * one core working while the other waits in WFE gives almost none.
 *
 * Output (`out=FILE`), rewritten whenever a window ends (QEMU is killed, not
 * ended, after an RPC session, so an exit hook alone would lose it):
 *   windows W
 *   turns T
 *   vcpu 0 N0
 *   vcpu 1 N1        one line per vCPU that has run inside a window
 *
 * Counting is per translation block at its start, so a block cut short by
 * an exception counts in full (the same convention as memtrace.c).  QEMU 7.2
 * (Debian 12) installs no plugin header: the entry points used are declared
 * below from the documented plugin API (version 1); aot.cycles.cores builds
 * it with the host's C compiler. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t plugin_id;
struct qemu_plugin_tb;
struct qemu_info;

enum { CB_NO_REGS = 0 };
enum { MAX_VCPUS = 16 };

extern void qemu_plugin_register_vcpu_tb_trans_cb(
    plugin_id id, void (*cb)(plugin_id, struct qemu_plugin_tb *));
extern void qemu_plugin_register_vcpu_tb_exec_cb(
    struct qemu_plugin_tb *tb, void (*cb)(unsigned int, void *), int flags, void *udata);
extern void qemu_plugin_register_atexit_cb(plugin_id id, void (*cb)(plugin_id, void *),
                                           void *udata);
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
extern uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static const char *path;
static uint32_t start_pc, stop_pc;
static int windowed, inside;
static unsigned int last_vcpu = ~0u;
static uint64_t insns[MAX_VCPUS];
static uint64_t turns, windows, seen;

static void save(void)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return;
    fprintf(f, "windows %llu\nturns %llu\n", (unsigned long long)windows,
            (unsigned long long)turns);
    for (unsigned int v = 0; v < MAX_VCPUS; v++)
        if (seen & (1ull << v))
            fprintf(f, "vcpu %u %llu\n", v, (unsigned long long)insns[v]);
    fclose(f);
}

/* udata packs the block's first pc (low 32 bits) and its instruction count. */
static void on_block(unsigned int vcpu, void *udata)
{
    uint64_t packed = (uint64_t)(uintptr_t)udata;
    uint32_t pc = (uint32_t)packed;
    if (windowed && !inside) {
        if (pc != start_pc)
            return;
        inside = 1;
        last_vcpu = vcpu;
    }
    if (vcpu >= MAX_VCPUS)
        return;
    if (vcpu != last_vcpu)
        turns++;
    last_vcpu = vcpu;
    insns[vcpu] += packed >> 32;
    seen |= 1ull << vcpu;
    if (windowed && pc == stop_pc) {
        inside = 0;
        windows++;
        save();
    }
}

static void on_translate(plugin_id id, struct qemu_plugin_tb *tb)
{
    uint64_t n = qemu_plugin_tb_n_insns(tb);
    uint64_t pc = qemu_plugin_tb_vaddr(tb) & 0xffffffffu;
    (void)id;
    if (n == 0)
        return;
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, CB_NO_REGS,
                                         (void *)(uintptr_t)(pc | (n << 32)));
}

static void on_quit(plugin_id id, void *udata)
{
    (void)id;
    (void)udata;
    if (!windowed)
        windows = 1;
    save();
}

__attribute__((visibility("default")))
int qemu_plugin_install(plugin_id id, const struct qemu_info *info, int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0) {
            path = argv[i] + 4;
        } else if (strncmp(argv[i], "start=", 6) == 0) {
            start_pc = (uint32_t)strtoul(argv[i] + 6, NULL, 0);
            windowed = 1;
        } else if (strncmp(argv[i], "stop=", 5) == 0) {
            stop_pc = (uint32_t)strtoul(argv[i] + 5, NULL, 0);
            windowed = 1;
        }
    }
    if (path == NULL)
        return -1;
    save();
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_quit, NULL);
    return 0;
}
