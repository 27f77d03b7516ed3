"""Sets of code points as sorted disjoint intervals, the classes Java defines with them, and their
Python spelling (``java_regex``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

MAX_CODE_POINT = 0x10FFFF


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
