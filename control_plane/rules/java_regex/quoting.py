"""Java's ``\\Q...\\E`` pre-pass and the ASCII character tests of its parser (``java_regex``)."""

from __future__ import annotations


def _remove_qe_quoting(cps: list[int]) -> tuple[list[int], bool]:
    """Java's ``Pattern.RemoveQEQuoting`` pre-pass: ``\\Q...\\E`` becomes escaped literals. Returns the new
    code points and whether a ``\\Q`` was still open at the end (it then quotes the rest of the pattern)."""
    n = len(cps)
    i = 0
    while i < n - 1:
        if cps[i] != 0x5C:
            i += 1
        elif cps[i + 1] != 0x51:
            i += 2
        else:
            break
    if i >= n - 1:
        return cps, False
    out = cps[:i]
    i += 2
    in_quote = True
    begin_quote = True
    while i < n:
        c = cps[i]
        i += 1
        if c >= 0x80 or chr(c).isalpha():
            out.append(c)
        elif 0x30 <= c <= 0x39:
            if begin_quote:
                out.extend((0x5C, ord("x"), ord("3")))  # so a preceding escape cannot absorb the digit
            out.append(c)
        elif c != 0x5C:
            if in_quote:
                out.append(0x5C)
            out.append(c)
        elif in_quote:
            if i < n and cps[i] == ord("E"):
                i += 1
                in_quote = False
            else:
                out.extend((0x5C, 0x5C))
        else:
            if i < n and cps[i] == ord("Q"):
                i += 1
                in_quote = True
                begin_quote = True
                continue
            out.append(c)
            if i != n:
                out.append(cps[i])
                i += 1
        begin_quote = False
    return out, in_quote


def _is_ascii_space(ch: int) -> bool:
    return 0x09 <= ch <= 0x0D or ch == 0x20


def _is_hex(ch: int) -> bool:
    return 0x30 <= ch <= 0x39 or 0x41 <= ch <= 0x46 or 0x61 <= ch <= 0x66


def _is_ascii_alpha(ch: int) -> bool:
    return 0x41 <= ch <= 0x5A or 0x61 <= ch <= 0x7A


def _is_ascii_digit(ch: int) -> bool:
    return 0x30 <= ch <= 0x39
