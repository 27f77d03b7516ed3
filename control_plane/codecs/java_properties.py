"""Java properties text (``java.util.Properties.load``): comments with ``#`` or ``!``, ``=``/``:``/white-space
separators, backslash line continuations and escapes. Pure: the worker's properties file
(``control_plane.worker_properties``) and ``FileConfigProvider``'s files (``rules.config_providers``) are
read with it, as Java reads both.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _logical_lines(text: str) -> Iterator[str]:
    pending = ""
    # Properties.load ends lines at \n, \r and \r\n only (str.splitlines also splits at \f, \x85 ...)
    for raw in re.split(r"\r\n|\r|\n", text):
        line = raw.lstrip(" \t\f")
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:  # an odd number of backslashes continues the line
            pending += line[:-1]
            continue
        yield pending + line
        pending = ""
    if pending:
        yield pending


def _unescape(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "u" and i + 6 <= len(text):
                try:
                    out.append(chr(int(text[i + 2 : i + 6], 16)))
                    i += 6
                    continue
                except ValueError:
                    pass
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _split(line: str) -> tuple[str, str]:
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\":
            i += 2
            continue
        if ch in "=: \t\f":
            break
        i += 1
    key, j = line[:i], i
    while j < len(line) and line[j] in " \t\f":
        j += 1
    if j < len(line) and line[j] in "=:":  # at most one separator character, then white space
        j += 1
    rest = line[j:].lstrip(" \t\f")
    return _unescape(key), _unescape(rest)


def parse_properties(text: str) -> dict[str, str]:
    """Parse the text of a Java properties file; later keys win, as in ``Properties.load``."""
    return dict(_split(line) for line in _logical_lines(text))


__all__ = ["parse_properties"]
