"""The parse state of one pattern and Java's cursor primitives (``java_regex``); the inline flags."""

from __future__ import annotations

from .errors import JavaPatternSyntaxError, UnsupportedJavaRegex
from .quoting import _is_ascii_space, _remove_qe_quoting

# java.util.regex.Pattern flag bits (only the ones an inline group can set)
_I, _D, _M, _S, _U_CASE, _X, _U_CLASS, _C = 1, 2, 4, 8, 16, 32, 64, 128
_FLAG_LETTERS = {"i": _I, "d": _D, "m": _M, "s": _S, "u": _U_CASE, "x": _X, "U": _U_CLASS | _U_CASE, "c": _C}
_FLAG_NAMES = {"i": "CASE_INSENSITIVE", "d": "UNIX_LINES", "m": "MULTILINE", "s": "DOTALL", "x": "COMMENTS"}
_REFUSED_FLAGS = {"u": "UNICODE_CASE", "U": "UNICODE_CHARACTER_CLASS", "c": "CANON_EQ"}


class _Cursor:
    """The state of one parse: the code points after the quoting pre-pass, the cursor, the flags, the groups;
    the cursor primitives (peek/read/next/skip/unread) as Java's."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        cps, self.open_quote = _remove_qe_quoting([ord(c) for c in pattern])
        self.plen = len(cps)
        self.temp = [*cps, 0, 0]
        self.cursor = 0
        self.flags = 0
        self.groups = 0
        self.names: list[str] = []
        self.comment_to_end = False
        self.refused: list[UnsupportedJavaRegex] = []

    # --- Java's cursor primitives -----------------------------------------------------------------
    def _at(self, i: int) -> int:
        return self.temp[i] if 0 <= i < len(self.temp) else 0

    def has(self, flag: int) -> bool:
        return bool(self.flags & flag)

    def error(self, description: str) -> JavaPatternSyntaxError:
        return JavaPatternSyntaxError(description, self.pattern, self.cursor - 1)

    def unsupported(self, construct: str) -> UnsupportedJavaRegex:
        return UnsupportedJavaRegex(construct, self.pattern, max(self.cursor - 1, 0))

    def refuse(self, construct: str) -> None:
        """Note a construct the sidecar does not translate and go on parsing: a syntax error further on
        is what Java would report, so it wins."""
        self.refused.append(self.unsupported(construct))

    def _line_separator(self, ch: int) -> bool:
        if self.has(_D):
            return ch == 0x0A
        return ch in (0x0A, 0x0D, 0x85, 0x2028, 0x2029)

    def _past_whitespace(self, ch: int, consume: bool) -> int:
        # peekPastWhitespace / parsePastWhitespace
        while _is_ascii_space(ch) or ch == 0x23:
            while _is_ascii_space(ch):
                if consume:
                    ch = self._at(self.cursor)
                    self.cursor += 1
                else:
                    self.cursor += 1
                    ch = self._at(self.cursor)
            if ch == 0x23:
                ch = self._past_line(consume)
        return ch

    def _past_line(self, consume: bool) -> int:
        if consume:
            ch = self._at(self.cursor)
            self.cursor += 1
            while ch != 0 and not self._line_separator(ch):
                ch = self._at(self.cursor)
                self.cursor += 1
            if ch == 0 and self.cursor > self.plen:
                self.comment_to_end = True
                self.cursor = self.plen
                ch = self._at(self.cursor)
                self.cursor += 1
            return ch
        self.cursor += 1
        ch = self._at(self.cursor)
        while ch != 0 and not self._line_separator(ch):
            self.cursor += 1
            ch = self._at(self.cursor)
        if ch == 0 and self.cursor >= self.plen:
            self.comment_to_end = True
        if ch == 0 and self.cursor > self.plen:
            self.cursor = self.plen
            ch = self._at(self.cursor)
        return ch

    def peek(self) -> int:
        ch = self._at(self.cursor)
        if self.has(_X):
            ch = self._past_whitespace(ch, consume=False)
        return ch

    def read(self) -> int:
        ch = self._at(self.cursor)
        self.cursor += 1
        if self.has(_X):
            ch = self._past_whitespace(ch, consume=True)
        return ch

    def next(self) -> int:
        self.cursor += 1
        ch = self._at(self.cursor)
        if self.has(_X):
            ch = self._past_whitespace(ch, consume=False)
        return ch

    def next_escaped(self) -> int:
        self.cursor += 1
        return self._at(self.cursor)

    def skip(self) -> int:
        ch = self._at(self.cursor + 1)
        self.cursor += 2
        return ch

    def unread(self) -> None:
        self.cursor -= 1

    def accept(self, ch: int, description: str) -> None:
        test = self._at(self.cursor)
        self.cursor += 1
        if self.has(_X):
            test = self._past_whitespace(test, consume=True)
        if test != ch:
            raise self.error(description)
