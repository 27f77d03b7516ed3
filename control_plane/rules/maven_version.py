"""Maven version ordering and version ranges, as Kafka Connect uses them for plugin versions (KIP-891).

A re-implementation (not a copy) of the classes of ``org.apache.maven:maven-artifact`` 3.9.15, the version
Connect 4.3.1 ships in its ``libs/``:

* :class:`ComparableVersion` mirrors ``org.apache.maven.artifact.versioning.ComparableVersion`` (ordering,
  equality, canonical form), which ``DefaultArtifactVersion`` delegates its ordering to;
* the ranges (``Restriction``, ``VersionRange``, ``InvalidVersionSpecificationException``) are in
  :mod:`.maven_range`, with Connect's rules below.

Connect's own rules on top of Maven's (connect-runtime 4.3.1), in :mod:`.maven_range`:

* :func:`parse_requirement` mirrors ``org.apache.kafka.connect.runtime.isolation.PluginUtils
  #connectorVersionRequirement``: ``None`` or exactly ``latest`` is no requirement; a spec that parses without
  restrictions of its own (a bare version, Maven's "soft" requirement) is wrapped in brackets and parsed again,
  so ``3.8`` means ``[3.8]`` and ``1.0,2.0`` means ``[1.0,2.0]``;
* :func:`select_version` mirrors ``DelegatingClassLoader#findPluginLoader``: the highest installed version
  inside the range, or the highest overall without a requirement;
* the messages Connect answers with: :func:`invalid_specification_message`,
  :func:`no_matching_version_message`, :func:`classpath_version_mismatch_message`.

Pure: no I/O. Checked against the real jars by ``tests/unit/rules/test_maven_version_java.py``. Known differences, all
outside ASCII: Java lower-cases a capital sigma by a word-boundary rule of its own (``Σ`` -> ``ς`` or ``σ``),
Python by Unicode's Final_Sigma context, so a version holding ``Σ`` may parse differently; and the two runtimes'
Unicode tables (digits, case mappings) may differ by a version.

Written by hand because KIP-891's versions must order and match as Connect's do, and Python's version
libraries implement PEP 440, not Maven's ``ComparableVersion`` (qualifiers, padding, ``-`` and ``.`` items);
checked against maven-artifact itself (tests/java/maven_version, tests/unit/rules/test_maven_version_java.py).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from itertools import zip_longest
from typing import TypeAlias

__all__ = ["LATEST", "ComparableVersion"]

LATEST = "latest"
"""The value of a ``*.plugin.version`` (or of ``?version=``) that means "no requirement"; compared exactly,
untrimmed, as ``PluginUtils.connectorVersionRequirement`` does."""

# --- ComparableVersion's items ------------------------------------------------------------------------------

# ``ComparableVersion.MAX_INTITEM_LENGTH`` / ``MAX_LONGITEM_LENGTH``: the digit count (after stripping leading
# '0's) picks IntItem, LongItem or BigIntegerItem, and items of different kinds never compare equal.
_MAX_INT_LENGTH = 9
_MAX_LONG_LENGTH = 18
_INT, _LONG, _BIG = 0, 1, 2

# ``StringItem.QUALIFIERS`` (index = rank) and ``StringItem.ALIASES``.
_QUALIFIERS = ("alpha", "beta", "milestone", "rc", "snapshot", "", "sp")
_ALIASES = {"ga": "", "final": "", "release": "", "cr": "rc"}
_SINGLE_LETTERS = {"a": "alpha", "b": "beta", "m": "milestone"}
_UNKNOWN_RANK = len(_QUALIFIERS)
_RELEASE_RANK: tuple[int, bytes] = (_QUALIFIERS.index(""), b"")


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


def _cmp_keys(left: tuple[int, bytes], right: tuple[int, bytes]) -> int:
    return (left > right) - (left < right)


@dataclass(frozen=True, slots=True)
class _Number:
    """``IntItem`` / ``LongItem`` / ``BigIntegerItem``: ``kind`` is which one, ``digits`` the value in ASCII
    decimal without leading zeros (kept as text: a ``BigInteger`` has no digit limit, Python's ``int()`` has)."""

    kind: int
    digits: str

    @property
    def is_null(self) -> bool:
        return self.digits == "0"

    def __str__(self) -> str:
        return self.digits


@lru_cache(maxsize=4096)
def _qualifier_rank(value: str) -> tuple[int, bytes]:
    """``StringItem.comparableQualifier``: known qualifiers by index, then unknown ones lexically, by UTF-16
    code units as ``String.compareTo`` orders them."""
    if value in _QUALIFIERS:
        return (_QUALIFIERS.index(value), b"")
    return (_UNKNOWN_RANK, value.encode("utf-16-be", "surrogatepass"))


@dataclass(frozen=True, slots=True)
class _Qualifier:
    """``StringItem``: the value after ``ALIASES`` (and a1/b1/m1 expansion) was applied."""

    value: str

    @property
    def is_null(self) -> bool:
        return _qualifier_rank(self.value) == _RELEASE_RANK

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class _Items:
    """``ListItem``: the whole version, or a sub-list opened by '-' (or by a letter/digit transition)."""

    items: tuple[_Item, ...]

    @property
    def is_null(self) -> bool:
        return not self.items

    def __str__(self) -> str:
        buffer = ""
        for item in self.items:
            if buffer:
                buffer += "-" if isinstance(item, _Items) else "."
            buffer += str(item)
        return buffer


_Item: TypeAlias = "_Number | _Qualifier | _Items"


def _compare(left: _Item, right: _Item | None) -> int:
    """``Item#compareTo`` of the three item kinds, ``right`` ``None`` standing for a missing item."""
    if isinstance(left, _Number):
        if right is None:
            return 0 if left.is_null else 1  # 1.0 == 1, 1.1 > 1
        if isinstance(right, _Number):
            if left.kind != right.kind:
                return -1 if left.kind < right.kind else 1
            return _cmp_keys((len(left.digits), left.digits.encode()), (len(right.digits), right.digits.encode()))
        return 1  # 1.1 > 1-sp, 1.1 > 1-1
    if isinstance(left, _Qualifier):
        if right is None:
            return _cmp_keys(_qualifier_rank(left.value), _RELEASE_RANK)  # 1-rc < 1, 1-ga > 1
        if isinstance(right, _Qualifier):
            return _cmp_keys(_qualifier_rank(left.value), _qualifier_rank(right.value))
        return -1  # 1.any < 1.1, 1.any < 1-1
    if right is None:
        # the whole list against nothing, not just its first item (MNG-6964)
        for item in left.items:
            result = _compare(item, None)
            if result != 0:
                return result
        return 0
    if isinstance(right, _Number):
        return -1  # 1-1 < 1.0.x
    if isinstance(right, _Qualifier):
        return 1  # 1-1 > 1-sp
    for mine, theirs in zip_longest(left.items, right.items):
        if mine is None:
            result = 0 if theirs is None else -_compare(theirs, None)
        else:
            result = _compare(mine, theirs)
        if result != 0:
            return result
    return 0


# --- parsing ------------------------------------------------------------------------------------------------


def _is_java_digit(char: str) -> bool:
    """``Character.isDigit(char)``: a decimal digit (Nd) of the Basic Multilingual Plane; Java walks UTF-16
    chars, so the two halves of a supplementary digit are no digits to it."""
    return char.isdecimal() and ord(char) <= 0xFFFF


def _number(buf: str) -> _Number:
    """``ComparableVersion.parseItem(true, buf)``: ``stripLeadingZeroes`` removes ASCII '0's only and keeps an
    all-zero run whole, and the remaining length picks the item kind."""
    stripped = buf.lstrip("0") or buf
    kind = _INT if len(stripped) <= _MAX_INT_LENGTH else _LONG if len(stripped) <= _MAX_LONG_LENGTH else _BIG
    ascii_digits = "".join(str(unicodedata.decimal(c)) for c in stripped) if not stripped.isascii() else stripped
    return _Number(kind, ascii_digits.lstrip("0") or "0")


def _qualifier(buf: str, followed_by_digit: bool) -> _Qualifier:
    """``new StringItem(buf, followedByDigit)``: a1 = alpha-1, b1 = beta-1, m1 = milestone-1, then aliases."""
    if followed_by_digit and len(buf) == 1:
        buf = _SINGLE_LETTERS.get(buf, buf)
    return _Qualifier(_ALIASES.get(buf, buf))


def _parse_item(is_digit: bool, buf: str) -> _Number | _Qualifier:
    return _number(buf) if is_digit else _qualifier(buf, False)


_Draft: TypeAlias = "list[_Number | _Qualifier | _Draft]"


def _normalize(draft: _Draft) -> None:
    """``ListItem.normalize``: drops null items (0, "", empty list) from the end, stepping over sub-lists."""
    for i in range(len(draft) - 1, -1, -1):
        item = draft[i]
        if isinstance(item, list):
            if not item:
                del draft[i]
        elif item.is_null:
            del draft[i]
        else:
            break


def _freeze(draft: _Draft) -> _Items:
    return _Items(tuple(_freeze(item) if isinstance(item, list) else item for item in draft))


def _parse(version: str) -> _Items:
    """``ComparableVersion.parseVersion``: '.' and '-' separate items, '-' (and a transition between letters and
    digits) opens a sub-list; an empty item is 0; a qualifier after a '.' is treated as after a '-'."""
    text = version.lower()  # toLowerCase(Locale.ENGLISH); differs from Java only for a capital sigma
    root: _Draft = []
    current = root
    stack = [root]
    is_digit = False
    start = 0

    def open_sublist() -> None:
        nonlocal current
        sub: _Draft = []
        current.append(sub)
        current = sub
        stack.append(sub)

    for i, char in enumerate(text):
        if char == "." or char == "-":
            current.append(_Number(_INT, "0") if i == start else _parse_item(is_digit, text[start:i]))
            start = i + 1
            if char == "-":
                open_sublist()
        elif _is_java_digit(char):
            if not is_digit and i > start:
                # 1.0.0.X1 < 1.0.0-X2: treat .X as -X for any string qualifier X
                if current:
                    open_sublist()
                current.append(_qualifier(text[start:i], True))
                start = i
                open_sublist()
            is_digit = True
        else:
            if is_digit and i > start:
                current.append(_parse_item(True, text[start:i]))
                start = i
                open_sublist()
            is_digit = False
    if len(text) > start:
        if not is_digit and current:
            open_sublist()
        current.append(_parse_item(is_digit, text[start:]))
    while stack:
        _normalize(stack.pop())
    return _freeze(root)


# --- the public classes -------------------------------------------------------------------------------------


class ComparableVersion:
    """``org.apache.maven.artifact.versioning.ComparableVersion`` (maven-artifact 3.9.15).

    Orders any string: '.'/'-' separated numbers and qualifiers, case-insensitive; ``alpha`` (``a1``) <
    ``beta`` (``b1``) < ``milestone`` (``m1``) < ``rc`` = ``cr`` < ``snapshot`` < release (``""`` = ``ga`` =
    ``final`` = ``release``) < ``sp`` < unknown qualifiers (lexically) < numbers; trailing zeros and release
    qualifiers are insignificant (``3.8 == 3.8.0 == 3.8-ga``).

    ``==`` and ``hash`` follow ``equals``/``hashCode`` (the normalized items), which agree with ``compareTo``
    being 0; ``str()`` is the version as given (``toString``), :attr:`canonical` is ``getCanonical``.

    Like Maven's, the order is not transitive on some odd strings (MNG-5568): ``1 < 1.b-a < 1-a1 < 1``. Sorting
    such a set gives some order (Java's ``List.sort`` throws instead); real plugin versions are not affected.
    """

    __slots__ = ("_items", "_value")

    def __init__(self, version: str) -> None:
        self._value = version
        self._items = _parse(version)

    @property
    def value(self) -> str:
        """The version string as given (``toString``)."""
        return self._value

    @property
    def canonical(self) -> str:
        """``getCanonical``: the normalized items, e.g. ``1.0-SNAPSHOT`` -> ``1-snapshot``."""
        return str(self._items)

    def compare_to(self, other: ComparableVersion) -> int:
        """``compareTo``: -1, 0 or 1."""
        return _sign(_compare(self._items, other._items))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ComparableVersion) and self._items == other._items

    def __hash__(self) -> int:
        return hash(self._items)

    def __lt__(self, other: ComparableVersion) -> bool:
        return self.compare_to(other) < 0

    def __le__(self, other: ComparableVersion) -> bool:
        return self.compare_to(other) <= 0

    def __gt__(self, other: ComparableVersion) -> bool:
        return self.compare_to(other) > 0

    def __ge__(self, other: ComparableVersion) -> bool:
        return self.compare_to(other) >= 0

    def __str__(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"ComparableVersion({self._value!r})"
