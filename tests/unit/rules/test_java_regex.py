"""java.util.regex -> Python re (pure): Java's semantics for what users write in topic patterns, Java's
syntax errors, and clear refusals for what the sidecar does not translate exactly."""

from __future__ import annotations

import pytest

from control_plane.rules.java_regex import JavaPatternSyntaxError, UnsupportedJavaRegex, translate


@pytest.mark.parametrize(
    ("pattern", "matching", "not_matching"),
    [
        pytest.param("orders\\..*", ["orders.eu", "orders."], ["ordersX", "xorders.eu"], id="whole-name"),
        pytest.param("a|b", ["a", "b"], ["ab"], id="alternation"),
        pytest.param("\\d+", ["123"], ["١٢٣", "a"], id="digit-is-ascii-only"),
        pytest.param("\\w+", ["a_1"], ["é"], id="word-is-ascii-only"),
        pytest.param("\\s", [" ", "\x0b"], ["\xa0"], id="space-is-ascii-only"),
        pytest.param("\\p{Alpha}+", ["abcXYZ"], ["a1", "é"], id="posix-alpha"),
        pytest.param("\\p{Lower}\\p{Upper}", ["aB"], ["Ab"], id="posix-lower-upper"),
        pytest.param("(?i)\\p{Lower}", ["A", "a"], ["1"], id="posix-lower-case-insensitive"),
        pytest.param("\\p{Punct}+", ["!-._~"], ["a"], id="posix-punct"),
        pytest.param("\\p{Alnum}\\p{Digit}\\p{XDigit}", ["a1f"], ["a1g"], id="posix-alnum-digit-xdigit"),
        pytest.param("\\P{Digit}", ["a"], ["1"], id="posix-complement"),
        pytest.param("\\Qa.b\\E.c", ["a.bxc"], ["axbxc"], id="quote"),
        pytest.param("\\Qa|b", ["a|b"], ["a"], id="open-quote-runs-to-the-end"),
        pytest.param("(?<name>ab)+", ["abab"], ["aba"], id="named-group"),
        pytest.param("a++b", ["aab"], ["a"], id="possessive"),
        pytest.param("(?>a|ab)c", ["ac"], ["abc"], id="atomic-group"),
        pytest.param("(?i)orders", ["ORDERS", "Orders"], [], id="case-insensitive"),
        pytest.param("(?i)k", ["k", "K"], ["\u212a"], id="case-insensitive-is-ascii-only"),
        pytest.param("a(?i)b|c", ["aB", "C"], ["AB"], id="flag-lasts-across-alternation"),
        pytest.param("(a(?i)b)c", ["aBc"], ["aBC"], id="flag-ends-with-its-group"),
        pytest.param("(?i:a)b", ["Ab"], ["AB"], id="scoped-flag"),
        pytest.param("(?x) a b # comment", ["ab"], ["a b"], id="comments-mode"),
        pytest.param("[a-z&&[^c]]", ["a", "d"], ["c"], id="intersection-subtraction"),
        pytest.param("[a-z&&def]", ["d"], ["a"], id="intersection-bare-right"),
        pytest.param("[a[0-9]]", ["a", "5"], ["b"], id="nested-union"),
        pytest.param("[^a[b]]", ["c"], ["a", "b"], id="negation-covers-nested"),
        pytest.param("[]a]", ["]", "a"], [], id="leading-bracket-literal"),
        pytest.param("[a-]", ["-"], [], id="trailing-dash-literal"),
        pytest.param("(?i)[^a]", ["b"], ["a", "A"], id="case-insensitive-negated-class"),
        pytest.param(".", ["x"], ["\n", "\r", "\u2028", "\x85"], id="dot-and-java-line-terminators"),
        pytest.param("(?s).", ["\n"], [], id="dotall"),
        pytest.param("(?d).", ["\r"], ["\n"], id="unix-lines"),
        pytest.param("a$", ["a"], ["a\n"], id="dollar-full-match"),
        pytest.param("a{2}{3}", ["aa"], ["aaaaaa"], id="second-quantifier-quantifies-nothing"),
        pytest.param("}]", ["}]"], [], id="dangling-closers-are-literals"),
        pytest.param("\\x{41}\\u0042\\0103\\t", ["ABC\t"], [], id="escapes"),
    ],
)
def test_java_semantics(pattern: str, matching: list[str], not_matching: list[str]) -> None:
    regex = translate(pattern)
    assert [text for text in matching if not regex.fullmatch(text)] == []
    assert [text for text in not_matching if regex.fullmatch(text)] == []


@pytest.mark.parametrize(
    ("pattern", "description", "index"),
    [
        pytest.param("x{1", "Unclosed counted closure", 3, id="comma-split-left"),
        pytest.param("{", "Illegal repetition", 1, id="brace"),
        pytest.param("a{,3}", "Illegal repetition", 2, id="no-lower-bound"),
        pytest.param("a{2,1}", "Illegal repetition range", 5, id="bad-range"),
        pytest.param("a**", "Dangling meta character '*'", 2, id="dangling"),
        pytest.param("[a", "Unclosed character class", 1, id="unclosed-class"),
        pytest.param("[z-a]", "Illegal character range", 3, id="reversed-range"),
        pytest.param("(a", "Unclosed group", 2, id="unclosed-group"),
        pytest.param("a)", "Unmatched closing ')'", 0, id="unmatched"),
        pytest.param("\\y", "Illegal/unsupported escape sequence", 1, id="unknown-escape"),
        pytest.param("(?q)", "Unknown inline modifier", 2, id="unknown-flag"),
        pytest.param("(?<n>a)|(?<n>b)", "Named capturing group <n> is already defined", 12, id="duplicate-name"),
        pytest.param("(?<1a>x)", "capturing group name does not start with a Latin letter", 3, id="bad-name"),
        pytest.param("\\p{Foo", "Unclosed character family", 6, id="unclosed-family"),
        pytest.param("\\08", "Illegal octal escape sequence", 2, id="octal"),
    ],
)
def test_java_syntax_errors(pattern: str, description: str, index: int) -> None:
    with pytest.raises(JavaPatternSyntaxError) as raised:
        translate(pattern)
    assert (raised.value.description, raised.value.index) == (description, index)
    assert str(raised.value).startswith(f"{description} near index {index}\n{pattern}")


@pytest.mark.parametrize(
    ("pattern", "construct"),
    [
        pytest.param("(a)\\1", "backreference", id="backreference"),
        pytest.param("(?<n>a)\\k<n>", "backreference", id="named-backreference"),
        pytest.param("\\bword", "\\b", id="word-boundary"),
        pytest.param("\\p{javaLowerCase}", "Unicode property", id="java-property"),
        pytest.param("\\p{IsLatin}", "Unicode property", id="script"),
        pytest.param("\\pL", "Unicode property", id="category"),
        pytest.param("(?u)a", "UNICODE_CASE", id="unicode-case"),
        pytest.param("(?U)a", "UNICODE_CHARACTER_CLASS", id="unicode-classes"),
        pytest.param("(?m)^a$", "MULTILINE", id="multiline-anchors"),
        pytest.param("(?<=ab|c)d", "Python's re cannot compile", id="variable-lookbehind"),
    ],
)
def test_refused_clearly(pattern: str, construct: str) -> None:
    with pytest.raises(UnsupportedJavaRegex) as raised:
        translate(pattern)
    assert construct in str(raised.value)
    assert str(raised.value).startswith("not supported by the sidecar: ")


def test_syntax_error_wins_over_unsupported() -> None:
    with pytest.raises(JavaPatternSyntaxError):
        translate("\\b(")


@pytest.mark.parametrize(
    ("pattern", "leak"),
    [
        pytest.param("(?i)a", "(?i)", id="flag"),
        pytest.param("\\Qa", "\\Q", id="quote"),
        pytest.param("(?x)a#", "comment", id="comment"),
    ],
)
def test_leaks(pattern: str, leak: str) -> None:
    assert any(leak in text for text in translate(pattern).leaks)


@pytest.mark.parametrize("pattern", ["(?i:a)", "a\\Qb\\E", "(?x:a#c\n)", "(a(?i)b)"])
def test_no_leak(pattern: str) -> None:
    assert translate(pattern).leaks == ()
