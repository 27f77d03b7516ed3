"""Maven version ordering and version ranges, as Kafka Connect uses them for plugin versions (KIP-891).

A re-implementation (not a copy) of the classes of ``org.apache.maven:maven-artifact`` 3.9.15, the version
Connect 4.3.1 ships in its ``libs/``:

* :class:`ComparableVersion` mirrors ``org.apache.maven.artifact.versioning.ComparableVersion`` (ordering,
  equality, canonical form), which ``DefaultArtifactVersion`` delegates its ordering to;
* :class:`Restriction` mirrors ``org.apache.maven.artifact.versioning.Restriction``;
* :class:`VersionRange` mirrors ``org.apache.maven.artifact.versioning.VersionRange`` (``createFromVersionSpec``
  with its exact error messages, ``containsVersion``, ``matchVersion``, ``getRecommendedVersion``);
* :class:`InvalidVersionSpecificationError` mirrors ``InvalidVersionSpecificationException``.

Connect's own rules on top of Maven's (connect-runtime 4.3.1):

* :func:`parse_requirement` mirrors ``org.apache.kafka.connect.runtime.isolation.PluginUtils
  #connectorVersionRequirement``: ``None`` or exactly ``latest`` is no requirement; a spec that parses without
  restrictions of its own (a bare version, Maven's "soft" requirement) is wrapped in brackets and parsed again,
  so ``3.8`` means ``[3.8]`` and ``1.0,2.0`` means ``[1.0,2.0]``;
* :func:`select_version` mirrors ``DelegatingClassLoader#findPluginLoader``: the highest installed version
  inside the range, or the highest overall without a requirement;
* the messages Connect answers with: :func:`invalid_specification_message`,
  :func:`no_matching_version_message`, :func:`classpath_version_mismatch_message`.

Pure: no I/O. Checked against the real jars by ``tests/unit/test_maven_version_java.py``. Known differences, all
outside ASCII: Java lower-cases a capital sigma by a word-boundary rule of its own (``Σ`` -> ``ς`` or ``σ``),
Python by Unicode's Final_Sigma context, so a version holding ``Σ`` may parse differently; and the two runtimes'
Unicode tables (digits, case mappings) may differ by a version.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import zip_longest
from typing import TypeAlias

__all__ = [
    "EVERYTHING",
    "LATEST",
    "ComparableVersion",
    "InvalidVersionSpecificationError",
    "Restriction",
    "VersionRange",
    "classpath_version_mismatch_message",
    "invalid_specification_message",
    "java_trim",
    "no_matching_version_message",
    "parse_requirement",
    "select_version",
    "sort_versions",
]

LATEST = "latest"
"""The value of a ``*.plugin.version`` (or of ``?version=``) that means "no requirement"; compared exactly,
untrimmed, as ``PluginUtils.connectorVersionRequirement`` does."""

# ``String.trim()``: every char up to and including U+0020 (space and the C0 controls), nothing else.
_JAVA_TRIMMED = "".join(chr(c) for c in range(0x21))


def java_trim(text: str) -> str:
    """``java.lang.String#trim``: strips the characters ``<= ' '`` at both ends (not Unicode whitespace)."""
    return text.strip(_JAVA_TRIMMED)


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


class InvalidVersionSpecificationError(ValueError):
    """``org.apache.maven.artifact.versioning.InvalidVersionSpecificationException``.

    ``str(error)`` (= :attr:`message`) is Maven's message, e.g. ``Unbounded range: [1.0``: what Connect's
    ``PluginVersionValidator`` reports for a ``*.plugin.version`` config. :attr:`spec` is the spec as the caller
    gave it; :attr:`rest_message` is what ``GET /connector-plugins/{p}/config?version=`` answers (a 400).
    """

    def __init__(self, message: str, spec: str) -> None:
        super().__init__(message)
        self.message = message
        self.spec = spec

    @property
    def rest_message(self) -> str:
        return invalid_specification_message(self.spec)


@dataclass(frozen=True, slots=True)
class Restriction:
    """``org.apache.maven.artifact.versioning.Restriction``: one interval; a ``None`` bound is unbounded."""

    lower_bound: ComparableVersion | None
    lower_bound_inclusive: bool
    upper_bound: ComparableVersion | None
    upper_bound_inclusive: bool

    def contains_version(self, version: ComparableVersion) -> bool:
        """``containsVersion``."""
        if self.lower_bound is not None:
            comparison = self.lower_bound.compare_to(version)
            if comparison > 0 or (comparison == 0 and not self.lower_bound_inclusive):
                return False
        if self.upper_bound is not None:
            comparison = self.upper_bound.compare_to(version)
            if comparison < 0 or (comparison == 0 and not self.upper_bound_inclusive):
                return False
        return True

    def __str__(self) -> str:
        """``toString``: ``[1.0,2.0)``, ``(,1.0]``; a single version shows as ``[1.0,1.0]``."""
        lower = "" if self.lower_bound is None else str(self.lower_bound)
        upper = "" if self.upper_bound is None else str(self.upper_bound)
        opening = "[" if self.lower_bound_inclusive else "("
        closing = "]" if self.upper_bound_inclusive else ")"
        return f"{opening}{lower},{upper}{closing}"


EVERYTHING = Restriction(None, False, None, False)
"""``Restriction.EVERYTHING``: the restriction of a bare ("soft") version."""


def _parse_restriction(spec: str) -> Restriction:
    """``VersionRange.parseRestriction``: one bracketed set; its errors name this set, not the whole spec."""
    lower_inclusive = spec.startswith("[")
    upper_inclusive = spec.endswith("]")
    process = java_trim(spec[1:-1])
    index = process.find(",")
    if index < 0:
        if not lower_inclusive or not upper_inclusive:
            raise InvalidVersionSpecificationError(f"Single version must be surrounded by []: {spec}", spec)
        version = ComparableVersion(process)
        return Restriction(version, True, version, True)
    lower_text = java_trim(process[:index])
    upper_text = java_trim(process[index + 1 :])
    lower = ComparableVersion(lower_text) if lower_text else None
    upper = ComparableVersion(upper_text) if upper_text else None
    if lower is not None and upper is not None:
        result = upper.compare_to(lower)
        if result < 0 or (result == 0 and (not lower_inclusive or not upper_inclusive)):
            raise InvalidVersionSpecificationError(f"Range defies version ordering: {spec}", spec)
    return Restriction(lower, lower_inclusive, upper, upper_inclusive)


@dataclass(frozen=True, slots=True)
class VersionRange:
    """``org.apache.maven.artifact.versioning.VersionRange``: a recommended ("soft") version, or restrictions.

    Build it with :meth:`parse` (``createFromVersionSpec``) or :meth:`of_version` (``createFromVersion``).
    ``restrict``/``intersection`` are not mirrored (Connect does not use them).
    """

    recommended_version: ComparableVersion | None
    restrictions: tuple[Restriction, ...]

    @classmethod
    def parse(cls, spec: str) -> VersionRange:
        """``createFromVersionSpec``: ``1.0`` (soft), ``[1.0]``, ``[1.0,2.0)``, ``[1.5,)``, ``(,1.0],[1.2,)``.

        Raises :class:`InvalidVersionSpecificationError` with Maven's messages: ``Unbounded range: <spec>``,
        ``Ranges overlap: <spec>``, ``Only fully-qualified sets allowed in multiple set scenario: <spec>``,
        ``Single version must be surrounded by []: <set>``, ``Range defies version ordering: <set>``. Like
        Maven, the spec is not trimmed at its start (a leading blank makes it a soft version).
        """
        restrictions: list[Restriction] = []
        process = spec
        upper_bound: ComparableVersion | None = None
        while process.startswith(("[", "(")):
            index1 = process.find(")")
            index2 = process.find("]")
            index = index2
            if (index2 < 0 or index1 < index2) and index1 >= 0:
                index = index1
            if index < 0:
                raise InvalidVersionSpecificationError(f"Unbounded range: {spec}", spec)
            try:
                restriction = _parse_restriction(process[: index + 1])
            except InvalidVersionSpecificationError as error:
                raise InvalidVersionSpecificationError(error.message, spec) from None
            if upper_bound is not None and (
                restriction.lower_bound is None or restriction.lower_bound.compare_to(upper_bound) < 0
            ):
                raise InvalidVersionSpecificationError(f"Ranges overlap: {spec}", spec)
            restrictions.append(restriction)
            upper_bound = restriction.upper_bound
            process = java_trim(process[index + 1 :])
            if process.startswith(","):
                process = java_trim(process[1:])
        recommended = None
        if process:
            if restrictions:
                raise InvalidVersionSpecificationError(
                    f"Only fully-qualified sets allowed in multiple set scenario: {spec}", spec
                )
            recommended = ComparableVersion(process)
            restrictions.append(EVERYTHING)
        return cls(recommended, tuple(restrictions))

    @classmethod
    def of_version(cls, version: str) -> VersionRange:
        """``createFromVersion``: a recommended version and no restrictions (so it contains nothing)."""
        return cls(ComparableVersion(version), ())

    @property
    def has_restrictions(self) -> bool:
        """``hasRestrictions``: restrictions and no recommended version (a hard requirement)."""
        return bool(self.restrictions) and self.recommended_version is None

    def contains_version(self, version: ComparableVersion | str) -> bool:
        """``containsVersion``: inside one of the restrictions (a soft version's ``EVERYTHING`` contains all)."""
        if isinstance(version, str):
            version = ComparableVersion(version)
        return any(restriction.contains_version(version) for restriction in self.restrictions)

    def match_version(self, versions: Iterable[ComparableVersion]) -> ComparableVersion | None:
        """``matchVersion``: the highest of ``versions`` inside the range (the first of equal ones), or None."""
        matched: ComparableVersion | None = None
        for version in versions:
            if self.contains_version(version) and (matched is None or version.compare_to(matched) > 0):
                matched = version
        return matched

    def __str__(self) -> str:
        """``toString``: the recommended version as given, else the restrictions joined by ','."""
        if self.recommended_version is not None:
            return str(self.recommended_version)
        return ",".join(str(restriction) for restriction in self.restrictions)


# --- Connect's rules ----------------------------------------------------------------------------------------


def parse_requirement(spec: str | None) -> VersionRange | None:
    """``PluginUtils.connectorVersionRequirement`` (connect-runtime 4.3.1): a plugin version requirement.

    ``None`` or exactly ``latest`` -> ``None`` (no requirement: the highest installed version). Otherwise the
    spec is trimmed (``String.trim``) and parsed; a range with restrictions is the requirement as is, anything
    else (a bare version) is parsed again inside brackets: ``3.8`` -> ``[3.8]``, ``1.0,2.0`` -> ``[1.0,2.0]``,
    the empty string -> ``[]`` (exactly the versions equal to ``""``, such as ``0``).

    Raises :class:`InvalidVersionSpecificationError` carrying Maven's message (of the bracketed form when only
    that one fails, as in Connect) and ``spec`` as given.
    """
    if spec is None or spec == LATEST:
        return None
    trimmed = java_trim(spec)
    try:
        requirement = VersionRange.parse(trimmed)
        if requirement.has_restrictions:
            return requirement
        return VersionRange.parse(f"[{trimmed}]")
    except InvalidVersionSpecificationError as error:
        raise InvalidVersionSpecificationError(error.message, spec) from None


def sort_versions(versions: Iterable[str]) -> list[str]:
    """The versions in increasing Maven order (stable: equal versions keep their order), as Connect lists a
    plugin's versions (``PluginDesc#compareTo`` orders by ``encodedVersion`` after the class name)."""
    keyed = [(ComparableVersion(version), version) for version in versions]
    keyed.sort(key=lambda pair: pair[0])  # list.sort is stable and uses only __lt__ (compareTo < 0)
    return [version for _, version in keyed]


def select_version(requirement: VersionRange | None, installed: Iterable[str]) -> str | None:
    """The installed version Connect loads for a requirement, as ``DelegatingClassLoader#findPluginLoader``
    picks it: walking the versions in increasing order, the last one the range contains (any, without a
    requirement); among versions that compare equal (``1.0`` and ``1.0.0``) the last one given. None when
    nothing matches (Connect then fails with :func:`no_matching_version_message`)."""
    selected: str | None = None
    for version in sort_versions(installed):
        if requirement is None or requirement.contains_version(ComparableVersion(version)):
            selected = version
    return selected


def _java_list(items: Sequence[str]) -> str:
    return "[" + ", ".join(items) + "]"


def invalid_specification_message(spec: str) -> str:
    """``ConnectorPluginsResource#getConnectorConfigDef``: the 400 for an unparseable ``?version=`` (the value
    as received, untrimmed)."""
    return f"Invalid version specification: {spec}"


def no_matching_version_message(plugin: str, requirement: VersionRange, available: Sequence[str]) -> str:
    """``DelegatingClassLoader#findPluginLoader``: the ``VersionedPluginLoadingException`` for a plugin installed
    on the plugin path with no version inside the range; ``GET /connector-plugins/{p}/config`` answers it as a
    400 (``AbstractHerder#connectorPluginConfig``). ``plugin`` is the full class name (aliases resolved),
    ``available`` the installed versions in Connect's order (:func:`sort_versions`)."""
    return (
        f"Plugin {plugin} not found that matches the version range {requirement}, "
        f"available versions: {_java_list(available)}"
    )


def classpath_version_mismatch_message(plugin: str, version: str, requirement: VersionRange) -> str:
    """``DelegatingClassLoader#verifyClasspathVersionedPlugin``: the same failure for a plugin that is on the
    worker's classpath (not isolated), which has exactly one version."""
    return f"Plugin {plugin} has version {version} which does not match the required version range {requirement}"
