"""The jinja2 environments of the packages' ``templates/`` folders (files, not
expressions: docs/architecture.md), each made on first use: commands that print
no C do not pay for importing jinja2."""

from __future__ import annotations

import functools


@functools.cache
def templates(package: str):
    """The environment of ``package``'s ``templates/`` folder (package data):
    blocks trimmed, a trailing newline kept, an undefined name an error."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"), trim_blocks=True,
        lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
        autoescape=False)
