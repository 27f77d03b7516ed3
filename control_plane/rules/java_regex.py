"""``java.util.regex.Pattern`` syntax, translated to an equivalent Python :mod:`re` pattern (pure).

Connect compiles topic-creation include/exclude lists (and other patterns) with ``Pattern.compile`` and
tests them with ``Matcher.matches()``: a whole-input match. :func:`translate` parses a Java pattern the way
Java 17's ``Pattern`` parser does (``expr``/``sequence``/``atom``/``closure``/``group0``/``clazz``/
``range``/``escape``, the ``RemoveQEQuoting`` pre-pass, the ``COMMENTS`` whitespace rules) and emits a
Python pattern with the same full-match semantics, or raises:

* :class:`JavaPatternSyntaxError` where Java throws ``PatternSyntaxException`` (same description; the index
  is Java's ``cursor - 1``, counted in code points after ``\\Q...\\E`` quoting), or
* :class:`UnsupportedJavaRegex` for what Java accepts but the sidecar does not translate exactly (say why).

Nothing is guessed: every character class is computed as an explicit set of code points (so ``\\d``,
``\\w``, ``\\s``, the POSIX ``\\p{...}`` classes, nested unions ``[a[b]]``, intersections ``&&`` and
ASCII-only ``(?i)`` case folding are exact, independent of Python's Unicode tables), ``.``, ``$`` and
``\\Z`` use Java's line terminators, and inline flags are tracked with Java's scoping (a flag set by
``(?i)`` lasts to the end of the enclosing group, across ``|``). Python 3.11 provides the possessive
quantifiers and atomic groups. Refused: backreferences (``\\1``, ``\\k<name>``), ``\\b``/``\\B`` (their
meaning changed in Java 19), ``\\G``, ``\\R``, ``\\X``, ``\\N{...}``, ``^``/``$`` under ``(?m)``, the flags
``u``, ``U`` and ``c``, Unicode properties (``\\p{L}``, ``\\p{IsLatin}``, ``\\p{InGreek}``,
``\\p{javaLowerCase}``...: they depend on the JDK's Unicode tables), surrogate escapes, and lookbehinds
Python cannot compile (not fixed-width).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

MAX_CODE_POINT = 0x10FFFF

# java.util.regex.Pattern flag bits (only the ones an inline group can set)
_I, _D, _M, _S, _U_CASE, _X, _U_CLASS, _C = 1, 2, 4, 8, 16, 32, 64, 128
_FLAG_LETTERS = {"i": _I, "d": _D, "m": _M, "s": _S, "u": _U_CASE, "x": _X, "U": _U_CLASS | _U_CASE, "c": _C}
_FLAG_NAMES = {"i": "CASE_INSENSITIVE", "d": "UNIX_LINES", "m": "MULTILINE", "s": "DOTALL", "x": "COMMENTS"}
_REFUSED_FLAGS = {"u": "UNICODE_CASE", "U": "UNICODE_CHARACTER_CLASS", "c": "CANON_EQ"}


class JavaRegexProblem(ValueError):
    """A Java regular expression the sidecar cannot use: a syntax error, or not supported."""

    def __init__(self, message: str, *, pattern: str, description: str, index: int) -> None:
        super().__init__(message)
        self.pattern = pattern
        self.description = description
        self.index = index


class JavaPatternSyntaxError(JavaRegexProblem):
    """What ``Pattern.compile`` throws as ``PatternSyntaxException``; ``str()`` is Java's ``getMessage()``."""

    def __init__(self, description: str, pattern: str, index: int) -> None:
        message = f"{description} near index {index}\n{pattern}"
        if 0 <= index < len(pattern):
            message += "\n" + " " * index + "^"
        super().__init__(message, pattern=pattern, description=description, index=index)


class UnsupportedJavaRegex(JavaRegexProblem):
    """Valid Java (as far as the sidecar can tell) that the sidecar does not translate exactly."""

    def __init__(self, construct: str, pattern: str, index: int) -> None:
        super().__init__(
            f"not supported by the sidecar: {construct} (at index {index} of {pattern!r})",
            pattern=pattern,
            description=construct,
            index=index,
        )


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


# ----------------------------------------------------------------------------------------------------
# Sets of code points, as sorted disjoint inclusive intervals.

Intervals = tuple[tuple[int, int], ...]


def _norm(ranges: Iterable[tuple[int, int]]) -> Intervals:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(r for r in ranges if r[0] <= r[1]):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


def _union(a: Intervals, b: Intervals) -> Intervals:
    return _norm((*a, *b))


def _negate(a: Intervals) -> Intervals:
    out: list[tuple[int, int]] = []
    start = 0
    for lo, hi in a:
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    if start <= MAX_CODE_POINT:
        out.append((start, MAX_CODE_POINT))
    return tuple(out)


def _intersect(a: Intervals, b: Intervals) -> Intervals:
    return _negate(_union(_negate(a), _negate(b)))


def _ascii_case_closed(a: Intervals) -> Intervals:
    """Java's ASCII-only case folding (``CIRange``, ``BitClass.add`` and ``SingleI`` without UNICODE_CASE)."""
    extra: list[tuple[int, int]] = []
    for lo, hi in a:
        for base, other in ((0x41, 0x61), (0x61, 0x41)):  # A-Z <-> a-z
            lo2, hi2 = max(lo, base), min(hi, base + 25)
            if lo2 <= hi2:
                extra.append((lo2 - base + other, hi2 - base + other))
    return _norm((*a, *extra))


_DIGIT = ((0x30, 0x39),)
_LOWER = ((0x61, 0x7A),)
_UPPER = ((0x41, 0x5A),)
_ALPHA = _union(_LOWER, _UPPER)
_ALNUM = _union(_ALPHA, _DIGIT)
_WORD = _union(_ALNUM, ((0x5F, 0x5F),))
_SPACE = _norm(((0x09, 0x0D), (0x20, 0x20)))
_PUNCT = _norm(((0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)))
_HORIZONTAL = _norm(
    (
        (0x20, 0x20),
        (0x09, 0x09),
        (0xA0, 0xA0),
        (0x1680, 0x1680),
        (0x180E, 0x180E),
        (0x2000, 0x200A),
        (0x202F, 0x202F),
        (0x205F, 0x205F),
        (0x3000, 0x3000),
    )
)
_VERTICAL = _norm(((0x0A, 0x0D), (0x85, 0x85), (0x2028, 0x2029)))
_LINE_TERMINATORS = _norm(((0x0A, 0x0A), (0x0D, 0x0D), (0x85, 0x85), (0x2028, 0x2029)))
_ALL: Intervals = ((0, MAX_CODE_POINT),)

# The POSIX classes of java.util.regex.CharPredicates.forProperty (US-ASCII only).
_POSIX: dict[str, Intervals] = {
    "ASCII": ((0x00, 0x7F),),
    "Alnum": _ALNUM,
    "Alpha": _ALPHA,
    "Blank": _norm(((0x20, 0x20), (0x09, 0x09))),
    "Cntrl": _norm(((0x00, 0x1F), (0x7F, 0x7F))),
    "Digit": _DIGIT,
    "Graph": _union(_ALNUM, _PUNCT),
    "Lower": _LOWER,
    "Print": ((0x20, 0x7E),),
    "Punct": _PUNCT,
    "Space": _SPACE,
    "Upper": _UPPER,
    "XDigit": _norm(((0x30, 0x39), (0x41, 0x46), (0x61, 0x66))),
}

# Property names Java knows whose sets come from the JDK's Unicode tables: refused, never approximated.
_UNICODE_CATEGORIES = frozenset(
    (
        *("Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Me", "Mc", "Nd", "Nl", "No", "Zs", "Zl", "Zp", "Cc", "Cf"),
        *("Co", "Cs", "Pd", "Ps", "Pe", "Pc", "Po", "Sm", "Sc", "Sk", "So", "Pi", "Pf", "L", "M", "N", "Z"),
        *("C", "P", "S", "LC", "LD", "L1", "all"),
    )
)


def _emit_char(cp: int) -> str:
    if cp < 0x80 and chr(cp).isalnum():
        return chr(cp)
    if cp <= 0xFF:
        return f"\\x{cp:02x}"
    if cp <= 0xFFFF:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


def _emit_set(a: Intervals) -> str:
    if not a:
        return f"[^\\x00-{_emit_char(MAX_CODE_POINT)}]"
    if len(a) == 1 and a[0][0] == a[0][1]:
        return _emit_char(a[0][0])
    parts = []
    for lo, hi in a:
        if lo == hi:
            parts.append(_emit_char(lo))
        elif hi == lo + 1:
            parts.append(_emit_char(lo) + _emit_char(hi))
        else:
            parts.append(f"{_emit_char(lo)}-{_emit_char(hi)}")
    return "[" + "".join(parts) + "]"


# A class being parsed is a lazy predicate: Java's ``clazz`` unions reference the class's mutable
# ``BitClass``, so characters added to it after an ``&&`` still count in the operands built before.
Pred = Callable[[], Intervals]


class _Bits:
    def __init__(self) -> None:
        self.chars: set[int] = set()

    def pred(self) -> Pred:
        return lambda: _norm((c, c) for c in self.chars)


def _const(a: Intervals) -> Pred:
    return lambda: a


def _p_union(a: Pred, b: Pred) -> Pred:
    return lambda: _union(a(), b())


def _p_and(a: Pred, b: Pred) -> Pred:
    return lambda: _intersect(a(), b())


def _p_not(a: Pred) -> Pred:
    return lambda: _negate(a())


# ----------------------------------------------------------------------------------------------------


def _remove_qe_quoting(cps: list[int]) -> tuple[list[int], bool]:
    """Java's ``Pattern.RemoveQEQuoting`` pre-pass: ``\\Q...\\E`` becomes escaped literals. Returns the new
    code points and whether a ``\\Q`` was still open at the end (it then quotes the rest of the pattern)."""
    n = len(cps)
    i = 0
    while i < n - 1:
        if cps[i] != 0x5C:
            i += 1
        elif cps[i + 1] != 0x51:
            i += 2
        else:
            break
    if i >= n - 1:
        return cps, False
    out = cps[:i]
    i += 2
    in_quote = True
    begin_quote = True
    while i < n:
        c = cps[i]
        i += 1
        if c >= 0x80 or chr(c).isalpha():
            out.append(c)
        elif 0x30 <= c <= 0x39:
            if begin_quote:
                out.extend((0x5C, ord("x"), ord("3")))  # so a preceding escape cannot absorb the digit
            out.append(c)
        elif c != 0x5C:
            if in_quote:
                out.append(0x5C)
            out.append(c)
        elif in_quote:
            if i < n and cps[i] == ord("E"):
                i += 1
                in_quote = False
            else:
                out.extend((0x5C, 0x5C))
        else:
            if i < n and cps[i] == ord("Q"):
                i += 1
                in_quote = True
                begin_quote = True
                continue
            out.append(c)
            if i != n:
                out.append(cps[i])
                i += 1
        begin_quote = False
    return out, in_quote


def _is_ascii_space(ch: int) -> bool:
    return 0x09 <= ch <= 0x0D or ch == 0x20


def _is_hex(ch: int) -> bool:
    return 0x30 <= ch <= 0x39 or 0x41 <= ch <= 0x46 or 0x61 <= ch <= 0x66


def _is_ascii_alpha(ch: int) -> bool:
    return 0x41 <= ch <= 0x5A or 0x61 <= ch <= 0x7A


def _is_ascii_digit(ch: int) -> bool:
    return 0x30 <= ch <= 0x39


class _Parser:
    """One parse of one pattern; the cursor discipline (peek/read/next/skip/unread) mirrors Java's."""

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

    # --- grammar -----------------------------------------------------------------------------------
    def compile(self) -> str:
        body = self.expr()
        if self.cursor != self.plen:
            if self.peek() == 0x29:
                raise self.error("Unmatched closing ')'")
            raise self.error("Unexpected internal error")
        return body

    def expr(self) -> str:
        branches = []
        while True:
            branches.append(self.sequence())
            if self.peek() != 0x7C:
                break
            self.next()
        return "|".join(branches)

    def sequence(self) -> str:
        out: list[str] = []
        while True:
            ch = self.peek()
            if ch == 0x28:  # (
                group = self.group0()
                if group is not None:
                    out.append(group)
                continue
            if ch == 0x5B:  # [
                node = _emit_set(self.clazz(True)())
            elif ch == 0x5C:  # \
                ch = self.next_escaped()
                if ch in (0x70, 0x50):  # p P
                    node = self._property_atom(ch)
                else:
                    self.unread()
                    node = self.atom()
            elif ch == 0x5E:  # ^
                self.next()
                if self.has(_M):
                    self.refuse("^ under MULTILINE (?m)")
                node = "(?:\\A)"
            elif ch == 0x24:  # $
                self.next()
                if self.has(_M):
                    self.refuse("$ under MULTILINE (?m)")
                node = self._dollar()
            elif ch == 0x2E:  # .
                self.next()
                if self.has(_S):
                    node = _emit_set(_ALL)
                elif self.has(_D):
                    node = _emit_set(_negate(((0x0A, 0x0A),)))
                else:
                    node = _emit_set(_negate(_LINE_TERMINATORS))
            elif ch in (0x7C, 0x29):  # | )
                break
            elif ch in (0x3F, 0x2A, 0x2B):  # ? * +
                self.next()
                raise self.error(f"Dangling meta character '{chr(ch)}'")
            elif ch == 0 and self.cursor >= self.plen:
                break
            else:
                node = self.atom()
            out.append(self.closure(node))
        return "".join(out)

    def _dollar(self) -> str:
        if self.has(_D):
            return "(?=\\n?\\Z)"
        return "(?=\\Z|\\r\\n\\Z|[\\r\\x85\\u2028\\u2029]\\Z|(?<!\\r)\\n\\Z)"

    def _property_atom(self, ch: int) -> str:
        complement = ch == 0x50
        one_letter = True
        ch = self.next()
        if ch != 0x7B:
            self.unread()
        else:
            one_letter = False
        return _emit_set(self.family(one_letter, complement)())

    def atom(self) -> str:
        """One literal character or one escape (Java's ``atom`` collects a slice; a quantifier after it
        applies to its last character only, which is the same as one character at a time)."""
        ch = self.peek()
        if ch == 0x7B:  # '{' where an atom should be: Java quantifies an empty atom
            return ""
        if ch == 0x5C:
            return self.escape_outside_class()
        if ch == 0 and self.cursor >= self.plen:
            return ""
        self.next()
        return self._literal(ch)

    def _literal(self, ch: int) -> str:
        if 0xD800 <= ch <= 0xDFFF:
            raise self.unsupported("a lone surrogate code unit")
        if self.has(_I) and ch < 0x80:
            return _emit_set(_ascii_case_closed(((ch, ch),)))
        return _emit_char(ch)

    def closure(self, node: str) -> str:
        ch = self.peek()
        if ch == 0x3F:  # ?
            return self._quantified(node, "?")
        if ch == 0x2A:  # *
            return self._quantified(node, "*")
        if ch == 0x2B:  # +
            return self._quantified(node, "+")
        if ch != 0x7B:
            return node
        ch = self.skip()
        if not _is_ascii_digit(ch):
            raise self.error("Illegal repetition")
        cmin = 0
        cmax: int | None
        limit = 0x7FFFFFFF
        while True:
            cmin = cmin * 10 + ch - 0x30
            if cmin > limit:
                raise self.error("Illegal repetition range")
            ch = self.read()
            if not _is_ascii_digit(ch):
                break
        if ch == 0x2C:  # ,
            ch = self.read()
            if ch == 0x7D:
                self.unread()
                return self._quantified(node, f"{{{cmin},}}")
            cmax = 0
            while _is_ascii_digit(ch):
                cmax = cmax * 10 + ch - 0x30
                if cmax > limit:
                    raise self.error("Illegal repetition range")
                ch = self.read()
        else:
            cmax = cmin
        if ch != 0x7D:
            raise self.error("Unclosed counted closure")
        if cmax < cmin:
            raise self.error("Illegal repetition range")
        self.unread()
        return self._quantified(node, f"{{{cmin},{cmax}}}")

    def _quantified(self, node: str, quantifier: str) -> str:
        # qtype(): the quantifier character is under the cursor; a following ? is lazy, + possessive
        ch = self.next()
        suffix = ""
        if ch == 0x3F:
            self.next()
            suffix = "?"
        elif ch == 0x2B:
            self.next()
            suffix = "+"
        if node == "":
            return ""
        return f"(?:{node}){quantifier}{suffix}"

    def group0(self) -> str | None:
        save = self.flags
        ch = self.next()
        if ch == 0x3F:  # ?
            ch = self.skip()
            if ch == 0x3A:  # (?:
                body = "(?:" + self.expr()
            elif ch in (0x3D, 0x21):  # (?= (?!
                body = ("(?=" if ch == 0x3D else "(?!") + self.expr()
            elif ch == 0x3E:  # (?>
                body = "(?>" + self.expr()
            elif ch == 0x3C:  # (?<
                ch = self.read()
                if ch not in (0x3D, 0x21):
                    name = self.groupname(ch)
                    if name in self.names:
                        raise self.error(f"Named capturing group <{name}> is already defined")
                    self.names.append(name)
                    self.groups += 1
                    body = f"(?P<{name}>" + self.expr()
                else:
                    # Java wants an "obvious maximum length", Python a fixed width: what Python cannot
                    # compile is refused as unsupported (translate's last step)
                    body = ("(?<=" if ch == 0x3D else "(?<!") + self.expr()
            elif ch in (0x24, 0x40):  # (?$ (?@
                raise self.error("Unknown group type")
            else:
                self.unread()
                self.add_flags()
                ch = self.read()
                if ch == 0x29:
                    return None  # inline modifier only: it lasts to the end of the enclosing group
                if ch != 0x3A:
                    raise self.error("Unknown inline modifier")
                body = "(?:" + self.expr()
        else:
            self.groups += 1
            body = "(" + self.expr()
        self.accept(0x29, "Unclosed group")
        self.flags = save
        return self.closure(body + ")")

    def groupname(self, ch: int) -> str:
        if not _is_ascii_alpha(ch):
            raise self.error("capturing group name does not start with a Latin letter")
        name = []
        while True:
            name.append(chr(ch))
            ch = self.read()
            if not (_is_ascii_alpha(ch) or _is_ascii_digit(ch)):
                break
        if ch != 0x3E:
            raise self.error("named capturing group is missing trailing '>'")
        return "".join(name)

    def add_flags(self) -> None:
        ch = self.peek()
        turning_on = True
        while True:
            letter = chr(ch) if 0 < ch < 0x80 else ""
            if letter in _FLAG_LETTERS:
                if turning_on and letter in _REFUSED_FLAGS:
                    self.cursor += 1
                    self.refuse(f"inline flag {letter} ({_REFUSED_FLAGS[letter]})")
                    self.cursor -= 1
                if turning_on:
                    self.flags |= _FLAG_LETTERS[letter]
                else:
                    self.flags &= ~_FLAG_LETTERS[letter]
            elif letter == "-" and turning_on:
                turning_on = False
            else:
                return
            ch = self.next()

    # --- escapes -----------------------------------------------------------------------------------
    def escape_outside_class(self) -> str:
        start = self.cursor
        ch = self.skip()
        cls = self._class_escape(ch)
        if cls is not None:
            return _emit_set(cls)
        if 0x31 <= ch <= 0x39:
            number = ch - 0x30
            while _is_ascii_digit(self.peek()) and number * 10 + self.peek() - 0x30 <= self.groups:
                number = number * 10 + self.read() - 0x30
            self.refuse(f"backreference \\{number}")
            return ""
        if ch == ord("A"):
            return "(?:\\A)"
        if ch == ord("z"):
            return "(?:\\Z)"
        if ch == ord("Z"):
            return self._dollar()
        if ch == ord("b") and self.peek() == 0x7B:
            if self.skip() == ord("g"):
                if self.read() != 0x7D:
                    raise self.error("Illegal/unsupported escape sequence")
                self.refuse("\\b{g} grapheme boundary")
                return ""
            self.unread()
            self.unread()  # a plain \b, then a quantifier
        if ch in (ord("b"), ord("B"), ord("G"), ord("R"), ord("X")):
            self.refuse(
                {
                    "b": "\\b word boundary (Java 19 changed what it means)",
                    "B": "\\B non-word boundary (Java 19 changed what it means)",
                    "G": "\\G end of the previous match",
                    "R": "\\R linebreak matcher",
                    "X": "\\X grapheme cluster",
                }[chr(ch)]
            )
            return ""
        if ch == ord("k"):
            if self.read() != 0x3C:
                raise self.error("\\k is not followed by '<' for named capturing group")
            name = self.groupname(self.read())
            if name not in self.names:
                raise self.error(f"named capturing group <{name}> does not exist")
            self.refuse(f"backreference \\k<{name}>")
            return ""
        self.cursor = start
        return self._literal(self._char_escape(inclass=False, isrange=False))

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

    def range(self, bits: _Bits) -> Pred | None:
        ch = self.peek()
        if ch == 0x5C:
            ch = self.next_escaped()
            if ch in (0x70, 0x50):  # \p \P
                complement = ch == 0x50
                one_letter = True
                ch = self.next()
                if ch != 0x7B:
                    self.unread()
                else:
                    one_letter = False
                return self.family(one_letter, complement)
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
