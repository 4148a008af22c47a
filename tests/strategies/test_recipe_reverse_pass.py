"""reverse_pass: the last of several passes over a row walks it from its end; interpreter-judged."""

from __future__ import annotations

import ast

import pytest

from tests.conftest import EXAMPLES, ROOT
from tests.strategies.judged import assert_correct, refusal
from tritonforge.strategies.recipes import Rewrite
from tritonforge.strategies.recipes.reverse_pass import ReversePass, walks_backwards
from tritonforge.strategies.recipes.row_online import RowOnline

LOG_SOFTMAX = ROOT / "benchmarks" / "corpus" / "log_softmax_vocab.py"
WRITE = "        tl.store(out_ptr + cols, (x - lse).to(out_ptr.dtype.element_ty), mask=cols < n_cols)\n"


def _passes(source: str) -> list[ast.For]:
    return [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.For)]


def test_recipe_reverse_pass_walks_the_write_pass_of_a_three_pass_log_softmax_backwards(tmp_path):
    source = LOG_SOFTMAX.read_text()
    result = ReversePass().rewrite(source, "log_softmax")
    assert isinstance(result, Rewrite), result
    before, after = _passes(source), _passes(result.source)
    assert len(before) == len(after) == 3
    assert [walks_backwards(p) for p in after] == [False, False, True]
    assert WRITE in result.source  # the same loads and stores, in another order
    assert_correct(LOG_SOFTMAX, result.source, tmp_path)  # 5000 columns in blocks of 4096: a partial last block


@pytest.mark.parametrize("path, entry", [(EXAMPLES / "rmsnorm.py", "rmsnorm"), (EXAMPLES / "softmax.py", "softmax")])
def test_recipe_reverse_pass_keeps_an_example_correct(tmp_path, path, entry):
    result = ReversePass().rewrite(path.read_text(), entry)
    assert isinstance(result, Rewrite), result
    assert walks_backwards(_passes(result.source)[-1])
    assert_correct(path, result.source, tmp_path)


def test_recipe_reverse_pass_and_row_online_combine_in_either_order(tmp_path):
    source = LOG_SOFTMAX.read_text()
    online_first = ReversePass().rewrite(RowOnline().rewrite(source, "log_softmax").source, "log_softmax")
    reverse_first = RowOnline().rewrite(ReversePass().rewrite(source, "log_softmax").source, "log_softmax")
    assert isinstance(online_first, Rewrite) and isinstance(reverse_first, Rewrite)
    assert "2 passes over the row instead of 3" in reverse_first.note  # the backward pass is counted
    for result in (online_first, reverse_first):
        assert [walks_backwards(p) for p in _passes(result.source)] == [False, True]
        assert_correct(LOG_SOFTMAX, result.source, tmp_path)
    assert "already walks its last pass backwards" in ReversePass().rewrite(online_first.source, "log_softmax")


@pytest.mark.parametrize("path", [EXAMPLES / "vector_add.py", EXAMPLES / "col_sum.py"])
def test_recipe_reverse_pass_refuses_a_single_pass(path):
    result = ReversePass().rewrite(path.read_text(), "x")
    assert isinstance(result, str) and "fewer than two passes" in result


@pytest.mark.parametrize("new, why", [
    (WRITE + "        lse = lse + 0.0\n", "carries lse from one block to the next"),
    (WRITE.replace("tl.store(out_ptr + cols", "tl.store(out_ptr + offsets"),
     "does not address through the loop variable"),
    (WRITE.replace("tl.store(", "tl.atomic_add("), "has atomics"),
    (WRITE + "    tl.store(out_ptr + cols, x.to(out_ptr.dtype.element_ty), mask=cols < n_cols)\n",
     "'cols', set in its last pass, is read after it"),
    ("        for k in range(2):\n    " + WRITE, "has a loop inside it"),
    # In place (out is logits), a shifted load would read a block the other order rewrote first.
    ("        x = tl.load(logits_ptr + cols + 1, mask=cols + 1 < n_cols, other=0.0).to(tl.float32)\n" + WRITE,
     "reads at other offsets than its stores write"),
])
def test_recipe_reverse_pass_refuses_a_last_pass_whose_order_matters(new, why):
    result = refusal(ReversePass(), LOG_SOFTMAX.read_text(), "log_softmax", (WRITE, new))
    assert why in result, result
