"""Instructions per core of a multi-core board under QEMU: the ``vcpu_insns`` plugin.

QEMU's -icount clock and the firmware's SysTick count the instructions of
every core together (docs/targets.md, "Several cores of one board").  The
plugin ``plugin/vcpu_insns.c`` counts each vCPU's instructions inside
measured windows, from the model's RPC run function (entered on core 0) to
the timer's stop function, the window ``aot run`` times, and how often the
running vCPU changed inside them (``turns``: many when the cores worked at
once).  :class:`CoreCounter` plugs it into :func:`aot.firmware.device.run_on_board`
for ``aot run --json``'s ``"cores"``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from aot.cycles.errors import CycleModelError
from aot.cycles.memtrace import build_plugin
from aot.cycles.program import Program

PLUGIN = "vcpu_insns.c"
#: The window aot run times: the RPC's run function to the timer's stop.
RUN_SUFFIX = "_rpc_run"
TIMER_STOP = "aot_port_timer_stop"


@dataclass(frozen=True)
class CoreCounts:
    """What the plugin counted: ``instructions[k]`` on core ``k`` over ``windows``
    windows, and ``turns`` between vCPUs inside them."""

    windows: int
    turns: int
    instructions: tuple[int, ...]

    def per_window(self) -> list[int]:
        """Each core's instructions per window, rounded (a run is one window)."""
        n = max(self.windows, 1)
        return [round(i / n) for i in self.instructions]


def plugin_args(library: Path, out: Path, start: int | None = None,
                stop: int | None = None) -> tuple[str, ...]:
    """QEMU options loading the plugin; without ``start`` and ``stop`` the whole run counts."""
    arg = f"{library},out={out}"
    if start is not None:
        arg += f",start=0x{start & ~1:x},stop=0x{stop & ~1:x}"
    return ("-plugin", arg)


def read_counts(path: Path, cores: int) -> CoreCounts:
    """The plugin's file (``cores``: how many the board has; a core that never ran
    inside a window counts 0)."""
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise CycleModelError(f"the per-core instruction count plugin wrote no {path}: "
                              f"{err}") from None
    head = dict(re.findall(r"^(windows|turns) (\d+)$", text, re.M))
    if set(head) != {"windows", "turns"}:
        raise CycleModelError(f"{path} is not the vcpu_insns plugin's output: {text[:200]!r}")
    counts = [0] * cores
    for vcpu, n in re.findall(r"^vcpu (\d+) (\d+)$", text, re.M):
        if int(vcpu) >= cores:
            raise CycleModelError(f"{path}: vCPU {vcpu} ran, but the board has {cores} cores")
        counts[int(vcpu)] = int(n)
    return CoreCounts(int(head["windows"]), int(head["turns"]), tuple(counts))


class CoreCounter:
    """Counts each core's instructions of every timed run of one firmware.

    ``qemu_args(project)`` gives the QEMU options (the plugin built into
    ``workdir``, the window from the firmware's symbols); after the run
    :meth:`counts` reads what the plugin wrote.
    """

    def __init__(self, workdir: Path, cores: int) -> None:
        self.workdir = Path(workdir)
        self.cores = cores
        self.out = self.workdir / "vcpu_insns.txt"

    def qemu_args(self, project) -> tuple[str, ...]:
        program = Program(project.elf)
        run = project.metadata["name"] + RUN_SUFFIX
        for symbol in (run, TIMER_STOP):
            if not program.has_function(symbol):
                raise CycleModelError(f"the firmware {project.elf} has no function {symbol!r}: "
                                      "per-core counts need RPC firmware built by aot")
        return plugin_args(build_plugin(PLUGIN, self.workdir), self.out,
                           program.address_of(run), program.address_of(TIMER_STOP))

    def counts(self) -> CoreCounts:
        return read_counts(self.out, self.cores)
