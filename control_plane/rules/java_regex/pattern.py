"""A translated pattern, and the translation (``java_regex``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .cursor import _FLAG_LETTERS, _FLAG_NAMES, _X
from .errors import UnsupportedJavaRegex
from .parser import _Parser


@dataclass(frozen=True)
class JavaRegex:
    """A translated pattern. ``leaks`` names what, at the end of the pattern, would still act on text
    appended after it (an inline flag still on at the top level, an open ``\\Q``, a ``(?x)`` comment):
    when Connect joins a list with ``|``, that reaches the next entries."""

    java: str
    python: str
    group_names: tuple[str, ...]
    capturing_groups: int
    leaks: tuple[str, ...]

    def fullmatch(self, text: str) -> bool:
        """``Pattern.matcher(text).matches()``."""
        return _compiled(self.python).fullmatch(text) is not None


_CACHE: dict[str, re.Pattern[str]] = {}


def _compiled(python: str) -> re.Pattern[str]:
    found = _CACHE.get(python)
    if found is None:
        if len(_CACHE) > 4096:
            _CACHE.clear()
        found = _CACHE[python] = re.compile(python)
    return found


def translate(pattern: str) -> JavaRegex:
    """The Python equivalent of ``Pattern.compile(pattern)`` for use with ``re.fullmatch``.

    Raises :class:`JavaPatternSyntaxError` or :class:`UnsupportedJavaRegex`."""
    parser = _Parser(pattern)
    python = parser.compile()
    if parser.refused:
        raise parser.refused[0]
    leaks: list[str] = []
    on = [letter for letter, name in _FLAG_NAMES.items() if parser.flags & _FLAG_LETTERS[letter]]
    if on:
        leaks.append(f"inline flag (?{''.join(on)}) ({', '.join(_FLAG_NAMES[f] for f in on)}) is still on at the end")
    if parser.open_quote:
        leaks.append("\\Q without \\E quotes everything after it")
    if parser.comment_to_end and parser.flags & _X:
        leaks.append("a (?x) comment (#) runs to the end")
    try:
        _compiled(python)
    except re.error as exc:
        raise UnsupportedJavaRegex(f"Python's re cannot compile the translation ({exc})", pattern, 0) from exc
    return JavaRegex(pattern, python, tuple(parser.names), parser.groups, tuple(leaks))


def java_matches(pattern: str, text: str) -> bool:
    """``Pattern.matches(pattern, text)``; raises like :func:`translate`."""
    return translate(pattern).fullmatch(text)
