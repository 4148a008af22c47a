"""Writing launch-parameter values into a problem file.

Only the chosen values change (the literal text, or an inserted `num_warps=` keyword);
every other byte stays as it was.
"""

from __future__ import annotations

import ast
from typing import Any

from tritonforge.analysis.launch_sites import ConfigSpec, SearchSpace, Span, Tunable, entry_of
from tritonforge.strategies.editing import Edit, apply_edits, text_at
from tritonforge.strategies.launch.values import Assignment, hashable


def rewrite(source: str, assignment: Assignment, entry: str | None = None) -> str:
    """`source` with the tunables named in `assignment` set to the given values.

    Ids are those of `SearchSpace.from_source(source, entry)`; `entry` defaults to the
    file's `ENTRY`. Values equal to the current ones are left untouched, so a full
    assignment of the current values returns `source` unchanged. Raises ValueError for an
    unknown or non-tunable id, or a value of the wrong type.
    """
    entry = entry or entry_of(source)
    if not entry:
        raise ValueError("no entry given and the file sets no ENTRY")
    out = apply_assignment(SearchSpace.from_source(source, entry), assignment)
    ast.parse(out)  # a rewrite only swaps numbers; this guards against a span bug
    return out


def apply_assignment(space: SearchSpace, assignment: Assignment) -> str:
    """`space.source` with the assigned values written in (see `rewrite`)."""
    edits: list[Edit] = []
    for tid, value in assignment.items():
        t = _tunable_for(space, tid)
        value = _normalise(t, value)
        if _same(t, value, t.current):
            continue
        for order, loc in enumerate(t.locations):
            line = space.source.splitlines()[loc.line - 1]
            indent = line[: len(line) - len(line.lstrip())]
            edits.append(Edit(loc, _render(text_at(space.source, loc), t, value, loc, indent),
                              _insert_order(loc, order)))
    # Computed values: the literals they read (raises runtime.Unreachable when none will do).
    edits += [Edit(span, text) for span, text in space.literal_edits(dict(assignment))]
    return apply_edits(space.source, _join_inserts(edits))


def _tunable_for(space: SearchSpace, tid: str) -> Tunable:
    if tid not in space.by_id:
        raise ValueError(f"unknown tunable {tid!r}; known: {', '.join(space.by_id)}")
    t = space.by_id[tid]
    if not t.free:
        raise ValueError(f"{tid} is not tunable: {t.why}")
    return t


def _normalise(t: Tunable, value: Any) -> Any:
    if t.kind == "autotune_configs":
        if not isinstance(value, (list, tuple)) or not value:
            raise ValueError(f"{t.id} needs a non-empty list of configs")
        return tuple(v if isinstance(v, ConfigSpec) else ConfigSpec.from_flat(dict(v)) for v in value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{t.id} needs an integer, not {value!r}")
    return value


def _same(t: Tunable, a: Any, b: Any) -> bool:
    if t.kind == "autotune_configs":
        return [(c.flat(), c.extra) for c in a] == [(c.flat(), c.extra) for c in b]
    return a == b


def _insert_order(loc: Span, order: int) -> int:
    # Two keywords inserted at one point: num_warps first, then num_stages.
    return {"num_warps": 0, "num_stages": 1}.get(loc.insert or "", order)


def _join_inserts(edits: list[Edit]) -> list[Edit]:
    """A second keyword inserted at the point of another (into an empty call) needs a ", "."""
    out, first_at = [], set()
    for e in sorted(edits, key=lambda e: e.order):
        point = (e.span.line, e.span.col)
        if e.span.insert is not None and point in first_at and not e.text.startswith(", "):
            e = Edit(e.span, ", " + e.text, e.order)
        if e.span.insert is not None:
            first_at.add(point)
        out.append(e)
    return out


def _render(old: str, t: Tunable, value: Any, loc: Span, indent: str = "") -> str:
    if t.kind == "autotune_configs":
        return _render_configs(old, value, t.current, indent)
    if loc.insert is not None:
        return f"{', ' if loc.lead else ''}{loc.insert}={value}"
    return str(value + loc.delta)


def _render_configs(old: str, configs: tuple[ConfigSpec, ...], written: tuple[ConfigSpec, ...], indent: str) -> str:
    """A config list written like the one it replaces (name, quotes, layout); configs it
    already had keep their text. Configs the file built by code are written out one a line,
    except where a list is widened: the code stays, spread first, and the new configs follow."""
    tree = ast.parse(old.strip(), mode="eval").body
    # `[*configs_of(...), triton.Config(...)]`: an earlier widening of a list built by code
    literal = isinstance(tree, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in tree.elts)
    first = tree.elts[0] if literal and tree.elts else None
    prefix = ast.unparse(first.func) if isinstance(first, ast.Call) else "triton.Config"
    quote = "'" if 0 <= old.find("'") < (old.find('"') if '"' in old else len(old)) else '"'
    texts = {hashable(c): c.text for c in written if c.text}
    items = [texts.get(hashable(c)) or _render_config(c, prefix, quote) for c in configs]
    if not literal:
        kept = len(written) if [hashable(c) for c in configs[:len(written)]] == [hashable(c) for c in written] else 0
        if kept and len(configs) > kept:
            code = old.strip()
            head = ([ast.get_source_segment(code, e) for e in tree.elts] if isinstance(tree, ast.List)
                    else [f"*{code}" if isinstance(tree, _SPREADS_BARE) else f"*({code})"])
            items = head + items[kept:]
        return "[\n" + "".join(f"{indent}    {item},\n" for item in items) + f"{indent}]"
    opening, closing = ("(", ")") if old.lstrip().startswith("(") else ("[", "]")
    lines = old.splitlines()
    if len(lines) == 1:
        trailer = "," if opening == "(" and len(items) == 1 else ""
        return opening + ", ".join(items) + trailer + closing
    indent = lines[1][: len(lines[1]) - len(lines[1].lstrip())]
    last = lines[-1]
    close_indent = last[: len(last) - len(last.lstrip())] if last.strip().startswith(closing) else indent[:-4]
    body = "".join(f"{indent}{item},\n" for item in items)
    return f"{opening}\n{body}{close_indent}{closing}"


# What `[*x, ...]` takes without parentheses (`*a if c else b` does not parse).
_SPREADS_BARE = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.List, ast.ListComp, ast.Tuple)


def _render_config(c: ConfigSpec, prefix: str, quote: str) -> str:
    kw = ", ".join(f"{quote}{k}{quote}: {v!r}" for k, v in c.kwargs)
    parts = ["{" + kw + "}"]
    if c.num_warps is not None:
        parts.append(f"num_warps={c.num_warps}")
    if c.num_stages is not None:
        parts.append(f"num_stages={c.num_stages}")
    parts.extend(c.extra)
    return f"{prefix}({', '.join(parts)})"
