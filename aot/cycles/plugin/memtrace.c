/* A QEMU TCG plugin that records, in execution order, every translation block
 * the guest runs and every load and store it makes, between a block starting at
 * `start` and one starting at `stop` (the measured window of aot profile).
 * `start=` may be given several times (up to MAX_STARTS): a window then opens
 * at a block starting at any of them (the candidates of a tuning image, each
 * window one call of one of them, aot.cycles.calls).
 *
 * Output (`out=FILE`): little-endian pairs of 32-bit words,
 *   block: (pc, size_in_bytes << 2 | 0)
 *   load:  (address, 1)
 *   store: (address, 2)
 * a block's accesses follow its record.  The file is flushed when a window
 * ends, so the host can read it while QEMU still runs.
 *
 * QEMU 7.2 (Debian 12) installs no plugin header: the few entry points used
 * are declared below from the documented plugin API (version 1), and the
 * plugin is built by aot.cycles.memtrace with the host's C compiler. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t plugin_id;
typedef uint32_t meminfo;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_info;

enum { CB_NO_REGS = 0 };
enum { MEM_RW = 3 };

extern void qemu_plugin_register_vcpu_tb_trans_cb(
    plugin_id id, void (*cb)(plugin_id, struct qemu_plugin_tb *));
extern void qemu_plugin_register_vcpu_tb_exec_cb(
    struct qemu_plugin_tb *tb, void (*cb)(unsigned int, void *), int flags, void *udata);
extern void qemu_plugin_register_vcpu_mem_cb(
    struct qemu_plugin_insn *insn, void (*cb)(unsigned int, meminfo, uint64_t, void *),
    int flags, int rw, void *udata);
extern void qemu_plugin_register_atexit_cb(plugin_id id, void (*cb)(plugin_id, void *),
                                           void *udata);
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
extern struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
                                                        size_t idx);
extern uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
extern size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
extern bool qemu_plugin_mem_is_store(meminfo info);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define MAX_STARTS 1024

static FILE *out;
static uint32_t starts[MAX_STARTS], stop_pc;
static size_t nstarts;
static int inside;

static int compare_pc(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int is_start(uint32_t pc)
{
    return bsearch(&pc, starts, nstarts, sizeof starts[0], compare_pc) != NULL;
}

static void put(uint32_t a, uint32_t b)
{
    uint32_t rec[2] = {a, b};
    fwrite(rec, sizeof rec, 1, out);
}

static void on_block(unsigned int vcpu, void *udata)
{
    uintptr_t packed = (uintptr_t)udata;
    uint32_t pc = (uint32_t)(packed & 0xffffffffu);
    uint32_t size = (uint32_t)(packed >> 32);
    (void)vcpu;
    if (!inside) {
        if (!is_start(pc))
            return;
        inside = 1;
    }
    put(pc, size << 2);
    if (pc == stop_pc) {
        inside = 0;
        fflush(out);
    }
}

static void on_access(unsigned int vcpu, meminfo info, uint64_t vaddr, void *udata)
{
    (void)vcpu;
    (void)udata;
    if (inside)
        put((uint32_t)vaddr, qemu_plugin_mem_is_store(info) ? 2u : 1u);
}

static void on_translate(plugin_id id, struct qemu_plugin_tb *tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb);
    (void)id;
    if (n == 0)
        return;
    struct qemu_plugin_insn *first = qemu_plugin_tb_get_insn(tb, 0);
    struct qemu_plugin_insn *last = qemu_plugin_tb_get_insn(tb, n - 1);
    uint64_t pc = qemu_plugin_insn_vaddr(first);
    uint64_t end = qemu_plugin_insn_vaddr(last) + qemu_plugin_insn_size(last);
    uintptr_t packed = (uintptr_t)((pc & 0xffffffffu) | ((end - pc) << 32));
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, CB_NO_REGS, (void *)packed);
    for (size_t i = 0; i < n; i++)
        qemu_plugin_register_vcpu_mem_cb(qemu_plugin_tb_get_insn(tb, i), on_access,
                                         CB_NO_REGS, MEM_RW, NULL);
}

static void on_quit(plugin_id id, void *udata)
{
    (void)id;
    (void)udata;
    if (out != NULL)
        fclose(out);
    out = NULL;
}

__attribute__((visibility("default")))
int qemu_plugin_install(plugin_id id, const struct qemu_info *info, int argc, char **argv)
{
    const char *path = NULL;
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0)
            path = argv[i] + 4;
        else if (strncmp(argv[i], "start=", 6) == 0) {
            if (nstarts == MAX_STARTS)
                return -1;
            starts[nstarts++] = (uint32_t)strtoul(argv[i] + 6, NULL, 0);
        }
        else if (strncmp(argv[i], "stop=", 5) == 0)
            stop_pc = (uint32_t)strtoul(argv[i] + 5, NULL, 0);
    }
    if (path == NULL || nstarts == 0 || (out = fopen(path, "wb")) == NULL)
        return -1;
    qsort(starts, nstarts, sizeof starts[0], compare_pc);
    setvbuf(out, NULL, _IOFBF, 1 << 22);
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_quit, NULL);
    return 0;
}
