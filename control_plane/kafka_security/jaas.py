"""``sasl.jaas.config`` read exactly as Kafka reads it.

Mirrors ``org.apache.kafka.common.security.JaasConfig``: a ``java.io.StreamTokenizer`` with its default
syntax (letters and ``\\u00A0``-``\\u00FF`` are word characters, digits, ``.`` and ``-`` start numbers,
``"`` and ``'`` quote with C-like escapes, ``/`` starts a comment) plus ``//`` and ``/* */`` comments and
``-``, ``_``, ``$`` as word characters. An entry is ``<LoginModule class> <flag> key=value ... ;``; a
value must be a word or a quoted string (an unquoted number has no string value: Kafka refuses it).
``JaasContext.loadClientContext`` then wants exactly one login module.
"""

from __future__ import annotations

from dataclasses import dataclass, field

FLAGS = ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL")
_ESCAPES = {"a": "\x07", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\x0b"}


class JaasError(ValueError):
    """The text is not a JAAS configuration Kafka accepts (the message is Kafka's)."""


@dataclass(frozen=True)
class JaasEntry:
    """One ``javax.security.auth.login.AppConfigurationEntry``: the options are secrets, never shown."""

    login_module: str
    flag: str
    options: dict[str, str] = field(repr=False)


@dataclass(frozen=True)
class _Token:
    kind: str  # "word", "quoted", "number", "eof" or the ordinary character itself
    text: str | None = None  # StreamTokenizer.sval: None for numbers and ordinary characters


def _is_word_char(ch: str) -> bool:
    return (ch.isascii() and (ch.isalnum() or ch in "._-$")) or ch >= "\u00a0"


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch <= " ":
            i += 1
        elif "0" <= ch <= "9" or ch in ".-":
            if ch == "-" and (i + 1 >= n or not ("0" <= text[i + 1] <= "9" or text[i + 1] == ".")):
                tokens.append(_Token("-"))
                i += 1
                continue
            i += 1
            seen_dot = ch == "."
            while i < n and ("0" <= text[i] <= "9" or (text[i] == "." and not seen_dot)):
                seen_dot = seen_dot or text[i] == "."
                i += 1
            tokens.append(_Token("number"))
        elif _is_word_char(ch):
            start = i
            while i < n and _is_word_char(text[i]):
                i += 1
            tokens.append(_Token("word", text[start:i]))
        elif ch in "\"'":
            value, i = _quoted(text, i + 1, ch)
            tokens.append(_Token("quoted", value))
        elif ch == "/":
            if text.startswith("/*", i):
                end = text.find("*/", i + 2)
                i = n if end < 0 else end + 2
            else:  # "//" and "/" (StreamTokenizer's comment character) both end at the line's end
                while i < n and text[i] not in "\r\n":
                    i += 1
        else:
            tokens.append(_Token(ch))
            i += 1
    tokens.append(_Token("eof"))
    return tokens


def _quoted(text: str, i: int, quote: str) -> tuple[str, int]:
    """StreamTokenizer's quoted string: ends at the quote, a line end or the text's end."""
    out: list[str] = []
    n = len(text)
    while i < n and text[i] != quote and text[i] not in "\r\n":
        ch = text[i]
        i += 1
        if ch != "\\":
            out.append(ch)
            continue
        if i >= n:
            break
        first = text[i]
        i += 1
        if "0" <= first <= "7":  # octal: up to three digits, \377 at most
            code = int(first)
            if i < n and "0" <= text[i] <= "7":
                code = code * 8 + int(text[i])
                i += 1
                if i < n and "0" <= text[i] <= "7" and first <= "3":
                    code = code * 8 + int(text[i])
                    i += 1
            out.append(chr(code))
        else:
            out.append(_ESCAPES.get(first, first))
    if i < n and text[i] == quote:
        i += 1
    return "".join(out), i


def parse_jaas_config(text: str) -> list[JaasEntry]:
    """All entries of a ``sasl.jaas.config`` value (``JaasConfig``'s constructor)."""
    tokens = _tokens(text)
    pos = 0
    entries: list[JaasEntry] = []

    def take() -> _Token:
        nonlocal pos
        token = tokens[pos]
        pos = min(pos + 1, len(tokens) - 1)
        return token

    while (module := take()).kind != "eof":
        flag = take()
        if flag.kind == "eof":
            raise JaasError("Login module control flag not specified in JAAS config")
        if flag.text is None:
            raise JaasError("Login module control flag is not available in the JAAS config")
        if flag.text.upper() not in FLAGS:
            raise JaasError(f"Invalid login module control flag '{flag.text}' in JAAS config")
        options: dict[str, str] = {}
        while (key := take()).kind not in ("eof", ";"):
            if take().kind != "=" or (value := take()).kind == "eof" or value.text is None:
                raise JaasError(f"Value not specified for key '{key.text}' in JAAS config")
            options[str(key.text)] = value.text
        if key.kind != ";":
            raise JaasError("JAAS config entry not terminated by semi-colon")
        if not module.text:
            raise JaasError("Invalid null input: loginModuleName")
        entries.append(JaasEntry(module.text, flag.text.upper(), options))
    if not entries:
        raise JaasError("Login module not specified in JAAS config")
    return entries


def client_login_entry(text: str) -> JaasEntry:
    """The one login module of a client's ``sasl.jaas.config`` (``JaasContext.loadClientContext``)."""
    entries = parse_jaas_config(text)
    if len(entries) != 1:
        raise JaasError(f"JAAS config property contains {len(entries)} login modules, should be 1 module")
    return entries[0]
