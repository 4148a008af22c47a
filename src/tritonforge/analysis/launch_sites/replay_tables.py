"""The table searches of `Replay`: sequences the file writes, searched or built as Python
would (`next(c for c in _CONFIGS if ...)`, `min(configs, key=...)`, comprehensions, `zip`)."""

from __future__ import annotations

import ast
from typing import Any

from tritonforge.analysis.launch_sites.replay_statements import MISSING, Frame, Helper, LazyDict, StatementReplay
from tritonforge.analysis.launch_sites.replay_values import UNKNOWN


NOT_FOUND = object()  # a search over a table that stopped at no item


class TableReplay(StatementReplay):
    """Searches over the file's tables; the expressions themselves are `Replay`'s."""

    def _first(self, gen: ast.GeneratorExp | ast.Call, frame: Frame) -> Any:
        """`next(elt for target in items if ...)` (or `next(filter(test, items))`) over a sequence
        the file writes: the first item whose tests pass, as a loop searching a size table takes it."""
        if isinstance(gen, ast.Call):
            return self._first_filtered(gen, frame)
        got = self._comprehension(gen, frame, first=True)
        return got if got is UNKNOWN else got[0] if got else NOT_FOUND  # StopIteration, or next's default

    def _first_filtered(self, call: ast.Call, frame: Frame) -> Any:
        if not (isinstance(call.func, ast.Name) and call.func.id == "filter" and len(call.args) == 2
                and not call.keywords and self.eval(call.func, frame) is UNKNOWN):
            return UNKNOWN
        test, items = self.eval(call.args[0], frame), self.eval(call.args[1], frame)
        if not (isinstance(test, Helper) and isinstance(items, tuple)):
            return UNKNOWN
        for item in items:
            passed = test.call(self, [item], {})
            if passed is UNKNOWN:
                return UNKNOWN
            if passed:
                return item
        return NOT_FOUND

    def _comprehension(self, gen: ast.ListComp | ast.GeneratorExp, frame: Frame, first: bool = False) -> Any:
        """`[elt for target in items if ...]` over a sequence the file writes, as a tuple (up to
        its first element where `first`)."""
        if len(gen.generators) != 1 or gen.generators[0].is_async:
            return UNKNOWN
        loop = gen.generators[0]
        items = self.eval(loop.iter, frame)
        if not isinstance(items, tuple):
            return UNKNOWN
        out = []
        for item in items:
            names = _unpacked(loop.target, item)
            if names is None:
                return UNKNOWN
            inner = Frame(frame.fn, {**frame.values, **names}, frame.captured)
            tests = [self.eval(t, inner) for t in loop.ifs]
            if any(t is UNKNOWN for t in tests):
                return UNKNOWN
            if all(tests):
                out.append(self.eval(gen.elt, inner))
                if first:
                    break
        return tuple(out)

    def _dict_comprehension(self, comp: ast.DictComp, frame: Frame) -> Any:
        """`{int(key): val for key, val in _RAW.items()}` over a table the file writes, as a dict
        (vLLM's tuned configs with their keys made integers)."""
        pair = ast.Tuple([comp.key, comp.value], ast.Load())
        pairs = self._comprehension(ast.GeneratorExp(pair, comp.generators), frame)
        if pairs is UNKNOWN or any(k is UNKNOWN or not isinstance(k, (int, str)) for k, _ in pairs):
            return UNKNOWN
        return dict(pairs)

    def _extreme(self, node: ast.Call, made: str, frame: Frame) -> Any:
        """`min(configs, key=lambda c: c["BLOCK_SIZE"])`: the item whose key is least (greatest
        for max), the first of equals as Python picks it."""
        items = self.eval(node.args[0], frame)
        key = self.eval(node.keywords[0].value, frame)
        if not (isinstance(items, tuple) and items and isinstance(key, Helper)):
            return UNKNOWN
        keys = [key.call(self, [item], {}) for item in items]
        if any(k is UNKNOWN for k in keys):
            return UNKNOWN
        pick = min if made == "min" else max
        return items[pick(range(len(items)), key=lambda i: keys[i])]

    def _zipped(self, node: ast.expr, frame: Frame) -> LazyDict | None:
        """`zip(_KEYS, _TILES[dtype])` of a tuple of key strings and a tuple of values, both
        written in the file, as the dict display it makes: each key then reads its own literal,
        not the whole tuple's (FlagGems' tile tables). None for anything else."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "zip"
                and len(node.args) == 2 and not node.keywords):
            return None
        keys, values = self._display(node.args[0], frame), self._display(node.args[1], frame)
        if keys is None or values is None or not all(
                isinstance(k, ast.Constant) and isinstance(k.value, str) for k in keys[0].elts):
            return None
        n = min(len(keys[0].elts), len(values[0].elts))  # zip stops at the shorter
        return LazyDict(self, ast.Dict(keys[0].elts[:n], values[0].elts[:n]), values[1])

    def _display(self, node: ast.expr, frame: Frame, depth: int = 0) -> tuple[ast.Tuple | ast.List, Frame] | None:
        """The tuple or list display an expression stands for, unevaluated, and its frame: written
        in place, bound to a name, or a table's entry (`_TILES[x.dtype]`)."""
        if depth > 8:
            return None
        if isinstance(node, (ast.Tuple, ast.List)):
            return None if any(isinstance(e, ast.Starred) for e in node.elts) else (node, frame)
        if isinstance(node, ast.Name):
            bound = self.binding(node.id, frame)
            return self._display(bound.expr, bound.frame, depth + 1) if bound is not None else None
        if isinstance(node, ast.Subscript) and isinstance(table := self.eval(node.value, frame), LazyDict):
            found = table.entry(self.eval(node.slice, frame))
            return None if found is MISSING or found is UNKNOWN else self._display(*found, depth + 1)
        return None


def _unpacked(target: ast.expr, item: Any) -> dict[str, Any] | None:
    """The names a loop target binds to one item (`k, v` of an `.items()` pair), or None."""
    if isinstance(target, ast.Name):
        return {target.id: item}
    if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts) \
            and isinstance(item, tuple) and len(item) == len(target.elts):
        return {e.id: v for e, v in zip(target.elts, item)}  # type: ignore[attr-defined]
    return None
