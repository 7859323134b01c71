"""The memory plan as a picture: a standalone SVG of offsets over steps.

One column per step (the fused kernels in execution order) and one panel
per memory region the plan uses (the main workspace in ``ram`` first, then
every other region of :mod:`aot.executor.regions`, each with its own offset
scale, from the bottom up); each buffer is a rectangle over the steps it is
alive and the bytes it holds in its region (``<rect class="buffer">``,
titled with its tensors, size, region, offset and steps), half transparent
so that an output overlapping the end of its dying input shows as a darker
band.  The step where the most bytes are alive (all regions together) is
shaded in every panel and named in the heading; each panel's heading gives
the region's workspace bytes, the constants copied there and its speed.
Plain SVG 1.1 written by hand: no plotting library.

SVG cannot wrap or measure text, so the drawing bounds it: :func:`text_width`
is an upper bound of a line's width in the widest common default sans-serif
font, the heading is wrapped to the canvas, and the canvas grows to hold
the slanted step names.
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

from aot.executor.memory import MemoryPlan, peak_step, region_rows

_COLORS = ("#4878a8", "#e49444", "#6a9f58", "#d1605e", "#a77c9f", "#85b6b2", "#967662",
           "#e5ae38")
_LEFT, _TOP, _PLOT_W, _PLOT_H = 80, 40, 640, 360
_PANEL_H, _GAP = 200, 36   # each region's panel below the main one
_MARGIN = 12                       # around the heading and the step names
_HEAD_SIZE, _HEAD_LINE = 13, 17    # the heading's font size and line pitch
_STEP_SIZE, _STEP_ANGLE = 9, 60    # step names: font size, slant in degrees
_STEP_CHARS = 28                   # step names are cut to this many characters

# Advance widths in em, upper bounds measured on DejaVu Sans Bold (the widest of
# the usual default sans-serif fonts; Arial and Helvetica are narrower): the narrow
# glyphs are at most 0.46 em, the wide ones 1.11 em, every other printable ASCII
# glyph 0.88 em.
_NARROW, _WIDE = frozenset("ijlI.,:;'!| ()[]"), frozenset("mwMW@%")


def text_width(text: str, size: float) -> float:
    """An upper bound of the width in pixels of ``text`` at font size ``size``."""
    return size * sum(0.46 if c in _NARROW else 1.11 if c in _WIDE else 0.88 for c in text)


def wrap(text: str, size: float, room: float) -> list[str]:
    """``text`` in lines no wider than ``room`` pixels (:func:`text_width`),
    broken at spaces; a single word wider than ``room`` is cut."""
    lines: list[str] = []
    for word in text.split(" "):
        line = f"{lines[-1]} {word}" if lines else word
        if lines and text_width(line, size) <= room:
            lines[-1] = line
            continue
        while text_width(word, size) > room:
            cut = max(n for n in range(1, len(word) + 1) if text_width(word[:n], size) <= room)
            lines.append(word[:cut])
            word = word[cut:]
        lines.append(word)
    return lines


def memory_svg(plan: MemoryPlan, title: str) -> str:
    """The SVG text of ``plan``, headed by ``title``."""
    steps = max(len(plan.steps), 1)
    col = _PLOT_W / steps
    rows = [r for r in region_rows(plan) if r[0] == "ram" or r[1]]
    panels = []   # (region, workspace bytes, speed, constants, top, height)
    top = _TOP
    for i, (region, size, speed, consts) in enumerate(rows):
        height = _PLOT_H if i == 0 else _PANEL_H
        panels.append((region, size, speed, consts, top, height))
        top += height + _GAP
    peak, peak_bytes = peak_step(plan)
    # The step names hang below the plot, slanted down to the right: the canvas
    # holds the longest of them.
    step_names = [name[:_STEP_CHARS] for name in plan.steps]
    slant = math.radians(_STEP_ANGLE)
    reach = [text_width(n, _STEP_SIZE) for n in step_names] or [0.0]
    right = max([_LEFT + _PLOT_W + 20]
                + [_LEFT + (s + 0.5) * col + w * math.cos(slant) + _STEP_SIZE + _MARGIN
                   for s, w in enumerate(reach)])
    width = math.ceil(right)
    parts = [title] + ([f"peak: step {peak} {plan.steps[peak]}, {peak_bytes:,} bytes alive"]
                       if plan.steps else [])
    heading = [line for part in parts
               for line in wrap(part, _HEAD_SIZE, width - 2 * _MARGIN)]
    shift = (len(heading) - 1) * _HEAD_LINE   # the plot starts below the heading
    panels = [(r, n, sp, c, ptop + shift, h) for r, n, sp, c, ptop, h in panels]
    bottom = top - _GAP + shift
    total_height = math.ceil(bottom + 10 + max(reach) * math.sin(slant) + _STEP_SIZE
                             + _MARGIN)
    lines = "".join(f'<tspan x="{_MARGIN}" y="{16 + i * _HEAD_LINE}">{escape(line)}</tspan>'
                    for i, line in enumerate(heading))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{total_height}" '
           f'viewBox="0 0 {width} {total_height}" font-family="sans-serif" font-size="11">',
           f'<title>{escape(title)}</title>',
           f'<text class="heading" font-weight="bold" font-size="{_HEAD_SIZE}">{lines}</text>']
    inner = [b for b in plan.buffers if not b.external]
    color = {id(b): _COLORS[i % len(_COLORS)] for i, b in enumerate(inner)}
    several = len(panels) > 1
    for region, size, speed, consts, ptop, height in panels:
        span = max(size, 1)

        def y(offset: int, ptop=ptop, height=height, span=span) -> float:
            return ptop + height * (1 - offset / span)

        label = (f"{region}{' (the workspace)' if region == 'ram' else ''}: {size:,} bytes"
                 + (f", {consts:,} bytes of constants" if consts else "")
                 + (f", speed {speed}" if speed else ""))
        out.append(f'<g class="region" id="region-{escape(region)}">')
        if several:
            out.append(f'<text x="{_LEFT}" y="{ptop - 6}" font-weight="bold">'
                       f'{escape(label)}</text>')
        out.append(f'<rect x="{_LEFT}" y="{ptop}" width="{_PLOT_W}" height="{height}" '
                   'fill="none" stroke="#888"/>')
        if plan.steps:
            x = _LEFT + peak * col
            out.append(f'<rect class="peak" x="{x:.1f}" y="{ptop}" width="{col:.1f}" '
                       f'height="{height}" fill="#fbeaea"><title>peak: step {peak} '
                       f'{escape(plan.steps[peak])}, {peak_bytes:,} bytes alive</title></rect>')
        for b in inner:
            if (b.region or "ram") != region:
                continue
            names = " = ".join(t.name for t in b.tensors)
            tip = (f"{names}: {b.size:,} bytes at {region} offset {b.offset:,}, steps "
                   f"{b.start}-{b.end}")
            out.append(f'<rect class="buffer" x="{_LEFT + b.start * col:.1f}" '
                       f'y="{y(b.offset + b.size):.1f}" '
                       f'width="{(b.end - b.start + 1) * col:.1f}" '
                       f'height="{max(y(b.offset) - y(b.offset + b.size), 0.5):.1f}" '
                       f'fill="{color[id(b)]}" fill-opacity="0.6" stroke="#333" '
                       f'stroke-width="0.5"><title>{escape(tip)}</title></rect>')
        for frac in (0, 0.25, 0.5, 0.75, 1):
            offset = round(span * frac)
            out.append(f'<text x="{_LEFT - 6}" y="{y(offset) + 4:.1f}" text-anchor="end">'
                       f'{offset:,}</text>')
        axis = f"{region} offset (bytes)" if several else "workspace offset (bytes)"
        mid = ptop + height / 2
        out.append(f'<text x="12" y="{mid:.0f}" transform="rotate(-90 12 {mid:.0f})" '
                   f'text-anchor="middle">{escape(axis)}</text>')
        out.append("</g>")
    for s, name in enumerate(step_names):
        x = _LEFT + (s + 0.5) * col
        weight = ' font-weight="bold"' if s == peak else ""
        out.append(f'<text class="step" x="{x:.1f}" y="{bottom + 10}" '
                   f'font-size="{_STEP_SIZE}"{weight} '
                   f'transform="rotate({_STEP_ANGLE} {x:.1f} {bottom + 10})">'
                   f'{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
