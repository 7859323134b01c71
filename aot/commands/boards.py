"""``aot boards``: list the known boards, or show one board's record."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aot.target.tags import Board

NAME = "boards"
HELP = "list the boards aot knows, or show one board's record"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="boards_command", metavar="ACTION")
    show = sub.add_parser(
        "show", help="show one board's record", description="Show one board's record."
    )
    show.add_argument("tag", help="board tag, alias or tag:vN (qemu/mps2-an386)")


def _size(n: int) -> str:
    if n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n % (1 << 10) == 0:
        return f"{n >> 10} KiB"
    return f"{n} B"


def _features(board: Board) -> str:
    """The FPU, DSP and MVE facts of the board's target, ``-`` when it has none."""
    facts = board.target.facts
    parts = [facts.fpu] if facts.fpu else []
    parts += ["dsp"] if facts.has_dsp else []
    parts += ["mve"] if facts.has_mve else []
    return "+".join(parts) or "-"


def _transport(board: Board) -> str:
    """How the host reaches the runtime: QEMU's serial and the host process are on a
    loopback TCP port; a real board on a USB serial port at the console's baud rate."""
    if board.platform == "hardware":
        return f"serial@{board.console.baud}"
    return "tcp-loopback"


def _row(board: Board) -> dict[str, str]:
    mem = board.memory
    return {
        "tag": board.tag,
        "core": board.cpu,
        "fpu/dsp/mve": _features(board),
        "ram": _size(mem.ram.length) if mem else "-",
        "flash": _size(mem.flash.length) if mem else "-",
        "runner": board.runner.name,
        "transport": _transport(board),
        "verified": board.verified,
    }


def table(rows: list[dict[str, str]]) -> str:
    """Left-aligned columns with a header made of the dict keys."""
    heads = list(rows[0]) if rows else []
    widths = {h: max(len(h), *(len(r[h]) for r in rows)) for h in heads}
    lines = ["  ".join(h.upper().ljust(widths[h]) for h in heads)]
    lines += ["  ".join(r[h].ljust(widths[h]) for h in heads) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def _timing(timing: dict | None) -> list[str]:
    """The ``memory.timing`` the cycle estimate prices (docs/cycles.md), a line
    per memory and cache; the citations stay in the record and in --json."""
    if not timing:
        return []
    lines = [f"timing       traced on {timing['trace_board']}"] if "trace_board" in timing else []
    for name, mem in timing.items():
        if not isinstance(mem, dict):
            continue
        ws = mem.get("wait_states")
        lines.append(f"timing       {name:<14} " + ", ".join(
            [*([f"{ws} wait states"] if ws is not None else []), mem.get("bus", "")]).strip(", "))
    for cache in timing.get("caches", []):
        size = f"{_size(cache['bytes'])}, " if "bytes" in cache else ""
        lines.append(f"timing       {cache['name']:<14} {size}{cache['line_bytes']}-byte lines, "
                     f"{cache['access']} from {cache['serves']}")
    return lines


def _show(board: Board) -> str:
    lines = [
        f"tag          {board.tag} (versioned: {board.versioned_tag})",
        f"aliases      {', '.join(board.aliases) or '-'}",
        f"description  {board.description}",
        f"platform     {board.platform} (verified: {board.verified})",
        f"cpu          {board.cpu}"
        + (f" at {board.clock_hz / 1e6:g} MHz" if board.clock_hz else ""),
        f"target       {board.target}",
        f"port         {board.port}",
    ]
    if board.memory:
        for r in board.memory.regions():
            lines.append(
                f"memory       {r.name:<10} 0x{r.origin:08x}..0x{r.end:08x}  {_size(r.length)}"
                + (f"  speed {r.speed}" if r.speed else "")
                + (f"  {r.wait_states} wait states" if r.wait_states is not None else "")
            )
        if board.memory.caches is not None:
            lines.append(f"caches       {', '.join(board.memory.caches) or 'none'}")
        lines += _timing(board.memory.timing)
    if board.clocks:
        k = board.clocks
        source = k.source + (f" {k.reference_hz / 1e6:g} MHz" if k.reference_hz else "")
        lines.append(f"clocks       {source}: {k.derivation}; measured by {k.measured_by}")
    tc = board.toolchain
    lines.append(f"toolchain    {tc.tool('gcc')} {' '.join((*tc.cpu_flags, *tc.opt_flags))}"
                 .rstrip())
    im = board.image
    image = {"elf": "the ELF",
             "uf2": f"UF2, family 0x{im.uf2_family or 0:08x}",
             "esp": f"ESP app image ({im.esp_chip}, {im.flash_mode}, {im.flash_freq}, "
                    f"{im.flash_size}) at flash offset 0x{im.offset or 0:x}"}[im.format]
    lines.append(f"image        {image}")
    for r in board.runners:
        lines.append(f"runner       {' '.join([r.name, *r.args])}")
    c = board.console
    console = [c.kind] + ([f"at 0x{c.base:08x}"] if c.base is not None else [])
    console += [f"{c.baud} baud"] if c.baud else []
    console += [f"USB {' or '.join(c.usb)}"] if c.usb else []
    lines.append(f"console      {', '.join(console)}")
    if board.qemu:
        q = board.qemu
        lines.append(f"qemu         {q.system} -M {q.machine} {' '.join(q.args)}")
    t = board.timer
    timer = [t.kind] + ([f"{t.clock_hz / 1e6:g} MHz"] if t.clock_hz else [])
    if t.icount_instructions_per_tick:
        timer.append(f"{t.icount_instructions_per_tick:g} instructions/tick under -icount")
    lines.append(f"timer        {', '.join(timer)}")
    lines.append("note         " + board.note.replace("\n", "\n             "))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from aot.target.tags import list_boards, load_board

    if args.boards_command == "show":
        board = load_board(args.tag)
        print(json.dumps(board.to_dict(), indent=2) if args.json else _show(board))
        return 0
    boards = list_boards()
    if args.json:
        print(json.dumps([b.to_dict() for b in boards], indent=2))
    else:
        print(table([_row(b) for b in boards]))
    return 0
