"""A bar chart of a profile's cycles per kernel, as a standalone SVG file.

One horizontal bar per kernel (``<rect class="bar">``, titled with the
kernel's figures), longest first in execution order top to bottom, labelled
with the kernel's name, its cycles and its share.  Plain SVG 1.1 written by
hand: no plotting library.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

_ROW, _LABEL, _BAR, _PAD = 22, 230, 420, 10


def profile_svg(profile) -> str:
    """The SVG text of ``profile``'s kernels (:class:`aot.cycles.profile.Profile`)."""
    rows = profile.kernels()
    total = profile.cycles or 1
    widest = max((r.cycles for r in rows), default=0) or 1
    width = _LABEL + _BAR + 170
    height = 2 * _PAD + 30 + _ROW * len(rows)
    kind = "approximate model" if profile.core.approximate else "TRM timings"
    title = (f"{profile.model} on {profile.board}: {round(total):,} estimated {profile.core.name} "
             f"cycles ({kind})")
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">')
    out = [svg,
           f'<title>{escape(title)}</title>',
           f'<text x="{_PAD}" y="{_PAD + 14}" font-weight="bold">{escape(title)}</text>']
    for k, r in enumerate(rows):
        y = _PAD + 30 + k * _ROW
        w = max(_BAR * r.cycles / widest, 1.0)
        tip = (f"{r.name}: {round(r.cycles):,} cycles, {r.instructions:,} instructions, "
               f"{r.macs:,} MACs")
        bar = (f'<rect class="bar" x="{_LABEL}" y="{y + 2}" width="{w:.1f}" '
               f'height="{_ROW - 6}" fill="#4878a8"><title>{escape(tip)}</title></rect>')
        value = (f'<text x="{_LABEL + w + 6:.1f}" y="{y + 14}">{round(r.cycles):,} '
                 f'({100 * r.cycles / total:.1f}%)</text>')
        out += [f'<text x="{_LABEL - 6}" y="{y + 14}" text-anchor="end">{escape(r.name)}</text>',
                bar, value]
    out.append("</svg>")
    return "\n".join(out) + "\n"
