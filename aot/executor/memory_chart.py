"""The memory plan as a picture: a standalone SVG of offsets over steps.

One column per step (the fused kernels in execution order), the workspace's
offsets from the bottom up; each workspace buffer is a rectangle over the
steps it is alive and the bytes it holds (``<rect class="buffer">``, titled
with its tensors, size, offset and steps), half transparent so that an
output overlapping the end of its dying input shows as a darker band.  The
step where the most bytes are alive is marked.  Plain SVG 1.1 written by
hand: no plotting library.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from aot.executor.memory import MemoryPlan, peak_step

_COLORS = ("#4878a8", "#e49444", "#6a9f58", "#d1605e", "#a77c9f", "#85b6b2", "#967662",
           "#e5ae38")
_LEFT, _TOP, _PLOT_W, _PLOT_H, _LABELS = 80, 40, 640, 360, 150


def memory_svg(plan: MemoryPlan, title: str) -> str:
    """The SVG text of ``plan``, headed by ``title``."""
    steps = max(len(plan.steps), 1)
    top = max(plan.workspace_bytes, 1)
    col = _PLOT_W / steps
    height = _TOP + _PLOT_H + _LABELS
    width = _LEFT + _PLOT_W + 20
    peak, peak_bytes = peak_step(plan)

    def y(offset: int) -> float:
        return _TOP + _PLOT_H * (1 - offset / top)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
           f'<title>{escape(title)}</title>',
           f'<text x="{_LEFT}" y="16" font-weight="bold" font-size="13">{escape(title)}</text>',
           f'<rect x="{_LEFT}" y="{_TOP}" width="{_PLOT_W}" height="{_PLOT_H}" fill="none" '
           'stroke="#888"/>']
    if plan.steps:
        x = _LEFT + peak * col
        out.append(f'<rect class="peak" x="{x:.1f}" y="{_TOP}" width="{col:.1f}" '
                   f'height="{_PLOT_H}" fill="#fbeaea"><title>peak: step {peak} '
                   f'{escape(plan.steps[peak])}, {peak_bytes:,} bytes alive</title></rect>')
    # The main workspace only: buffers in other regions have offsets of their own.
    inner = [b for b in plan.buffers if not b.external and not b.region]
    for i, b in enumerate(inner):
        names = " = ".join(t.name for t in b.tensors)
        tip = (f"{names}: {b.size:,} bytes at offset {b.offset:,}, steps {b.start}-{b.end}")
        out.append(f'<rect class="buffer" x="{_LEFT + b.start * col:.1f}" '
                   f'y="{y(b.offset + b.size):.1f}" width="{(b.end - b.start + 1) * col:.1f}" '
                   f'height="{max(y(b.offset) - y(b.offset + b.size), 0.5):.1f}" '
                   f'fill="{_COLORS[i % len(_COLORS)]}" fill-opacity="0.6" stroke="#333" '
                   f'stroke-width="0.5"><title>{escape(tip)}</title></rect>')
    for frac in (0, 0.25, 0.5, 0.75, 1):
        offset = round(top * frac)
        out.append(f'<text x="{_LEFT - 6}" y="{y(offset) + 4:.1f}" text-anchor="end">'
                   f'{offset:,}</text>')
    for s, name in enumerate(plan.steps):
        x = _LEFT + (s + 0.5) * col
        weight = ' font-weight="bold"' if s == peak else ""
        out.append(f'<text x="{x:.1f}" y="{_TOP + _PLOT_H + 10}" font-size="9"{weight} '
                   f'transform="rotate(60 {x:.1f} {_TOP + _PLOT_H + 10})">'
                   f'{escape(name[:28])}</text>')
    out.append(f'<text x="12" y="{_TOP + _PLOT_H / 2:.0f}" transform="rotate(-90 12 '
               f'{_TOP + _PLOT_H / 2:.0f})" text-anchor="middle">workspace offset (bytes)'
               '</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
