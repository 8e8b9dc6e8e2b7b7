"""A small Wadler-style pretty-printing document library.

A document is built from text, breaks, concatenation, nesting and groups:

- ``text(s)`` prints ``s``; it may carry an *annotation*, a note printed as a comment
  at the end of its line (``... # note``), all such comments aligned in one column.
- ``brk(s=" ")`` is a place where a line may end: it prints ``s`` when its group is laid
  out flat and starts a new line, indented by the current nesting, when it is not.
- ``nest(n, d)`` indents the lines that ``d``'s breaks start by ``n`` more columns.
- ``group(d)`` lays ``d`` out flat (every break as its text) if all of ``d`` fits in what
  is left of the current line, and otherwise breaks it, deciding again for each group
  inside. Only the group itself is measured, not the text that follows it.

Breaks outside of any group always start new lines. This is the layout JAX's printer
uses, so Jaxprs printed with it break where JAX's do.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["Doc", "brk", "concat", "group", "join", "nest", "nil", "text"]


class Doc:
    """A document: ``format(width)`` lays it out in lines of at most ``width`` columns
    where its groups allow."""

    __slots__ = ()

    def __add__(self, other: Doc) -> Doc:
        return concat([self, other])

    def format(self, width: int = 80, *, annotation_prefix: str = " # ") -> str:
        return _layout(self, width, annotation_prefix)

    def __str__(self) -> str:
        return self.format()


class _Nil(Doc):
    __slots__ = ()

    def __repr__(self):
        return "nil()"


class _Text(Doc):
    __slots__ = ("annotation", "text")

    def __init__(self, text: str, annotation: str | None):
        self.text = text
        self.annotation = annotation

    def __repr__(self):
        note = "" if self.annotation is None else f", annotation={self.annotation!r}"
        return f"text({self.text!r}{note})"


class _Concat(Doc):
    __slots__ = ("children",)

    def __init__(self, children: tuple[Doc, ...]):
        self.children = children

    def __repr__(self):
        return f"concat({', '.join(map(repr, self.children))})"


class _Break(Doc):
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self):
        return f"brk({self.text!r})"


class _Group(Doc):
    __slots__ = ("child",)

    def __init__(self, child: Doc):
        self.child = child

    def __repr__(self):
        return f"group({self.child!r})"


class _Nest(Doc):
    __slots__ = ("child", "n")

    def __init__(self, n: int, child: Doc):
        self.n = n
        self.child = child

    def __repr__(self):
        return f"nest({self.n}, {self.child!r})"


_NIL = _Nil()


def nil() -> Doc:
    """The empty document."""
    return _NIL


def text(s: str, annotation: str | None = None) -> Doc:
    """Literal text (without newlines), optionally annotated with an end-of-line note."""
    return _Text(s, annotation)


def concat(docs: Iterable[Doc]) -> Doc:
    """The documents one after the other."""
    return _Concat(tuple(docs))


def brk(s: str = " ") -> Doc:
    """A break: ``s`` when its group is flat, a newline (plus indentation) otherwise."""
    return _Break(s)


def group(doc: Doc) -> Doc:
    """Lay ``doc`` out flat if it fits in the rest of the line, else break it."""
    return _Group(doc)


def nest(n: int, doc: Doc) -> Doc:
    """Indent the lines started by breaks inside ``doc`` by ``n`` more columns."""
    return _Nest(n, doc)


def join(sep: Doc, docs: Iterable[Doc]) -> Doc:
    """The documents with ``sep`` between each two of them."""
    parts: list[Doc] = []
    for d in docs:
        if parts:
            parts.append(sep)
        parts.append(d)
    if not parts:
        return _NIL
    return parts[0] if len(parts) == 1 else _Concat(tuple(parts))


def _fits_flat(doc: Doc, room: int) -> bool:
    """Whether ``doc``, laid out flat, takes at most ``room`` columns."""
    stack = [doc]
    while stack and room >= 0:
        d = stack.pop()
        kind = type(d)
        if kind is _Text or kind is _Break:
            room -= len(d.text)
        elif kind is _Concat:
            stack.extend(reversed(d.children))
        elif kind is _Group or kind is _Nest:
            stack.append(d.child)
    return room >= 0


def _flat_pieces(doc: Doc, parts: list[str], notes: list[str]) -> None:
    """Append the text of ``doc`` laid out flat to ``parts``, its annotations to ``notes``."""
    stack = [doc]
    while stack:
        d = stack.pop()
        kind = type(d)
        if kind is _Text:
            parts.append(d.text)
            if d.annotation is not None:
                notes.append(d.annotation)
        elif kind is _Break:
            parts.append(d.text)
        elif kind is _Concat:
            stack.extend(reversed(d.children))
        elif kind is _Group or kind is _Nest:
            stack.append(d.child)


def _layout(doc: Doc, width: int, annotation_prefix: str) -> str:
    lines: list[tuple[str, list[str]]] = []  # finished lines: text and annotations
    parts: list[str] = []  # pieces of the current line
    notes: list[str] = []  # annotations of the current line
    column = 0
    # Work list of (indentation, document), the next one last. Everything on it is laid
    # out broken: a group that fits is written out flat at once.
    stack: list[tuple[int, Doc]] = [(0, doc)]
    while stack:
        indent, d = stack.pop()
        kind = type(d)
        if kind is _Text:
            parts.append(d.text)
            column += len(d.text)
            if d.annotation is not None:
                notes.append(d.annotation)
        elif kind is _Break:
            lines.append(("".join(parts), notes))
            parts, notes, column = [" " * indent], [], indent
        elif kind is _Concat:
            stack.extend((indent, c) for c in reversed(d.children))
        elif kind is _Nest:
            stack.append((indent + d.n, d.child))
        elif kind is _Group:
            if _fits_flat(d.child, width - column):
                start = len(parts)
                _flat_pieces(d.child, parts, notes)
                column += sum(len(p) for p in parts[start:])
            else:
                stack.append((indent, d.child))
    lines.append(("".join(parts), notes))
    if not any(notes for _, notes in lines):
        return "\n".join(line for line, _ in lines)
    return "\n".join(_annotated(lines, annotation_prefix))


def _annotated(lines: list[tuple[str, list[str]]], prefix: str) -> list[str]:
    # Annotations go in one column, just past the longest line.
    column = max(len(line) for line, _ in lines)
    out = []
    for line, notes in lines:
        if not notes:
            out.append(line)
            continue
        out.append(line.ljust(column) + prefix + notes[0])
        out.extend(" " * column + prefix + note for note in notes[1:])
    return out
