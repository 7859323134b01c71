"""The target string grammar: tokenizing, parsing and printing.

::

    target  := KIND option*
    option  := "-" NAME [ "=" value ]
    value   := item ( "," item )*       (empty after "=" is an empty value)
    item    := "{" target "}"           (a nested target: -host, -targets)
             | '"' chars '"'            (a quoted string; \\" and \\\\ escape)
             | bare                     (no blank, comma, brace, quote or backslash)

``KIND`` is ``[a-z][a-z0-9_]*`` and ``NAME`` is ``[a-z][a-z0-9_-]*``.  Blanks
separate options.  This module knows nothing about kinds or types: it turns
text into a :class:`RawTarget` and values back into text, and the
:mod:`aot.target.target` module gives the items their meaning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aot.target.errors import TargetError

_KIND = re.compile(r"[a-z][a-z0-9_]*")
_NAME = re.compile(r"[a-z][a-z0-9_-]*")
_BARE = re.compile(r'[^\s,{}"\\]+')
_NEEDS_QUOTES = re.compile(r'[\s,{}"\\]')


@dataclass
class RawTarget:
    """A parsed but not yet validated target: kind and options in order.

    An option's value is ``None`` when written without ``=`` (a flag), else
    the list of its comma-separated items: strings or nested raw targets.
    """

    kind: str
    options: list[tuple[str, list | None]]


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, what: str) -> TargetError:
        shown = self.text[: self.pos] + " <here> " + self.text[self.pos :]
        return TargetError(f"bad target string: {what}: {shown.strip()!r}")

    def skip_blanks(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def match(self, pattern: re.Pattern) -> str | None:
        m = pattern.match(self.text, self.pos)
        if not m:
            return None
        self.pos = m.end()
        return m.group()

    def target(self) -> RawTarget:
        self.skip_blanks()
        kind = self.match(_KIND)
        if kind is None:
            raise self.fail("expected a target kind")
        options: list[tuple[str, list | None]] = []
        while True:
            had_blank = self.peek().isspace()
            self.skip_blanks()
            if self.peek() in ("", "}"):
                return RawTarget(kind, options)
            if not had_blank:
                raise self.fail("expected a blank between options")
            if self.peek() != "-":
                raise self.fail("expected an option starting with '-'")
            self.pos += 1
            name = self.match(_NAME)
            if name is None:
                raise self.fail("expected an option name after '-'")
            if self.peek() == "=":
                self.pos += 1
                options.append((name, self.value()))
            else:
                options.append((name, None))

    def value(self) -> list:
        if self.peek() == "" or self.peek().isspace() or self.peek() == "}":
            return []
        items = [self.item()]
        while self.peek() == ",":
            self.pos += 1
            items.append(self.item())
        return items

    def item(self) -> str | RawTarget:
        c = self.peek()
        if c == "{":
            self.pos += 1
            nested = self.target()
            self.skip_blanks()
            if self.peek() != "}":
                raise self.fail("expected '}' closing a nested target")
            self.pos += 1
            return nested
        if c == '"':
            return self.quoted()
        bare = self.match(_BARE)
        if bare is None:
            raise self.fail("expected a value")
        return bare

    def quoted(self) -> str:
        self.pos += 1
        out = []
        while True:
            c = self.peek()
            if c == "":
                raise self.fail("unterminated quoted string")
            self.pos += 1
            if c == '"':
                return "".join(out)
            if c == "\\":
                nxt = self.peek()
                if nxt not in ('"', "\\"):
                    raise self.fail('only \\" and \\\\ may be escaped')
                self.pos += 1
                c = nxt
            out.append(c)


def parse(text: str) -> RawTarget:
    """Parse a target string; a :class:`TargetError` points at the bad spot."""
    parser = _Parser(text)
    raw = parser.target()
    parser.skip_blanks()
    if parser.pos != len(text):
        raise parser.fail("unexpected text")
    return raw


def quote(value: str) -> str:
    """Print one string item, quoted only when the grammar requires it."""
    if value and not _NEEDS_QUOTES.search(value):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
