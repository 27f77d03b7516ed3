"""control_plane.rules.maven_version against the real jars: maven-artifact (the version Connect 4.3.1 depends on)
and connect-runtime 4.3.1's ``PluginUtils.connectorVersionRequirement``.

``tests/java/maven_version/MavenVersionOracle.java`` is compiled with javac against the jars that
``tests/java/maven_version/pom.xml`` resolves (with mvn, cached under ``.stack/cache/maven-version-oracle``, as
deploy/local/jars.py caches the stack's jars), then run once on a seeded batch of generated versions and specs.
Python has to agree on every answer: the order of every pair of a few hundred versions, of each version with its
next neighbours once all are sorted (by Python), of random pairs; canonical forms; and for each spec Maven's parse
(its ``toString``, ``hasRestrictions``, recommended version, or the exception's message), ``containsVersion`` and
``matchVersion`` on a sample around its bounds, and the same for Connect's requirement.

Pairs, not a sort on the Java side: ``ComparableVersion#compareTo`` is no total order on odd strings (``a3`` >
``A3-.RC`` while sorting puts them the other way round among others), and Java's TimSort throws on that.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from control_plane.rules.maven_range import InvalidVersionSpecificationError, VersionRange, parse_requirement
from control_plane.rules.maven_version import ComparableVersion
from tests.support.paths import ROOT

pytestmark = pytest.mark.java

ORACLE = ROOT / "tests" / "java" / "maven_version"
CACHE = Path(os.environ.get("STACK_CACHE_DIR", ROOT / ".stack" / "cache")) / "maven-version-oracle"
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"  # as deploy/local/jars.py
MAVEN_ARTIFACT_JAR = "maven-artifact-3.9.15.jar"  # the version maven_version.py mirrors: Connect 4.3.1's
SEED = 891


# --- the Java side ------------------------------------------------------------------------------------------


def _resolve_jars() -> Path:
    """connect-runtime, maven-artifact and slf4j-api from connect-runtime 4.3.1's own dependency tree, resolved
    once per pom (a stamp holds the pom's digest; a second run does not start Maven)."""
    pom = ORACLE / "pom.xml"
    lib = CACHE / "lib"
    stamp = CACHE / ".pom.sha256"
    digest = hashlib.sha256(pom.read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return lib
    shutil.rmtree(CACHE, ignore_errors=True)
    res = subprocess.run(
        [
            "mvn",
            "-q",
            "-B",
            "-f",
            str(pom),
            f"{DEPENDENCY_PLUGIN}:copy-dependencies",
            f"-DoutputDirectory={lib}",
            "-DincludeArtifactIds=connect-runtime,maven-artifact,slf4j-api",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0, f"mvn failed:\n{res.stdout[-4000:]}\n{res.stderr[-4000:]}"
    stamp.write_text(digest)
    return lib


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The java command line that runs the compiled oracle."""
    for tool in ("javac", "java", "mvn"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: deploy/local/ensure-tools.sh installs it")
    lib = _resolve_jars()
    jars = sorted(p.name for p in lib.glob("*.jar"))
    assert MAVEN_ARTIFACT_JAR in jars, f"connect-runtime 4.3.1 no longer brings {MAVEN_ARTIFACT_JAR}: {jars}"
    classes = tmp_path_factory.mktemp("oracle-classes")
    classpath = os.pathsep.join(str(lib / jar) for jar in jars)
    res = subprocess.run(
        ["javac", "-nowarn", "-cp", classpath, "-d", str(classes), str(ORACLE / "MavenVersionOracle.java")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    return ["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", f"{classes}{os.pathsep}{classpath}"]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _ask(oracle: list[str], lines: Sequence[str]) -> list[str]:
    res = subprocess.run(
        [*oracle, "MavenVersionOracle"],
        input="".join(line + "\n" for line in lines).encode(),
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr.decode(errors="replace")[-4000:]
    return res.stdout.decode().splitlines()


# --- the generated cases ------------------------------------------------------------------------------------

_QUALIFIERS = [
    "alpha", "beta", "milestone", "rc", "cr", "snapshot", "ga", "final", "release", "sp",
    "a", "b", "m", "c", "x", "foo", "dev", "pre", "preview", "jre", "SNAPSHOT", "Alpha", "RC", "Final", "GA",
    "Sp", "rElEaSe", "M", "B", "A", "z", "abc", "zz",
]  # fmt: skip
_NUMBERS = [
    "0", "1", "2", "3", "5", "9", "10", "11", "20", "100", "007", "00", "01", "010", "000000000", "0000000000",
    "2147483647", "2147483648", "999999999", "1000000000", "123456789012345678", "1234567890123456789",
    "0000000000000000001", "99999999999999999999999", "0000000000000000000", "١", "٠١",
]  # fmt: skip
_SEPARATORS = [".", ".", ".", "-", "-", "", "..", "--", ".-", "-."]
_ODD = ["é", "ß", "İ", "ǅ", "_", "+", "~", " "]  # no capital sigma: see maven_version._parse


def _version(rng: random.Random) -> str:
    parts: list[str] = []
    if rng.random() < 0.05:
        parts.append(rng.choice([".", "-"]))
    for k in range(rng.randint(1, 6)):
        if k:
            parts.append(rng.choice(_SEPARATORS))
        roll = rng.random()
        if roll < 0.55:
            parts.append(rng.choice(_NUMBERS) if rng.random() < 0.3 else str(rng.randint(0, 12)))
        elif roll < 0.9:
            word = rng.choice(_QUALIFIERS)
            parts.append(word + str(rng.randint(0, 3)) if rng.random() < 0.3 else word)
        else:
            parts.append(rng.choice(_ODD))
    if rng.random() < 0.05:
        parts.append(rng.choice([".", "-"]))
    return "".join(parts)


_FIXED_VERSIONS = [
    "", "0", "1", "1.0", "1.0.0", "1-0", "1-ga", "1-final", "1-release", "1.0-SNAPSHOT", "1-snapshot", "1-sp",
    "1-rc", "1-cr", "1-alpha-1", "1-a1", "1-b1", "1-m1", "1a1", "1.0.RC2", "1.0-RC3", "1.0.1", "1.0.0-X1",
    "1.0.0.X1", "3.8", "3.8.0", "3.8.0.0", "3.8-0", "2.0-SNAPSHOT", "2.0", "4.3.1", "null", "undefined", "latest",
    "1-1", "1.1", "1-sp-1", "1-1.foo-bar-1-baz-0.1", "1.0.0000000000.1", "1.0.0.1", "a", "A", "...", "---",
]  # fmt: skip


@dataclass
class _Case:
    versions: list[str]
    specs: list[str | None]
    samples: list[list[int]]
    pairs: list[tuple[int, int]]


def _bounds_variants(bound: str) -> list[str]:
    return [bound, f"{bound}.0", f"{bound}-SNAPSHOT", f"{bound}-1", f"{bound}.1", f"{bound}-alpha", f"{bound}-sp"]


def _specs(rng: random.Random, pool: list[str]) -> Iterator[tuple[str | None, list[str]]]:
    """Specs and the versions their bounds are made of: valid ranges of every shape, whitespace, and every way
    Maven rejects one."""
    tidy = [v for v in pool if v and not any(c in v for c in "[](),\t ")]

    def two() -> tuple[str, str]:
        a, b = rng.sample(tidy, 2)
        return (a, b) if ComparableVersion(a) <= ComparableVersion(b) else (b, a)

    yield None, []
    for fixed in ["latest", "LATEST", " latest", "", " ", "\t", "[]", "()", "[,]", "(,)", "[,)", "(,]", ",", "[", "]"]:
        yield fixed, []
    for fixed in ["(", ")", "[)", "(]", "[1.0", "(1.0", "[1.0)", "(1.0]", "(1.0)", "[1.0],2.0", "[1.0],[2.0", "1.0]"]:
        yield fixed, ["1.0", "2.0"]
    for fixed in ["[1.0,2.0)", "[1.0,2.0]", "(1.0,2.0)", "1.0,2.0", "[1.5,)", "(,1.0],[1.2,)", "[1.0,1.0]"]:
        yield fixed, ["1.0", "1.2", "1.5", "2.0"]
    for fixed in ["(1.0,1.0]", "[1.0,1.0)", "[2.0,1.0]", "[1.0,),[0.5,0.7]", "(,1.0],[0.5,)", "[1.0]x", "3.8"]:
        yield fixed, ["0.5", "0.7", "1.0", "2.0", "3.8"]
    shapes = ["[{a},{b}]", "[{a},{b})", "({a},{b}]", "({a},{b})", "[{a},)", "({a},)", "(,{b}]", "(,{b})", "[{a}]"]
    for _ in range(120):
        a, b = two()
        yield rng.choice(shapes).format(a=a, b=b), [a, b]
    for _ in range(40):
        a, b = two()
        yield rng.choice([f"{a},{b}", a, f" {a} ", f"\t{a}", f"{a} ", f"[ {a} , {b} ]", f" [{a},{b}) "]), [a, b]
    for _ in range(60):
        vs = sorted(rng.sample(tidy, 4), key=ComparableVersion)
        sets = [rng.choice(["[{}", "({}"]).format(vs[0]) + "," + rng.choice(["{}]", "{})"]).format(vs[1])]
        sets.append(rng.choice(["[{}", "({}"]).format(vs[2]) + "," + rng.choice(["{}]", "{})", "]", ")"]).format(vs[3]))
        if rng.random() < 0.3:
            sets.reverse()  # ranges overlap
        if rng.random() < 0.3:
            sets[0] = sets[0].replace(f",{vs[1]}", ",")  # an unbounded first set: Maven stops checking overlap
        yield rng.choice([",", ", ", " , ", ",,", ""]).join(sets), vs
    for _ in range(60):
        a, b = two()
        yield (
            rng.choice(
                [
                    f"[{b},{a}]",  # defies ordering unless equal
                    f"({a},{a}]",
                    f"[{a},{a})",
                    f"[{a},{b}",
                    f"[{a}",
                    f"({a})",
                    f"({a}]",
                    f"[{a},{b}],{a}",
                    f"[{a},{b}]x",
                    f"{a},[{b}]",
                    f"[{a},{b},{a}]",
                    f"[{a}]]",
                    f"[[{a}]",
                    f"[{a},{b}) ,",
                ]
            ),
            [a, b],
        )


def _generate() -> _Case:
    rng = random.Random(SEED)
    pool = list(_FIXED_VERSIONS)
    pool += [_version(rng) for _ in range(4000)]
    specs: list[str | None] = []
    samples: list[list[int]] = []
    base = len(pool)
    for spec, bounds in list(_specs(rng, pool)):
        sample: list[int] = []
        for bound in bounds:
            for variant in _bounds_variants(bound):
                sample.append(len(pool))
                pool.append(variant)
        sample += [rng.randrange(base) for _ in range(12)]
        specs.append(spec)
        samples.append(sample)
    pairs = [(rng.randrange(len(pool)), rng.randrange(len(pool))) for _ in range(5000)]
    pairs += [(i, i + 1) for i in range(len(_FIXED_VERSIONS) - 1)]
    return _Case(pool, specs, samples, pairs)


# --- the Python side, in the oracle's words -----------------------------------------------------------------


def _describe(range_: VersionRange | None, versions: list[str], sample: list[int]) -> str:
    if range_ is None:
        return "NULL"
    candidates = [ComparableVersion(versions[i]) for i in sample]
    contains = "".join("1" if range_.contains_version(c) else "0" for c in candidates)
    matched = range_.match_version(candidates)
    matched_index = next((sample[k] for k, c in enumerate(candidates) if c is matched), -1)
    recommended = "-" if range_.recommended_version is None else "=" + _escape(str(range_.recommended_version))
    has = 1 if range_.has_restrictions else 0
    return f"OK\t{_escape(str(range_))}\t{has}\t{recommended}\t{contains}\t{matched_index}"


def _python_spec(spec: str | None, versions: list[str], sample: list[int]) -> str:
    if spec is None:
        maven = "NULL"  # createFromVersionSpec(null) is null
    else:
        try:
            maven = _describe(VersionRange.parse(spec), versions, sample)
        except InvalidVersionSpecificationError as error:
            maven = f"ERR\t{_escape(error.message)}"
    try:
        connect = _describe(parse_requirement(spec), versions, sample)
    except InvalidVersionSpecificationError as error:
        connect = f"ERR\t{_escape(error.message)}"
    return f"S\t{maven}\t{connect}"


WINDOW = 8  # each version against its next 8 in the sorted list
ALL_PAIRS = 700  # every pair of that many versions


def _relations(comparables: list[ComparableVersion], window: int, indices: list[int]) -> str:
    """The oracle's ``R`` answer, from Python."""
    chars: list[str] = []
    for k, index in enumerate(indices):
        here = comparables[index]
        for there_index in indices[k + 1 : k + 1 + window]:
            there = comparables[there_index]
            relation = here.compare_to(there)
            chars.append("!" if (relation == 0) != (here == there) else "<=>"[relation + 1])
    return "R\t" + "".join(chars)


def _first_relation_mismatch(java: str, python: str, window: int, indices: list[int], versions: list[str]) -> str:
    pairs = [(i, j) for k, i in enumerate(indices) for j in indices[k + 1 : k + 1 + window]]
    for (i, j), jc, pc in zip(pairs, java[2:], python[2:], strict=True):
        if jc != pc:
            return f"{versions[i]!r} vs {versions[j]!r}: java {jc}, python {pc}"
    return "no mismatch"


def _mismatches(kind: str, inputs: Sequence[str], java: Sequence[str], python: Sequence[str]) -> list[str]:
    return [
        f"{kind} {inp!r}:\n  java:   {j!r}\n  python: {p!r}"
        for inp, j, p in zip(inputs, java, python, strict=True)
        if j != p
    ]


def test_python_agrees_with_maven_artifact_and_connect(oracle: list[str]) -> None:
    case = _generate()
    comparables = [ComparableVersion(v) for v in case.versions]
    in_order = sorted(range(len(comparables)), key=lambda i: comparables[i])
    subset = random.Random(SEED).sample(range(len(comparables)), ALL_PAIRS)
    relations = [(WINDOW, in_order), (ALL_PAIRS, subset)]
    lines = [f"V\t{_escape(v)}" for v in case.versions]
    lines.append("C")
    lines += [f"R\t{window}\t{','.join(map(str, indices))}" for window, indices in relations]
    lines += [f"P\t{i}\t{j}" for i, j in case.pairs]
    lines += [
        f"S\t{_escape(spec or '')}\t{'-' if spec is None else '+'}\t{','.join(map(str, sample))}"
        for spec, sample in zip(case.specs, case.samples, strict=True)
    ]
    answers = _ask(oracle, lines)
    assert len(answers) == 1 + len(relations) + len(case.pairs) + len(case.specs)
    java_canonical, java_relations = answers[0], answers[1 : 1 + len(relations)]
    java_pairs = answers[1 + len(relations) : 1 + len(relations) + len(case.pairs)]
    java_specs = answers[1 + len(relations) + len(case.pairs) :]

    problems: list[str] = []
    for (window, indices), java in zip(relations, java_relations, strict=True):
        python = _relations(comparables, window, indices)
        if python != java:
            problems.append("order: " + _first_relation_mismatch(java, python, window, indices, case.versions))
    problems += _mismatches(
        "canonical of",
        case.versions,
        java_canonical.split("\t")[1:],
        [_escape(c.canonical) for c in comparables],
    )
    problems += _mismatches(
        "pair",
        [f"{case.versions[i]} vs {case.versions[j]}" for i, j in case.pairs],
        java_pairs,
        [
            f"P\t{comparables[i].compare_to(comparables[j])}\t{int(comparables[i] == comparables[j])}"
            for i, j in case.pairs
        ],
    )
    problems += _mismatches(
        "spec",
        [repr(s) for s in case.specs],
        java_specs,
        [_python_spec(s, case.versions, sample) for s, sample in zip(case.specs, case.samples, strict=True)],
    )
    assert not problems, f"{len(problems)} disagreements, the first ones:\n" + "\n".join(problems[:15])

    # the batch really covers what it is meant to: errors of every kind, ranges, every relation, odd orders
    maven_errors = {line.split("\t")[2].split(":")[0] for line in java_specs if line.split("\t")[1] == "ERR"}
    assert maven_errors == {
        "Unbounded range",
        "Ranges overlap",
        "Only fully-qualified sets allowed in multiple set scenario",
        "Single version must be surrounded by []",
        "Range defies version ordering",
    }
    assert sum("\tOK\t" in line for line in java_specs) > 200
    assert set(java_relations[0][2:]) == {"<", "=", ">"}  # ">" after sorting: compareTo is not transitive
    assert "!" not in "".join(java_relations)  # equals agrees with compareTo() == 0
    assert len(case.versions) > 5000
