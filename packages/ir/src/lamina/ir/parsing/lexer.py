"""The tokenizer of the Jaxpr text parser, and its error type.

The parser pulls tokens one at a time from a ``Scanner`` at a position it may save and
restore (for lookahead, and for re-reading a param value as raw text), so there is no
token list. Tokens are names, numbers, quoted strings, and single punctuation
characters; whitespace (newlines included) only separates them.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["JaxprSyntaxError", "Scanner", "Token"]


class JaxprSyntaxError(ValueError):
    """Text that is not a well-formed Jaxpr. ``lineno`` and ``colno`` count from 1."""

    def __init__(self, message: str, text: str, pos: int):
        pos = max(0, min(pos, len(text)))
        line_start = text.rfind("\n", 0, pos) + 1
        line_end = text.find("\n", pos)
        if line_end == -1:
            line_end = len(text)
        self.msg = message
        self.lineno = text.count("\n", 0, pos) + 1
        self.colno = pos - line_start + 1
        line, caret = _excerpt(text[line_start:line_end], pos - line_start)
        super().__init__(f"{message} (line {self.lineno}, column {self.colno})\n{line}\n{caret}^")


def _excerpt(line: str, col: int, width: int = 100) -> tuple[str, str]:
    """The offending line (cut around ``col`` if long) and the padding for a caret."""
    if len(line) > width:
        start = max(0, min(col - width // 2, len(line) - width))
        end = start + width
        line = ("..." if start else "") + line[start:end] + ("..." if end < len(line) else "")
        col = col - start + (3 if start else 0)
    pad = "".join(c if c == "\t" else " " for c in line[:col])
    return line, pad


class Token(NamedTuple):
    kind: str  # "name", "number", "string", "punct" or "eof"
    text: str
    start: int
    end: int


_WS = re.compile(r"\s*", re.ASCII)
_NAME = re.compile(r"[A-Za-z_]\w*'*", re.ASCII)  # a variable's printed suffix may add quotes
_NUMBER = re.compile(r"(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?j?", re.ASCII)
STRING = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"", re.ASCII)
# Primitive names may hold hyphens (``scatter-add``).
PRIMITIVE_NAME = re.compile(r"[A-Za-z_]\w*(?:-\w+)*", re.ASCII)


class Scanner:
    """Reads tokens from ``text`` starting at ``pos``."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self._peeked: dict[int, Token] = {}  # position -> the token read from there

    def error(self, message: str, pos: int | None = None) -> JaxprSyntaxError:
        return JaxprSyntaxError(message, self.text, self.pos if pos is None else pos)

    def skip_ws(self) -> int:
        self.pos = _WS.match(self.text, self.pos).end()
        return self.pos

    def peek(self) -> Token:
        tok = self._peeked.get(self.pos)
        if tok is None:
            tok = self._peeked[self.pos] = self._read()
        self.pos = tok.start
        return tok

    def _read(self) -> Token:
        start = self.skip_ws()
        text = self.text
        if start >= len(text):
            return Token("eof", "", start, start)
        if m := _NAME.match(text, start):
            return Token("name", m.group(), start, m.end())
        if m := _NUMBER.match(text, start):
            return Token("number", m.group(), start, m.end())
        if m := STRING.match(text, start):
            return Token("string", m.group(), start, m.end())
        return Token("punct", text[start], start, start + 1)

    def next(self) -> Token:
        tok = self.peek()
        self.pos = tok.end
        return tok

    def peek2(self) -> Token:
        """The token after the next one."""
        saved = self.pos
        self.next()
        tok = self.peek()
        self.pos = saved
        return tok

    def at(self, text: str) -> bool:
        tok = self.peek()
        return tok.text == text and tok.kind in ("punct", "name")

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.next()
            return True
        return False

    def expect(self, text: str, what: str | None = None) -> Token:
        tok = self.peek()
        if tok.text != text or tok.kind not in ("punct", "name"):
            raise self.error(f"expected {what or repr(text)}, found {describe(tok)}", tok.start)
        return self.next()

    def expect_name(self, what: str) -> Token:
        tok = self.peek()
        if tok.kind != "name":
            raise self.error(f"expected {what}, found {describe(tok)}", tok.start)
        return self.next()

    def primitive_name(self) -> Token | None:
        start = self.skip_ws()
        m = PRIMITIVE_NAME.match(self.text, start)
        if m is None:
            return None
        self.pos = m.end()
        return Token("name", m.group(), start, m.end())

    def match(self, pattern: re.Pattern) -> re.Match | None:
        """Matches ``pattern`` at the next token without moving."""
        return pattern.match(self.text, self.skip_ws())

    def column(self, pos: int) -> int:
        """The column of ``pos``, counting from 0."""
        return pos - (self.text.rfind("\n", 0, pos) + 1)

    def newline_before(self, tok: Token) -> bool:
        """Whether the text between the previous non-space character and ``tok`` breaks
        a line (or ``tok`` starts the text)."""
        i = tok.start - 1
        while i >= 0 and self.text[i] in " \t\r\f\v":
            i -= 1
        return i < 0 or self.text[i] == "\n"


def describe(tok: Token) -> str:
    if tok.kind == "eof":
        return "end of text"
    return repr(tok.text)
