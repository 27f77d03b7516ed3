"""Maven version ranges and Kafka Connect's plugin version requirement on top of them (KIP-891).

A re-implementation (not a copy) of ``org.apache.maven.artifact.versioning.VersionRange``,
``Restriction`` and ``InvalidVersionSpecificationException`` of ``maven-artifact`` 3.9.15 (the version
Connect 4.3.1 ships), and of Connect's rules (connect-runtime 4.3.1): ``parse_requirement``
(``PluginUtils#connectorVersionRequirement``), ``select_version`` (``DelegatingClassLoader#findPluginLoader``)
and the messages Connect answers with. Versions and their order are :mod:`.maven_version`'s. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..codecs.javalang import java_trim
from .maven_version import LATEST, ComparableVersion


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


__all__ = [
    "EVERYTHING",
    "InvalidVersionSpecificationError",
    "Restriction",
    "VersionRange",
    "classpath_version_mismatch_message",
    "invalid_specification_message",
    "no_matching_version_message",
    "parse_requirement",
    "select_version",
    "sort_versions",
]
