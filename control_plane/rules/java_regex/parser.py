"""The grammar: ``expr``, ``sequence``, ``atom``, ``closure``, ``group0`` and the escapes outside a class,
emitting the Python pattern (``java_regex``)."""

from __future__ import annotations

from .classes import _ClassParser
from .code_points import _ALL, _LINE_TERMINATORS, _ascii_case_closed, _emit_char, _emit_set, _negate
from .cursor import _D, _FLAG_LETTERS, _I, _M, _REFUSED_FLAGS, _S
from .quoting import _is_ascii_alpha, _is_ascii_digit


class _Parser(_ClassParser):
    """One parse of one pattern; the cursor discipline (peek/read/next/skip/unread) mirrors Java's."""

    def compile(self) -> str:
        body = self.expr()
        if self.cursor != self.plen:
            if self.peek() == 0x29:
                raise self.error("Unmatched closing ')'")
            raise self.error("Unexpected internal error")
        return body

    def expr(self) -> str:
        branches = []
        while True:
            branches.append(self.sequence())
            if self.peek() != 0x7C:
                break
            self.next()
        return "|".join(branches)

    def sequence(self) -> str:
        out: list[str] = []
        while True:
            ch = self.peek()
            if ch == 0x28:  # (
                group = self.group0()
                if group is not None:
                    out.append(group)
                continue
            if ch == 0x5B:  # [
                node = _emit_set(self.clazz(True)())
            elif ch == 0x5C:  # \
                ch = self.next_escaped()
                if ch in (0x70, 0x50):  # p P
                    node = self._property_atom(ch)
                else:
                    self.unread()
                    node = self.atom()
            elif ch == 0x5E:  # ^
                self.next()
                if self.has(_M):
                    self.refuse("^ under MULTILINE (?m)")
                node = "(?:\\A)"
            elif ch == 0x24:  # $
                self.next()
                if self.has(_M):
                    self.refuse("$ under MULTILINE (?m)")
                node = self._dollar()
            elif ch == 0x2E:  # .
                self.next()
                if self.has(_S):
                    node = _emit_set(_ALL)
                elif self.has(_D):
                    node = _emit_set(_negate(((0x0A, 0x0A),)))
                else:
                    node = _emit_set(_negate(_LINE_TERMINATORS))
            elif ch in (0x7C, 0x29):  # | )
                break
            elif ch in (0x3F, 0x2A, 0x2B):  # ? * +
                self.next()
                raise self.error(f"Dangling meta character '{chr(ch)}'")
            elif ch == 0 and self.cursor >= self.plen:
                break
            else:
                node = self.atom()
            out.append(self.closure(node))
        return "".join(out)

    def _dollar(self) -> str:
        if self.has(_D):
            return "(?=\\n?\\Z)"
        return "(?=\\Z|\\r\\n\\Z|[\\r\\x85\\u2028\\u2029]\\Z|(?<!\\r)\\n\\Z)"

    def _property_atom(self, ch: int) -> str:
        return _emit_set(self._property_family(ch)())

    def atom(self) -> str:
        """One literal character or one escape (Java's ``atom`` collects a slice; a quantifier after it
        applies to its last character only, which is the same as one character at a time)."""
        ch = self.peek()
        if ch == 0x7B:  # '{' where an atom should be: Java quantifies an empty atom
            return ""
        if ch == 0x5C:
            return self.escape_outside_class()
        if ch == 0 and self.cursor >= self.plen:
            return ""
        self.next()
        return self._literal(ch)

    def _literal(self, ch: int) -> str:
        if 0xD800 <= ch <= 0xDFFF:
            raise self.unsupported("a lone surrogate code unit")
        if self.has(_I) and ch < 0x80:
            return _emit_set(_ascii_case_closed(((ch, ch),)))
        return _emit_char(ch)

    def closure(self, node: str) -> str:
        ch = self.peek()
        if ch == 0x3F:  # ?
            return self._quantified(node, "?")
        if ch == 0x2A:  # *
            return self._quantified(node, "*")
        if ch == 0x2B:  # +
            return self._quantified(node, "+")
        if ch != 0x7B:
            return node
        ch = self.skip()
        if not _is_ascii_digit(ch):
            raise self.error("Illegal repetition")
        cmin = 0
        cmax: int | None
        limit = 0x7FFFFFFF
        while True:
            cmin = cmin * 10 + ch - 0x30
            if cmin > limit:
                raise self.error("Illegal repetition range")
            ch = self.read()
            if not _is_ascii_digit(ch):
                break
        if ch == 0x2C:  # ,
            ch = self.read()
            if ch == 0x7D:
                self.unread()
                return self._quantified(node, f"{{{cmin},}}")
            cmax = 0
            while _is_ascii_digit(ch):
                cmax = cmax * 10 + ch - 0x30
                if cmax > limit:
                    raise self.error("Illegal repetition range")
                ch = self.read()
        else:
            cmax = cmin
        if ch != 0x7D:
            raise self.error("Unclosed counted closure")
        if cmax < cmin:
            raise self.error("Illegal repetition range")
        self.unread()
        return self._quantified(node, f"{{{cmin},{cmax}}}")

    def _quantified(self, node: str, quantifier: str) -> str:
        # qtype(): the quantifier character is under the cursor; a following ? is lazy, + possessive
        ch = self.next()
        suffix = ""
        if ch == 0x3F:
            self.next()
            suffix = "?"
        elif ch == 0x2B:
            self.next()
            suffix = "+"
        if node == "":
            return ""
        return f"(?:{node}){quantifier}{suffix}"

    def group0(self) -> str | None:
        save = self.flags
        ch = self.next()
        if ch == 0x3F:  # ?
            ch = self.skip()
            if ch == 0x3A:  # (?:
                body = "(?:" + self.expr()
            elif ch in (0x3D, 0x21):  # (?= (?!
                body = ("(?=" if ch == 0x3D else "(?!") + self.expr()
            elif ch == 0x3E:  # (?>
                body = "(?>" + self.expr()
            elif ch == 0x3C:  # (?<
                ch = self.read()
                if ch not in (0x3D, 0x21):
                    name = self.groupname(ch)
                    if name in self.names:
                        raise self.error(f"Named capturing group <{name}> is already defined")
                    self.names.append(name)
                    self.groups += 1
                    body = f"(?P<{name}>" + self.expr()
                else:
                    # Java wants an "obvious maximum length", Python a fixed width: what Python cannot
                    # compile is refused as unsupported (translate's last step)
                    body = ("(?<=" if ch == 0x3D else "(?<!") + self.expr()
            elif ch in (0x24, 0x40):  # (?$ (?@
                raise self.error("Unknown group type")
            else:
                self.unread()
                self.add_flags()
                ch = self.read()
                if ch == 0x29:
                    return None  # inline modifier only: it lasts to the end of the enclosing group
                if ch != 0x3A:
                    raise self.error("Unknown inline modifier")
                body = "(?:" + self.expr()
        else:
            self.groups += 1
            body = "(" + self.expr()
        self.accept(0x29, "Unclosed group")
        self.flags = save
        return self.closure(body + ")")

    def groupname(self, ch: int) -> str:
        if not _is_ascii_alpha(ch):
            raise self.error("capturing group name does not start with a Latin letter")
        name = []
        while True:
            name.append(chr(ch))
            ch = self.read()
            if not (_is_ascii_alpha(ch) or _is_ascii_digit(ch)):
                break
        if ch != 0x3E:
            raise self.error("named capturing group is missing trailing '>'")
        return "".join(name)

    def add_flags(self) -> None:
        ch = self.peek()
        turning_on = True
        while True:
            letter = chr(ch) if 0 < ch < 0x80 else ""
            if letter in _FLAG_LETTERS:
                if turning_on and letter in _REFUSED_FLAGS:
                    self.cursor += 1
                    self.refuse(f"inline flag {letter} ({_REFUSED_FLAGS[letter]})")
                    self.cursor -= 1
                if turning_on:
                    self.flags |= _FLAG_LETTERS[letter]
                else:
                    self.flags &= ~_FLAG_LETTERS[letter]
            elif letter == "-" and turning_on:
                turning_on = False
            else:
                return
            ch = self.next()

    # --- escapes -----------------------------------------------------------------------------------
    def escape_outside_class(self) -> str:
        start = self.cursor
        ch = self.skip()
        cls = self._class_escape(ch)
        if cls is not None:
            return _emit_set(cls)
        if 0x31 <= ch <= 0x39:
            number = ch - 0x30
            while _is_ascii_digit(self.peek()) and number * 10 + self.peek() - 0x30 <= self.groups:
                number = number * 10 + self.read() - 0x30
            self.refuse(f"backreference \\{number}")
            return ""
        if ch == ord("A"):
            return "(?:\\A)"
        if ch == ord("z"):
            return "(?:\\Z)"
        if ch == ord("Z"):
            return self._dollar()
        if ch == ord("b") and self.peek() == 0x7B:
            if self.skip() == ord("g"):
                if self.read() != 0x7D:
                    raise self.error("Illegal/unsupported escape sequence")
                self.refuse("\\b{g} grapheme boundary")
                return ""
            self.unread()
            self.unread()  # a plain \b, then a quantifier
        if ch in (ord("b"), ord("B"), ord("G"), ord("R"), ord("X")):
            self.refuse(
                {
                    "b": "\\b word boundary (Java 19 changed what it means)",
                    "B": "\\B non-word boundary (Java 19 changed what it means)",
                    "G": "\\G end of the previous match",
                    "R": "\\R linebreak matcher",
                    "X": "\\X grapheme cluster",
                }[chr(ch)]
            )
            return ""
        if ch == ord("k"):
            if self.read() != 0x3C:
                raise self.error("\\k is not followed by '<' for named capturing group")
            name = self.groupname(self.read())
            if name not in self.names:
                raise self.error(f"named capturing group <{name}> does not exist")
            self.refuse(f"backreference \\k<{name}>")
            return ""
        self.cursor = start
        return self._literal(self._char_escape(inclass=False, isrange=False))
