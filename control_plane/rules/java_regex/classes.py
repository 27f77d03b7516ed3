"""Character classes and escapes, as Java's ``clazz``, ``range``, ``family`` and ``escape`` parse them
(``java_regex``)."""

from __future__ import annotations

from .code_points import (
    _ALPHA,
    _DIGIT,
    _HORIZONTAL,
    _POSIX,
    _SPACE,
    _UNICODE_CATEGORIES,
    _VERTICAL,
    _WORD,
    MAX_CODE_POINT,
    Intervals,
    Pred,
    _ascii_case_closed,
    _Bits,
    _const,
    _negate,
    _p_and,
    _p_not,
    _p_union,
)
from .cursor import _I, _Cursor
from .quoting import _is_hex


class _ClassParser(_Cursor):
    def _class_escape(self, ch: int) -> Intervals | None:
        """The predefined classes (``\\d`` ...), as Java defines them without UNICODE_CHARACTER_CLASS."""
        return {
            ord("d"): _DIGIT,
            ord("D"): _negate(_DIGIT),
            ord("s"): _SPACE,
            ord("S"): _negate(_SPACE),
            ord("w"): _WORD,
            ord("W"): _negate(_WORD),
            ord("h"): _HORIZONTAL,
            ord("H"): _negate(_HORIZONTAL),
            ord("v"): _VERTICAL,
            ord("V"): _negate(_VERTICAL),
        }.get(ch)

    def _char_escape(self, *, inclass: bool, isrange: bool) -> int:
        """An escape that stands for one character (cursor on the backslash); Java's ``escape`` for the
        rest, including its errors."""
        ch = self.skip()
        simple = {"a": 0x07, "e": 0x1B, "f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09}
        letter = chr(ch) if 0 < ch < 0x80 else ""
        if letter in simple:
            return simple[letter]
        if letter == "0":
            return self._octal()
        if letter == "c":
            if self.cursor < self.plen:
                return self.read() ^ 64
            raise self.error("Illegal control escape sequence")
        if letter == "x":
            return self._hex()
        if letter == "u":
            return self._unicode()
        if letter == "v" and isrange:
            return 0x0B
        if letter == "N":
            raise self.unsupported("\\N{...} character name")
        if letter.isalpha() or (inclass and letter.isdigit()):
            raise self.error("Illegal/unsupported escape sequence")
        return ch

    def _octal(self) -> int:
        n = self.read()
        if 0x30 <= n <= 0x37:
            m = self.read()
            if 0x30 <= m <= 0x37:
                o = self.read()
                if 0x30 <= o <= 0x37 and n <= 0x33:
                    return (n - 0x30) * 64 + (m - 0x30) * 8 + (o - 0x30)
                self.unread()
                return (n - 0x30) * 8 + (m - 0x30)
            self.unread()
            return n - 0x30
        raise self.error("Illegal octal escape sequence")

    def _hex(self) -> int:
        n = self.read()
        if _is_hex(n):
            m = self.read()
            if _is_hex(m):
                return int(chr(n) + chr(m), 16)
        elif n == 0x7B and _is_hex(self.peek()):
            value = 0
            while True:
                n = self.read()
                if not _is_hex(n):
                    break
                value = value * 16 + int(chr(n), 16)
                if value > MAX_CODE_POINT:
                    raise self.error("Hexadecimal codepoint is too big")
            if n != 0x7D:
                raise self.error("Unclosed hexadecimal escape sequence")
            return value
        raise self.error("Illegal hexadecimal escape sequence")

    def _unicode(self) -> int:
        value = 0
        for _ in range(4):
            n = self.read()
            if not _is_hex(n):
                raise self.error("Illegal Unicode escape sequence")
            value = value * 16 + int(chr(n), 16)
        if 0xD800 <= value <= 0xDFFF:
            raise self.unsupported("\\u escapes of UTF-16 surrogates")
        return value

    # --- character classes -------------------------------------------------------------------------
    def clazz(self, consume: bool) -> Pred:
        prev: Pred | None = None
        curr: Pred | None = None
        bits = _Bits()
        has_bits = False
        negated = False
        ch = self.next()
        if ch == 0x5E and self._at(self.cursor - 1) == 0x5B:
            ch = self.next()
            negated = True
        while True:
            if ch == 0x5B:  # [ nested: union
                curr = self.clazz(True)
                prev = curr if prev is None else _p_union(prev, curr)
                ch = self.peek()
                continue
            if ch == 0x26:  # &
                ch = self.next()
                if ch == 0x26:
                    ch = self.next()
                    right: Pred | None = None
                    while ch not in (0x5D, 0x26):
                        if ch == 0x5B:
                            part = self.clazz(True)
                        else:
                            self.unread()
                            part = self.clazz(False)
                        right = part if right is None else _p_union(right, part)
                        ch = self.peek()
                    if has_bits:
                        if prev is None:
                            prev = curr = bits.pred()
                        else:
                            prev = _p_union(prev, bits.pred())
                        has_bits = False
                    if right is not None:
                        curr = right
                    if prev is None:
                        if right is None:
                            raise self.error("Bad class syntax")
                        prev = right
                    else:
                        assert curr is not None
                        prev = _p_and(prev, curr)
                    continue
                self.unread()
            elif ch == 0 and self.cursor >= self.plen:
                raise self.error("Unclosed character class")
            elif ch == 0x5D and (prev is not None or has_bits):  # ]
                if consume:
                    self.next()
                if prev is None:
                    prev = bits.pred()
                elif has_bits:
                    prev = _p_union(prev, bits.pred())
                return _p_not(prev) if negated else prev
            item = self.range(bits)
            if item is None:
                has_bits = True
            else:
                prev = item if prev is None else _p_union(prev, item)
            ch = self.peek()

    def _add_bit(self, bits: _Bits, ch: int) -> Pred | None:
        if ch < 256:
            if self.has(_I) and ch < 0x80:
                for lo, _ in _ascii_case_closed(((ch, ch),)):
                    bits.chars.add(lo)
            bits.chars.add(ch)
            return None
        if 0xD800 <= ch <= 0xDFFF:
            raise self.unsupported("a lone surrogate code unit")
        return _const(((ch, ch),))

    def _property_family(self, ch: int) -> Pred:
        """After ``\\p`` or ``\\P`` (``ch``): a one-letter name or ``{name}``, then Java's ``family``."""
        complement = ch == 0x50
        one_letter = True
        ch = self.next()
        if ch != 0x7B:
            self.unread()
        else:
            one_letter = False
        return self.family(one_letter, complement)

    def range(self, bits: _Bits) -> Pred | None:
        ch = self.peek()
        if ch == 0x5C:
            ch = self.next_escaped()
            if ch in (0x70, 0x50):  # \p \P
                return self._property_family(ch)
            isrange = self._at(self.cursor + 1) == 0x2D
            self.unread()
            cls = self._class_escape(ch)
            if cls is not None and not (ch == ord("v") and isrange):
                self.skip()
                return _const(cls)
            ch = self._char_escape(inclass=True, isrange=isrange)
        else:
            self.next()
        if self.peek() == 0x2D:  # -
            end_range = self._at(self.cursor + 1)
            if end_range == 0x5B:
                return self._add_bit(bits, ch)
            if end_range != 0x5D:
                self.next()
                m = self.peek()
                if m == 0x5C:
                    m = self._range_end_escape()
                else:
                    self.next()
                if m < ch:
                    raise self.error("Illegal character range")
                if 0xD800 <= m <= 0xDFFF or 0xD800 <= ch <= 0xDFFF:
                    raise self.unsupported("a range over UTF-16 surrogates")
                span: Intervals = ((ch, m),)
                return _const(_ascii_case_closed(span) if self.has(_I) else span)
        return self._add_bit(bits, ch)

    def _range_end_escape(self) -> int:
        """Java's ``escape(true, false, true)`` for the end of a range: a class escape gives -1."""
        ch = self._at(self.cursor + 1)
        if ch != ord("v") and self._class_escape(ch) is not None:
            self.skip()
            return -1
        return self._char_escape(inclass=True, isrange=True)

    def family(self, one_letter: bool, complement: bool) -> Pred:
        self.next()
        if one_letter:
            name = chr(self._at(self.cursor))
            self.read()
        else:
            start = self.cursor
            end = start
            while end < self.plen and self.temp[end] != 0x7D:
                end += 1
            self.cursor = end + 1
            if end >= self.plen:
                self.cursor = self.plen + 1
                raise self.error("Unclosed character family")
            if start == end:
                raise self.error("Empty character family")
            name = "".join(chr(c) for c in self.temp[start:end])
        found = self._property(name)
        return _const(_negate(found) if complement else found)

    def _property(self, name: str) -> Intervals:
        if name in _POSIX:
            if self.has(_I) and name in ("Lower", "Upper"):
                return _ALPHA
            return _POSIX[name]
        if "=" in name or name.startswith(("In", "Is", "java")) or name in _UNICODE_CATEGORIES:
            self.refuse(f"\\p{{{name}}} (a Unicode property: it depends on the JDK's Unicode tables)")
        else:
            self.refuse(f"\\p{{{name}}} (not a POSIX class the sidecar knows)")
        return ()
