"""control_plane.rules.maven_version: Maven's documented examples and the quirks Connect's KIP-891 inherits.

Every expectation here was checked against maven-artifact 3.9.15 (``java -cp maven-artifact-3.9.15.jar
org.apache.maven.artifact.versioning.ComparableVersion ...``) and connect-runtime 4.3.1; where Maven's own
documentation (pom.html, "Version Order Specification") disagrees with its code, the code wins and the id says
so. test_maven_version_java.py checks thousands of generated cases against the jars themselves.
"""

from __future__ import annotations

import pytest

from control_plane.codecs.javalang import java_trim
from control_plane.rules.maven_range import (
    EVERYTHING,
    InvalidVersionSpecificationError,
    Restriction,
    VersionRange,
    classpath_version_mismatch_message,
    invalid_specification_message,
    no_matching_version_message,
    parse_requirement,
    select_version,
    sort_versions,
)
from control_plane.rules.maven_version import LATEST, ComparableVersion


def V(text: str) -> ComparableVersion:
    return ComparableVersion(text)


# --- ComparableVersion -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        # pom.html "Version Order Specification", examples
        pytest.param("1", "1.1", id="doc-1<1.1"),
        pytest.param("1-snapshot", "1", id="doc-snapshot<release"),
        pytest.param("1", "1-sp", id="doc-release<sp"),
        pytest.param("1-foo2", "1-foo10", id="doc-foo2<foo10-numeric"),
        pytest.param("1-foo", "1-1", id="doc-qualifier<hyphen-number"),
        pytest.param("1-1", "1.1", id="doc-hyphen-number<dot-number"),
        pytest.param("1-ga", "1-sp", id="doc-ga<sp"),
        pytest.param("1-ga.1", "1-sp.1", id="doc-ga.1<sp.1"),
        pytest.param("1-sp-1", "1-ga-1", id="doc-sp-1<ga-1"),
        pytest.param("1-ga-1", "1-1", id="code-ga-1<1-1-doc-says-equal"),
        pytest.param("1.K", "1.7", id="doc-letter<number"),
        pytest.param("5.aardvark", "5.zebra", id="doc-unknown-lexical"),
        pytest.param("1.b", "1.α", id="doc-greek-alpha-is-unknown"),
        # the qualifier ladder
        pytest.param("1.0-alpha", "1.0-beta", id="alpha<beta"),
        pytest.param("1.0-beta", "1.0-milestone", id="beta<milestone"),
        pytest.param("1.0-milestone", "1.0-rc", id="milestone<rc"),
        pytest.param("1.0-rc", "1.0-snapshot", id="rc<snapshot"),
        pytest.param("1.0-SNAPSHOT", "1.0", id="snapshot<release"),
        pytest.param("1.0", "1.0-sp", id="release<sp"),
        pytest.param("1.0-sp", "1.0-aardvark", id="sp<unknown"),
        pytest.param("1.0-zebra", "1.0-1", id="unknown<hyphen-number"),
        pytest.param("1.0-rc1", "1.0-rc2", id="rc1<rc2"),
        pytest.param("1.0-rc9", "1.0-rc10", id="rc9<rc10"),
        pytest.param("2.0-rc1", "2.0", id="rc<release"),
        pytest.param("2.0-SNAPSHOT", "2.0", id="2.0-SNAPSHOT<2.0"),
        pytest.param("1.0.RC2", "1.0-RC3", id="javadoc-.RC2<-RC3"),
        pytest.param("1.0-RC3", "1.0.1", id="javadoc-RC3<1.0.1"),
        pytest.param("3.8.1", "3.10", id="numeric-not-lexical"),
        pytest.param("4.3.1", "4.3.1-1", id="build-number"),
        # IntItem < LongItem < BigIntegerItem by kind alone, even for zeros
        pytest.param("1.0.0.1", "1.0.0000000000.1", id="int-zero<long-zero"),
        pytest.param("1.2147483647", "1.2147483648", id="int-overflow-is-still-int"),
        pytest.param("1.999999999", "1.1000000000", id="int<long"),
        pytest.param("1.999999999999999999", "1.1000000000000000000", id="long<biginteger"),
        pytest.param("1.99999999999999999999999", "1.100000000000000000000000", id="biginteger"),
    ],
)
def test_order(lower: str, higher: str) -> None:
    assert V(lower).compare_to(V(higher)) == -1
    assert V(higher).compare_to(V(lower)) == 1
    assert V(lower) < V(higher)
    assert V(higher) > V(lower)
    assert V(lower) != V(higher)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        pytest.param("3.8", "3.8.0", id="trailing-zero"),
        pytest.param("3.8", "3.8.0.0-0", id="trailing-zeros"),
        pytest.param("1.ga", "1", id="doc-.ga"),
        pytest.param("1-ga", "1", id="doc--ga"),
        pytest.param("1-0", "1", id="doc--0"),
        pytest.param("1.0", "1", id="doc-.0"),
        pytest.param("1-final", "1", id="final"),
        pytest.param("1-release", "1", id="release"),
        pytest.param("1.foo", "1-foo", id="doc-.qualifier=-qualifier"),
        pytest.param("1-a1", "1-alpha-1", id="doc-a1"),
        pytest.param("1-b1", "1-beta-1", id="b1"),
        pytest.param("1-m1", "1-milestone-1", id="m1"),
        pytest.param("1.0-alpha1", "1.0-ALPHA1", id="doc-case-insensitive"),
        pytest.param("1.0-cr1", "1.0-rc1", id="cr=rc"),
        pytest.param("1.0.0.X1", "1.0.0-X1", id=".X=-X"),
        pytest.param("1.01", "1.1", id="leading-zero"),
        pytest.param("1..2", "1.0.2", id="empty-item-is-zero"),
        pytest.param("", "0", id="empty=0"),
    ],
)
def test_equal(left: str, right: str) -> None:
    assert V(left).compare_to(V(right)) == 0
    assert V(left) == V(right)
    assert hash(V(left)) == hash(V(right))
    assert V(left).canonical == V(right).canonical
    assert V(left) <= V(right) <= V(left)


def test_single_letters_mean_a_qualifier_only_before_a_digit() -> None:
    assert V("1-a") != V("1-alpha")
    assert V("1-a") > V("1-sp")  # an unknown qualifier
    assert V("1-a1") < V("1")


@pytest.mark.parametrize(
    ("version", "canonical"),
    [
        pytest.param("1.0-SNAPSHOT", "1-snapshot", id="snapshot"),
        pytest.param("1-a1", "1-alpha-1", id="a1"),
        pytest.param("1.0.0.X1", "1-x-1", id="X1"),
        pytest.param("1-ga-1", "1-1", id="ga-1"),
        pytest.param("1-sp.1", "1-sp.1", id="sp.1"),
        pytest.param("1.0.0000000000.1", "1.0.0.1", id="long-zero"),
        pytest.param("RC-SNAPSHOT", "rc-snapshot", id="qualifiers-only"),
        pytest.param("01.002", "1.2", id="leading-zeros"),
        pytest.param("", "", id="empty"),
        pytest.param("4.3.1", "4.3.1", id="plain"),
    ],
)
def test_canonical(version: str, canonical: str) -> None:
    assert V(version).canonical == canonical
    assert str(V(version)) == version  # toString is the version as given


def test_order_is_not_transitive_on_odd_strings() -> None:
    """MNG-5568: as in Java, 1 < 1.b-a < 1-a1 < 1 (Java's List.sort throws on such a set)."""
    assert V("1") < V("1.b-a") < V("1-a1") < V("1")


def test_sort_versions_is_maven_order_and_stable() -> None:
    assert sort_versions(["3.10", "3.8.0", "3.8", "3.9-SNAPSHOT", "3.9", "3.9-rc1"]) == [
        "3.8.0",
        "3.8",
        "3.9-rc1",
        "3.9-SNAPSHOT",
        "3.9",
        "3.10",
    ]


# --- VersionRange ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "inside", "outside"),
    [
        # VersionRange#createFromVersionSpec javadoc examples, and pom.html's
        pytest.param("[1.0]", ["1.0", "1", "1.0.0"], ["1.0.1", "1.0-SNAPSHOT"], id="exact"),
        pytest.param("[1.0,2.0)", ["1.0", "1.5", "2.0-SNAPSHOT", "2.0-rc1"], ["0.9", "2.0", "2.0.1"], id="half-open"),
        pytest.param("[1.0,2.0]", ["1.0", "2.0", "2.0.0"], ["2.0.1", "2.0-sp"], id="closed"),
        pytest.param("[1.5,)", ["1.5", "99"], ["1.4", "1.5-SNAPSHOT"], id="at-least"),
        pytest.param("(,1.0],[1.2,)", ["0.1", "1.0", "1.2", "3"], ["1.1", "1.2-rc1"], id="two-sets"),
        pytest.param("(,1.1),(1.1,)", ["1.0", "1.1.1", "1.1-SNAPSHOT"], ["1.1", "1.1.0"], id="all-but-one"),
        pytest.param("(1.0,2.0)", ["1.0.1", "1.5"], ["1.0", "2.0"], id="open"),
    ],
)
def test_range_membership(spec: str, inside: list[str], outside: list[str]) -> None:
    range_ = VersionRange.parse(spec)
    assert range_.has_restrictions
    assert range_.recommended_version is None
    for version in inside:
        assert range_.contains_version(version), version
    for version in outside:
        assert not range_.contains_version(V(version)), version


def test_soft_version_has_no_restrictions_of_its_own() -> None:
    range_ = VersionRange.parse("1.0")
    assert range_.recommended_version == V("1.0")
    assert range_.restrictions == (EVERYTHING,)
    assert not range_.has_restrictions
    assert range_.contains_version("0.1")  # EVERYTHING
    assert str(range_) == "1.0"


def test_of_version_contains_nothing() -> None:
    range_ = VersionRange.of_version("1.0")
    assert range_.restrictions == ()
    assert not range_.contains_version("1.0")


def test_empty_spec_is_an_empty_range() -> None:
    range_ = VersionRange.parse("")
    assert range_ == VersionRange(None, ())
    assert not range_.has_restrictions


@pytest.mark.parametrize(
    ("spec", "text"),
    [
        pytest.param("[1.0,2.0)", "[1.0,2.0)", id="half-open"),
        pytest.param("[1.0]", "[1.0,1.0]", id="exact-shows-both-bounds"),
        pytest.param("( , 1.0 ] , [ 1.2 , )", "(,1.0],[1.2,)", id="blanks-trimmed"),
        pytest.param("[1.0,\t2.0)", "[1.0,2.0)", id="tab-trimmed"),
        pytest.param("[1.0,),[0.5,0.7]", "[1.0,),[0.5,0.7]", id="unbounded-set-skips-overlap-check"),
        pytest.param("[1.0,2.0][3.0,4.0]", "[1.0,2.0],[3.0,4.0]", id="no-comma-between-sets"),
        pytest.param("[1,2,3]", "[1,2,3]", id="second-comma-is-part-of-the-upper-bound"),
    ],
)
def test_range_to_string(spec: str, text: str) -> None:
    assert str(VersionRange.parse(spec)) == text


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param("[1.0", "Unbounded range: [1.0", id="unbounded"),
        pytest.param("(1.0", "Unbounded range: (1.0", id="unbounded-open"),
        pytest.param("[1.0,2.0],[1.5,3.0]", "Ranges overlap: [1.0,2.0],[1.5,3.0]", id="overlap"),
        pytest.param("[1.0,2.0),(,3.0]", "Ranges overlap: [1.0,2.0),(,3.0]", id="overlap-unbounded-lower"),
        pytest.param(
            "[1.0],2.0",
            "Only fully-qualified sets allowed in multiple set scenario: [1.0],2.0",
            id="bare-after-set",
        ),
        pytest.param("(1.0)", "Single version must be surrounded by []: (1.0)", id="single-in-parentheses"),
        pytest.param("[1.0)", "Single version must be surrounded by []: [1.0)", id="single-half-open"),
        pytest.param(
            "[0.5,0.7],(1.0]", "Single version must be surrounded by []: (1.0]", id="message-names-the-set-only"
        ),
        pytest.param("[2.0,1.0]", "Range defies version ordering: [2.0,1.0]", id="reversed"),
        pytest.param("(1.0,1.0]", "Range defies version ordering: (1.0,1.0]", id="empty-open"),
        pytest.param("[1.0,1.0.0)", "Range defies version ordering: [1.0,1.0.0)", id="empty-by-maven-equality"),
        pytest.param("[1.0,2.0)x", "Only fully-qualified sets allowed in multiple set scenario: [1.0,2.0)x", id="tail"),
    ],
)
def test_range_errors(spec: str, message: str) -> None:
    with pytest.raises(InvalidVersionSpecificationError) as caught:
        VersionRange.parse(spec)
    assert str(caught.value) == message
    assert caught.value.message == message
    assert caught.value.spec == spec
    assert caught.value.rest_message == f"Invalid version specification: {spec}"


def test_match_version_is_the_highest_inside_and_the_first_of_equals() -> None:
    range_ = VersionRange.parse("[1.0,2.0)")
    candidates = [V("1.5"), V("2.0"), V("1.9.0"), V("1.9"), V("0.9")]
    assert range_.match_version(candidates) is candidates[2]
    assert VersionRange.parse("[3,)").match_version(candidates) is None


def test_restriction_to_string_and_contains() -> None:
    restriction = Restriction(V("1.0"), False, None, False)
    assert str(restriction) == "(1.0,)"
    assert restriction.contains_version(V("1.0.1"))
    assert not restriction.contains_version(V("1.0.0"))
    assert str(EVERYTHING) == "(,)"


def test_java_trim_strips_control_characters_not_unicode_blanks() -> None:
    assert java_trim("\x00\t [1.0] \x1f\n") == "[1.0]"
    assert java_trim("\u00a01.0\u2003") == "\u00a01.0\u2003"


# --- Connect's requirement (PluginUtils.connectorVersionRequirement) ---------------------------------------


@pytest.mark.parametrize(
    ("spec", "text"),
    [
        pytest.param("3.8", "[3.8,3.8]", id="bare-version-is-exact"),
        pytest.param("3.8.0", "[3.8.0,3.8.0]", id="bare-version-3.8.0"),
        pytest.param("1.0,2.0", "[1.0,2.0]", id="bare-pair-is-an-inclusive-range"),
        pytest.param("[1.0,2.0)", "[1.0,2.0)", id="range-as-is"),
        pytest.param(" [1.0,2.0) ", "[1.0,2.0)", id="trimmed"),
        pytest.param("\t3.8\n", "[3.8,3.8]", id="bare-trimmed"),
        pytest.param("(,4.0)", "(,4.0)", id="upper-only"),
        pytest.param(
            "[2.3.2,2.4),[2.4.2,2.5),[2.5.2,2.6),[2.6.1,)", "[2.3.2,2.4),[2.4.2,2.5),[2.5.2,2.6),[2.6.1,)", id="kip"
        ),
        pytest.param("LATEST", "[LATEST,LATEST]", id="latest-is-case-sensitive"),
        pytest.param(" latest", "[latest,latest]", id="latest-is-compared-before-trimming"),
        pytest.param("", "[,]", id="empty-is-exactly-the-empty-version"),
    ],
)
def test_requirement(spec: str, text: str) -> None:
    requirement = parse_requirement(spec)
    assert requirement is not None
    assert requirement.has_restrictions
    assert str(requirement) == text


@pytest.mark.parametrize("spec", [None, LATEST], ids=["none", "latest"])
def test_no_requirement(spec: str | None) -> None:
    assert parse_requirement(spec) is None


def test_requirement_quirks() -> None:
    exact = parse_requirement("3.8")
    assert exact is not None
    assert exact.contains_version("3.8.0")
    assert not exact.contains_version("3.8.1")
    inclusive = parse_requirement("1.0,2.0")
    assert inclusive is not None
    assert inclusive.contains_version("2.0")
    assert not inclusive.contains_version("2.0.1")
    half_open = parse_requirement("[1.0,2.0)")
    assert half_open is not None
    assert half_open.contains_version("2.0-SNAPSHOT")
    empty = parse_requirement("")
    assert empty is not None
    assert empty.contains_version("0")
    assert empty.contains_version("ga")
    assert not empty.contains_version("0.1")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param("[1.0", "Unbounded range: [1.0", id="unbounded"),
        pytest.param(" [1.0 ", "Unbounded range: [1.0", id="message-of-the-trimmed-spec"),
        pytest.param("[2.0,1.0]", "Range defies version ordering: [2.0,1.0]", id="reversed"),
        pytest.param("1.0]", "Only fully-qualified sets allowed in multiple set scenario: [1.0]]", id="wrapped-spec"),
        pytest.param("2.0,1.0", "Range defies version ordering: [2.0,1.0]", id="bare-pair-reversed"),
        # [1.0,[2.0]] closes at the first ']': the set [1.0,[2.0] has the bound "[2.0", a qualifier, below 1.0
        pytest.param("1.0,[2.0]", "Range defies version ordering: [1.0,[2.0]", id="mixed"),
        pytest.param("(", "Unbounded range: (", id="paren"),
    ],
)
def test_requirement_errors(spec: str, message: str) -> None:
    with pytest.raises(InvalidVersionSpecificationError) as caught:
        parse_requirement(spec)
    assert caught.value.message == message
    assert caught.value.spec == spec
    # ConnectorPluginsResource#getConnectorConfigDef answers the value as received, untrimmed
    assert caught.value.rest_message == f"Invalid version specification: {spec}"


def test_select_version() -> None:
    installed = ["3.9.0", "3.8.0", "4.0.0-SNAPSHOT", "3.8.1", "undefined"]
    assert select_version(None, installed) == "4.0.0-SNAPSHOT"
    assert select_version(parse_requirement("3.8"), installed) == "3.8.0"
    assert select_version(parse_requirement("[3.8,4.0)"), installed) == "4.0.0-SNAPSHOT"
    assert select_version(parse_requirement("[3.8,3.9.0)"), installed) == "3.8.1"
    assert select_version(parse_requirement("(,2.0)"), ["3.8.0", "4.0.0"]) is None
    # Connect's "undefined" (a plugin without a version) is a qualifier: below every number, so inside (,3.0)
    assert select_version(parse_requirement("(,3.0)"), installed) == "undefined"
    assert select_version(parse_requirement("[3.8,4.0)"), []) is None
    assert select_version(parse_requirement("[1.0]"), ["1.0", "1.0.0"]) == "1.0.0"  # last of equal ones


def test_connect_messages() -> None:
    requirement = parse_requirement("[3.8,3.9)")
    assert requirement is not None
    assert invalid_specification_message("[3.8") == "Invalid version specification: [3.8"
    assert (
        no_matching_version_message("org.example.Sink", requirement, sort_versions(["4.0.0", "3.7.0"]))
        == "Plugin org.example.Sink not found that matches the version range [3.8,3.9), available versions: "
        "[3.7.0, 4.0.0]"
    )
    assert (
        classpath_version_mismatch_message(
            "org.apache.kafka.connect.file.FileStreamSinkConnector", "4.3.1", requirement
        )
        == "Plugin org.apache.kafka.connect.file.FileStreamSinkConnector has version 4.3.1 which does not match the "
        "required version range [3.8,3.9)"
    )
