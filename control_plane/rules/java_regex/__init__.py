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

The modules: ``errors``; ``code_points`` (sets of code points, Java's classes, their Python spelling);
``quoting`` (the ``\\Q...\\E`` pre-pass); ``cursor`` (the parse state, the flags); ``classes`` (character
classes and escapes); ``parser`` (the grammar); ``pattern`` (``JavaRegex``, ``translate``).

Written by hand because Connect's patterns must mean here what they mean to Java, and Python's ``re`` differs
from ``java.util.regex`` in syntax and semantics (``\\Q...\\E``, possessive quantifiers, class intersections,
``\\p{...}`` names, comments mode) while no Python library translates Java's; checked against Java's own
``Pattern`` (tests/unit/rules/test_topic_creation_java.py).
"""

from .code_points import MAX_CODE_POINT
from .errors import JavaPatternSyntaxError, JavaRegexProblem, UnsupportedJavaRegex
from .pattern import JavaRegex, java_matches, translate

__all__ = [
    "MAX_CODE_POINT",
    "JavaPatternSyntaxError",
    "JavaRegex",
    "JavaRegexProblem",
    "UnsupportedJavaRegex",
    "java_matches",
    "translate",
]
