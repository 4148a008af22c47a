"""Text edits of a problem file at `ast` positions, for any strategy that rewrites one.

Positions are what `ast` gives: 1-based lines and 0-based UTF-8 byte columns, so a span
is anything with `line`, `col`, `end_line`, `end_col` (`Place`, or an analysis `Span`).
`apply_edits` writes a set of edits in one pass and leaves every other byte as it was.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterable, Protocol

__all__ = ["Edit", "Place", "SpanLike", "apply_edits", "insert_keyword", "insert_keywords", "replace_node", "text_at"]


class SpanLike(Protocol):
    line: int
    col: int
    end_line: int
    end_col: int


@dataclass(frozen=True)
class Place:
    """A stretch of source; a point when start and end are equal."""

    line: int
    col: int
    end_line: int
    end_col: int

    @classmethod
    def of(cls, node: ast.AST) -> "Place":
        """Where `node` is written."""
        return cls(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)

    @classmethod
    def point(cls, line: int, col: int) -> "Place":
        return cls(line, col, line, col)


@dataclass(frozen=True)
class Edit:
    """Replace the text at `span` with `text` (insert, where `span` is a point).

    Inserts at one point are written in `order`, then in the order given."""

    span: SpanLike
    text: str
    order: int = 0


def apply_edits(source: str, edits: Iterable[Edit]) -> str:
    """`source` with `edits` written in. Raises ValueError for overlapping edits, a span
    outside the source, or one that splits a character."""
    data = source.encode()
    offsets = _line_offsets(data)
    located = []
    for index, e in enumerate(edits):
        start, end = _offset(offsets, e.span.line, e.span.col), _offset(offsets, e.span.end_line, e.span.end_col)
        if end < start:
            raise ValueError(f"edit ends before it starts: {_where(e.span)}")
        located.append((start, end, e.order, index, e))
    out, pos = [], 0
    # At one point, inserts (empty spans) come before a replacement that starts there.
    for start, end, _, _, e in sorted(located, key=lambda x: x[:4]):
        if start < pos:
            raise ValueError(f"overlapping edits at {_where(e.span)}")
        out += [data[pos:start], e.text.encode()]
        pos = end
    out.append(data[pos:])
    try:
        return b"".join(out).decode()
    except UnicodeDecodeError:
        raise ValueError("an edit splits a character: columns are UTF-8 byte offsets") from None


def text_at(source: str, span: SpanLike) -> str:
    """The text of `source` that `span` covers."""
    data = source.encode()
    offsets = _line_offsets(data)
    start, end = _offset(offsets, span.line, span.col), _offset(offsets, span.end_line, span.end_col)
    try:
        return data[start:end].decode()
    except UnicodeDecodeError:
        raise ValueError(f"{_where(span)} splits a character: columns are UTF-8 byte offsets") from None


def replace_node(node: ast.AST, text: str) -> Edit:
    """Replace the text of `node` (an expression, a statement) with `text`."""
    return Edit(Place.of(node), text)


def insert_keyword(call: ast.Call, name: str, value: str, order: int = 0) -> Edit:
    """Add `name=value` as the last argument of `call` (which must not already have it).

    Two keywords inserted into one call need different `order`s; the second one written
    at a point needs its own ", ", which `insert_keywords` adds."""
    if any(k.arg == name for k in call.keywords):
        raise ValueError(f"the call already has {name}=")
    return insert_keywords(call, [(name, value)], order)


def insert_keywords(call: ast.Call, pairs: list[tuple[str, str]], order: int = 0) -> Edit:
    """Add each `name=value` of `pairs`, in that order, after the last argument of `call`."""
    written = [*call.args, *call.keywords]
    text = ", ".join(f"{name}={value}" for name, value in pairs)
    if not written:  # f() or f(\n): just before the closing parenthesis
        return Edit(Place.point(call.end_lineno, call.end_col_offset - 1), text, order)
    last = max(written, key=lambda n: (n.end_lineno, n.end_col_offset))
    return Edit(Place.point(last.end_lineno, last.end_col_offset), ", " + text, order)


def append_parameter(fn: ast.FunctionDef, text: str) -> Edit:
    """Add the parameter `text` ("NAME: tl.constexpr = 1", say) after the last one of `fn`.

    Raises ValueError for keyword-only or variadic parameters, and for a parameter without a
    default after ones that have defaults."""
    if fn.args.kwonlyargs or fn.args.vararg or fn.args.kwarg:
        raise ValueError("keyword-only or variadic parameters")
    if fn.args.defaults and "=" not in text:
        raise ValueError("a parameter without a default after parameters with defaults")
    last = [*fn.args.posonlyargs, *fn.args.args][-1]
    end = fn.args.defaults[-1] if fn.args.defaults else (last.annotation or last)
    return Edit(Place.point(end.end_lineno, end.end_col_offset), f", {text}")


def _line_offsets(data: bytes) -> list[int]:
    offsets, pos = [], 0
    for line in data.splitlines(keepends=True):
        offsets.append(pos)
        pos += len(line)
    offsets.append(pos)
    return offsets


def _offset(offsets: list[int], line: int, col: int) -> int:
    if not 1 <= line <= len(offsets) or col < 0:
        raise ValueError(f"line {line}, column {col} is outside the source")
    at = offsets[line - 1] + col
    limit = offsets[line] if line < len(offsets) else offsets[-1]
    if at > limit:
        raise ValueError(f"line {line}, column {col} is past the end of its line")
    return at


def _where(span: SpanLike) -> str:
    return f"{span.line}:{span.col}-{span.end_line}:{span.end_col}"
