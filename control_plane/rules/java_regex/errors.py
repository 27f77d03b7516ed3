"""The problems a Java regular expression can have for the sidecar (``java_regex``)."""

from __future__ import annotations


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
