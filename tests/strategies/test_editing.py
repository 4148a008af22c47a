"""Text edits at ast positions: byte-correct on non-ASCII lines, ordered inserts, no overlaps."""

from __future__ import annotations

import ast

import pytest

from tritonforge.strategies.editing import (Edit, Place, apply_edits, insert_keyword, insert_keywords, replace_node,
                                            text_at)

SOURCE = 'title = "größe → 64"\nf(x, BLOCK=64)  # é\ng()\n'


def nodes(source: str, kind: type) -> list:
    return [n for n in ast.walk(ast.parse(source)) if isinstance(n, kind)]


def test_columns_are_utf8_bytes_on_non_ascii_lines():
    (const,) = [n for n in nodes(SOURCE, ast.Constant) if n.value == 64]
    assert text_at(SOURCE, Place.of(const)) == "64"
    (title,) = [n for n in nodes(SOURCE, ast.Constant) if isinstance(n.value, str)]
    out = apply_edits(SOURCE, [replace_node(const, "128"), replace_node(title, '"size → 128"')])
    assert out == 'title = "size → 128"\nf(x, BLOCK=128)  # é\ng()\n'
    assert apply_edits(SOURCE, []) == SOURCE


def test_inserts_at_one_point_go_in_order_and_before_a_replacement_there():
    at = Place.point(3, 2)  # between "g(" and ")"
    edits = [Edit(at, "b", order=1), Edit(at, "a", order=0), Edit(at, "c", order=1), Edit(Place(3, 2, 3, 3), "]")]
    assert apply_edits(SOURCE, edits).splitlines()[2] == "g(abc]"


def test_overlapping_edits_are_refused():
    with pytest.raises(ValueError, match="overlapping"):
        apply_edits(SOURCE, [Edit(Place(2, 0, 2, 4), "h(y"), Edit(Place(2, 2, 2, 3), "z")])
    with pytest.raises(ValueError, match="overlapping"):
        apply_edits(SOURCE, [Edit(Place(2, 0, 2, 4), "h(y"), Edit(Place.point(2, 2), "z")])
    with pytest.raises(ValueError, match="outside"):
        apply_edits(SOURCE, [Edit(Place.point(9, 0), "z")])
    with pytest.raises(ValueError, match="splits a character"):
        apply_edits(SOURCE, [Edit(Place(1, 11, 1, 12), "s")])  # inside the two bytes of "ö"


def test_keyword_arguments_go_after_the_last_argument():
    f, g = nodes(SOURCE, ast.Call)
    out = apply_edits(SOURCE, [insert_keyword(f, "num_warps", "8"), insert_keyword(g, "num_stages", "3")])
    assert out.splitlines()[1:] == ["f(x, BLOCK=64, num_warps=8)  # é", "g(num_stages=3)"]
    out = apply_edits(SOURCE, [insert_keywords(g, [("num_warps", "8"), ("num_stages", "3")])])
    assert out.splitlines()[2] == "g(num_warps=8, num_stages=3)"
    trailing = "h(\n    a,\n    b,\n)\n"
    (h,) = nodes(trailing, ast.Call)
    assert ast.parse(apply_edits(trailing, [insert_keyword(h, "num_warps", "4")]))
    with pytest.raises(ValueError, match="already has BLOCK"):
        insert_keyword(f, "BLOCK", "128")
