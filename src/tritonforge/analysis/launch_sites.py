"""Where a problem file launches Triton kernels, and which launch values can be tuned.

Everything here reads source text with `ast`; nothing is imported or run, so it is safe on
candidate files and costs no GPU time.

What counts as tunable (`Tunable.free`), and why:

* A value that feeds a kernel's `tl.constexpr` tile size, `num_warps` or `num_stages` is
  tunable when it is an integer literal (or a constant expression such as `1 << 10`)
  somewhere in this file: in the launch call, in an assignment of the function that
  launches, in a call argument or default of a helper between entry and launch, at module
  level, or as the kernel's own default. One literal is ONE tunable, however many launches
  and grids use it (`BLOCK = 256` feeding `triton.cdiv(n, BLOCK)` and `BLOCK_SIZE=BLOCK`),
  so rewriting it keeps grid and kernel consistent.
* A grid that divides by its own copy of the number (`triton.cdiv(n, 256)` next to
  `BLOCK_SIZE=256`) is tied to it: both are rewritten together, and the `255` of
  `(n + 255) // 256` follows as value - 1. Two literal blocks that tie to the same grid
  number become one tunable (square tiles), since we cannot tell which one the grid means.
* `num_warps` / `num_stages` that a launch leaves out are tunable by inserting the keyword;
  their current values are Triton's defaults (4 warps, 3 stages).
* An autotuned kernel exposes its `configs=[triton.Config(...), ...]` list as one tunable
  whose value is a tuple of `ConfigSpec`s; the launch values the configs set are theirs.
* Values derived from runtime data (`triton.next_power_of_2(n_cols)`, `max(...)`, an
  entry argument) are reported with `free=False`. We deliberately offer no multiplier on
  them: whether a block must cover a whole row (single-pass softmax) is kernel semantics
  that cannot be checked statically, and a wrong guess fails only on some shapes.
* Integer constexprs that shape no tensor (no `tl.arange`, `tl.zeros` shape, ...) such as
  `GROUP_SIZE_M` or flags are reported, not free: they may carry meaning.

Ids are "kernel.PARAM" / "kernel.num_warps" / "kernel.autotune_configs", from the first
launch that uses the value, with "#2", "#3" for later distinct values of the same name.
They depend only on the file's structure, so they survive rewrites of the values.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from tritonforge.analysis.astfold import fold_binop

# Legal ranges. tl.arange needs powers of two; Triton caps a tensor at 2**20 elements.
BLOCK_MIN = 16
BLOCK_MAX = 65536
MAX_TENSOR_NUMEL = 1 << 20
DOT_MIN = 16
WARPS = (1, 2, 4, 8, 16, 32)
STAGES = (1, 2, 3, 4, 5, 6)
DEFAULT_WARPS = 4
DEFAULT_STAGES = 3

# Roles of a constexpr inside its kernel.
TILE_ROLES = frozenset({"arange", "shape"})  # the value is a tensor dimension
DOT_ROLES = frozenset({"dot_m", "dot_n", "dot_k"})

_REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum", "prod"}
_SHAPE_KEEPING = {"cumsum", "cumprod", "sort", "flip", "associative_scan"}
_CONFIG_POSITIONAL = ("kwargs", "num_warps", "num_stages", "num_ctas", "maxnreg", "pre_hook", "ir_override")


# --- public data ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Span:
    """Source text to rewrite: 1-based lines, 0-based UTF-8 byte columns, as `ast` gives them.

    `delta`: the text written is `value + delta` (the 255 of `(n + 255) // 256`).
    `insert`: a zero-width point where `insert=value` is added as a new keyword argument;
    `lead` says whether a ", " must precede it (False when the call has no arguments).
    """

    line: int
    col: int
    end_line: int
    end_col: int
    delta: int = 0
    insert: str | None = None
    lead: bool = True

    @property
    def key(self) -> tuple[int, int, int, int]:
        return (self.line, self.col, self.end_line, self.end_col)


@dataclass(frozen=True)
class ConfigSpec:
    """One `triton.Config`: its constexpr values, warps, stages, other keywords verbatim."""

    kwargs: tuple[tuple[str, Any], ...]
    num_warps: int | None = None  # None: not written, Triton's default
    num_stages: int | None = None
    extra: tuple[str, ...] = ()  # e.g. ("num_ctas=1",), kept as written
    text: str = field(default="", compare=False)  # as written in the file, so a kept config stays byte-identical

    @property
    def warps(self) -> int:
        return DEFAULT_WARPS if self.num_warps is None else self.num_warps

    @property
    def stages(self) -> int:
        return DEFAULT_STAGES if self.num_stages is None else self.num_stages

    def values(self) -> dict[str, Any]:
        return dict(self.kwargs)

    def flat(self) -> dict[str, Any]:
        """JSON-friendly form: {"BLOCK": 128, "num_warps": 4, "num_stages": 3}."""
        out = dict(self.kwargs)
        out["num_warps"] = self.warps
        out["num_stages"] = self.stages
        return out

    def with_values(self, **changes: Any) -> "ConfigSpec":
        kw = dict(self.kwargs)
        warps, stages = self.num_warps, self.num_stages
        for k, v in changes.items():
            if k == "num_warps":
                warps = v
            elif k == "num_stages":
                stages = v
            else:
                kw[k] = v
        return ConfigSpec(tuple(kw.items()), warps, stages, self.extra)

    @staticmethod
    def from_flat(d: dict[str, Any]) -> "ConfigSpec":
        kw = {k: v for k, v in d.items() if k not in ("num_warps", "num_stages")}
        return ConfigSpec(tuple(kw.items()), d.get("num_warps"), d.get("num_stages"))

    def label(self) -> str:
        parts = [f"{k}={v}" for k, v in self.kwargs] + [f"num_warps={self.warps}", f"num_stages={self.stages}"]
        return "{" + ", ".join(parts) + "}"


@dataclass
class Tunable:
    """One value that shapes one or more launches; `free` when the search may change it."""

    id: str  # "add_kernel.BLOCK_SIZE", "matmul_kernel.num_warps", "k.autotune_configs"
    kind: str  # "constexpr" | "num_warps" | "num_stages" | "autotune_configs"
    current: Any  # int, tuple[ConfigSpec, ...], or None when not known statically
    free: bool
    why: str  # where the value comes from, or why it is not free
    locations: tuple[Span, ...] = ()  # what a rewrite edits (all together)
    legal: tuple[int, ...] = ()  # allowed values (current included); () for config lists
    roles: frozenset[str] = frozenset()  # arange, shape, tile, loop_step, dot_m/n/k, ...
    feeds: tuple[str, ...] = ()  # "kernel.PARAM" it shapes, in launch order
    pairs: tuple[str, ...] = ()  # ids it forms 2D tiles with
    relations: tuple[str, ...] = ()  # constraints, in words

    @property
    def kernel(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def name(self) -> str:
        """The parameter part of the id: "BLOCK_SIZE", "num_warps"."""
        return self.id.split(".", 1)[1].split("#", 1)[0]

    @property
    def is_block(self) -> bool:
        return self.kind == "constexpr"


@dataclass
class KernelFacts:
    """What a @triton.jit function's body says about its constexprs."""

    name: str
    line: int
    params: tuple[str, ...]
    constexprs: tuple[str, ...]
    roles: dict[str, frozenset[str]]
    tiles: tuple[tuple[str, ...], ...]  # tensor shapes with >= 2 constexpr dimensions
    dots: tuple[tuple[str | None, str | None, str | None], ...]  # (M, N, K) of each tl.dot
    autotune_keys: tuple[str, ...] = ()  # constexprs set by @triton.autotune configs
    heuristics: tuple[str, ...] = ()  # constexprs set by @triton.heuristics
    autotuned: bool = False
    has_loop: bool = False  # num_stages only pipelines loads inside loops

    @property
    def has_dot(self) -> bool:
        return bool(self.dots)

    def tile_dims(self) -> set[str]:
        return {c for c, r in self.roles.items() if r & TILE_ROLES}


@dataclass
class LaunchSite:
    """One `kernel[grid](...)` reachable from the entry (a helper called twice gives two)."""

    kernel: str
    line: int
    function: str  # the function whose body holds the launch
    via: tuple[str, ...]  # call chain from the entry, entry first
    grid: str  # grid expression as written at the launch
    grid_kind: str  # "tuple" | "lambda" | "call" | "other" (after following a local name)
    grid_resolved: str  # the expression a grid name stands for ("" when written inline)
    grid_meta: tuple[str, ...]  # meta["..."] keys a lambda grid reads
    args: dict[str, str]  # kernel parameter / launch option -> argument text
    bindings: dict[str, str]  # kernel parameter / "num_warps" / ... -> tunable id
    tunables: list[Tunable]
    facts: KernelFacts

    @property
    def autotuned(self) -> bool:
        return self.facts.autotuned


@dataclass
class SearchSpace:
    """The tunables of all launch sites, each once, in first-use order."""

    sites: list[LaunchSite]
    source: str = ""
    by_id: dict[str, Tunable] = field(init=False)

    def __post_init__(self) -> None:
        self.by_id = {}
        for site in self.sites:
            for t in site.tunables:
                self.by_id.setdefault(t.id, t)

    @property
    def tunables(self) -> list[Tunable]:
        return [t for t in self.by_id.values() if t.free]

    @property
    def fixed(self) -> list[Tunable]:
        return [t for t in self.by_id.values() if not t.free]

    @property
    def current(self) -> dict[str, Any]:
        return {t.id: t.current for t in self.tunables}

    def get(self, tid: str) -> Tunable:
        return self.by_id[tid]

    def label(self, tid: str) -> str:
        """Short name for descriptions: the parameter name unless two tunables share it."""
        t = self.by_id[tid]
        same = [u for u in self.tunables if u.name == t.name]
        return t.name if len(same) <= 1 else tid

    @staticmethod
    def from_source(source: str, entry: str) -> "SearchSpace":
        return SearchSpace(find_launch_sites(source, entry), source)


def find_launch_sites(source: str, entry: str) -> list[LaunchSite]:
    """Every Triton launch reachable from `entry`, with the values that shape it.

    Raises SyntaxError for a file that does not parse, ValueError when `entry` is not a
    top-level function of it.
    """
    module = _Module(source)
    fn = module.functions.get(entry)
    if fn is None or entry in module.kernels:
        raise ValueError(f"no plain top-level function named {entry!r}")
    scope = _Scope(fn, {}, (entry,))
    launches = list(_collect_launches(module, scope))
    return _build_sites(module, launches)


def entry_of(source: str) -> str | None:
    """The module-level `ENTRY = "name"` of a problem file, if it has one."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "ENTRY" for t in node.targets):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return node.value.value
    return None


def is_pow2(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0 and v & (v - 1) == 0


# --- small ast helpers ---------------------------------------------------------------------


def _span(node: ast.AST, delta: int = 0) -> Span:
    return Span(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset, delta)  # type: ignore[attr-defined]


def _last_name(func: ast.expr) -> str:
    """`tl.arange` -> "arange", `triton.Config` -> "Config", `f` -> "f"."""
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Call):
        return _last_name(func.func)
    return ""


def _fold(node: ast.expr) -> int | None:
    """The integer a constant expression stands for (`64`, `1 << 10`, `2 * 32`), else None."""
    if isinstance(node, ast.Constant):
        v = node.value
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _fold(node.operand)
        return None if v is None else -v
    if isinstance(node, ast.BinOp):
        a, b = _fold(node.left), _fold(node.right)
        if a is None or b is None:
            return None
        return fold_binop(node.op, a, b)
    return None


def _walk_local(fn: ast.AST) -> Iterator[ast.AST]:
    """Nodes of a function body, not descending into nested functions, lambdas, classes."""
    stack = list(reversed(getattr(fn, "body", [])))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _params(fn: ast.FunctionDef | ast.Lambda) -> list[ast.arg]:
    a = fn.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs]


def _defaults(fn: ast.FunctionDef) -> dict[str, ast.expr]:
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    out = {p.arg: d for p, d in zip(positional[len(positional) - len(a.defaults):], a.defaults)}
    out.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
    return out


def _bind_call(fn: ast.FunctionDef, call: ast.Call) -> dict[str, ast.expr]:
    """Which argument expression each parameter of `fn` receives at `call`."""
    out: dict[str, ast.expr] = {}
    positional = [p.arg for p in [*fn.args.posonlyargs, *fn.args.args]]
    for name, arg in zip(positional, call.args):
        if isinstance(arg, ast.Starred):
            break  # later positions are unknown
        out[name] = arg
    for kw in call.keywords:
        if kw.arg is not None:
            out[kw.arg] = kw.value
    return out


@dataclass(frozen=True)
class _Bind:
    value: ast.expr | None  # None: bound in a way we do not follow (loop, import, +=)
    exact: bool  # False: one part of an unpacked value (`M, K = a.shape`)


def _bindings(nodes: Iterable[ast.AST]) -> dict[str, list[_Bind]]:
    """Every way each name is bound among `nodes` (one function's or the module's body)."""
    out: dict[str, list[_Bind]] = defaultdict(list)
    for node in nodes:
        _note_binding(node, out)
    return out


def _note_binding(node: ast.AST, out: dict[str, list[_Bind]]) -> None:
    if isinstance(node, ast.Assign):
        for t in node.targets:
            _bind_target(t, node.value, out)
    elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
        _bind_target(node.target, node.value, out)
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        out[node.target.id].append(_Bind(None, False))
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        for n in ast.walk(node.target):
            if isinstance(n, ast.Name):
                out[n.id].append(_Bind(None, False))
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        for item in node.items:
            for n in ast.walk(item.optional_vars) if item.optional_vars else ():
                if isinstance(n, ast.Name):
                    out[n.id].append(_Bind(None, False))
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for a in node.names:
            out[(a.asname or a.name).split(".")[0]].append(_Bind(None, False))
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        out[node.name].append(_Bind(None, False))


def _bind_target(target: ast.expr, value: ast.expr, out: dict[str, list[_Bind]]) -> None:
    if isinstance(target, ast.Name):
        out[target.id].append(_Bind(value, True))
    elif isinstance(target, (ast.Tuple, ast.List)):
        same = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
        if same and not any(isinstance(e, ast.Starred) for e in [*target.elts, *value.elts]):
            for t, v in zip(target.elts, value.elts):  # type: ignore[union-attr]
                _bind_target(t, v, out)
            return
        for n in ast.walk(target):
            if isinstance(n, ast.Name):
                out[n.id].append(_Bind(value, False))


# --- kernels -------------------------------------------------------------------------------


def _decorator_calls(fn: ast.FunctionDef, name: str) -> list[ast.Call]:
    return [d for d in fn.decorator_list if isinstance(d, ast.Call) and _last_name(d.func) == name]


def _is_kernel(fn: ast.AST) -> bool:
    return isinstance(fn, ast.FunctionDef) and any(_last_name(d) == "jit" for d in fn.decorator_list)


def _is_constexpr(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value.endswith("constexpr")
    return _last_name(annotation) == "constexpr"


class _ShapeWalker:
    """Symbolic shapes of a kernel's tensors, in terms of its constexpr parameters.

    A shape is a tuple of dims: a constexpr name, an int, or "?" (an expression). Only
    what launch tuning needs is tracked: which constexprs are tensor dims, which appear
    together in 2D tiles, and the (M, N, K) of each tl.dot.
    """

    def __init__(self, fn: ast.FunctionDef, constexprs: set[str]):
        self.fn = fn
        self.constexprs = constexprs
        self.params = {p.arg for p in _params(fn)}
        self.env: dict[str, tuple] = {}
        self.roles: dict[str, set[str]] = {c: set() for c in constexprs}
        self.tiles: dict[tuple[str, ...], None] = {}
        self.dots: dict[tuple, None] = {}

    def run(self) -> None:
        self._block(self.fn.body)

    # statements
    def _block(self, stmts: list[ast.stmt]) -> None:
        for s in stmts:
            self._stmt(s)

    def _stmt(self, s: ast.stmt) -> None:
        if isinstance(s, ast.Assign):
            for t in s.targets:
                self._bind(t, s.value)
        elif isinstance(s, ast.AnnAssign) and s.value is not None:
            self._bind(s.target, s.value)
        elif isinstance(s, ast.AugAssign):
            shape = self.shape(s.value)
            if isinstance(s.target, ast.Name):
                self.env[s.target.id] = _broadcast(self.env.get(s.target.id, ()), shape)
        elif isinstance(s, (ast.For, ast.While)):
            self._loop(s)
        elif isinstance(s, ast.If):
            self.shape(s.test)
            self._block(s.body)
            self._block(s.orelse)
        elif isinstance(s, ast.With):
            self._block(s.body)
        else:
            for child in ast.iter_child_nodes(s):
                if isinstance(child, ast.expr):
                    self.shape(child)

    def _loop(self, s: ast.For | ast.While) -> None:
        if isinstance(s, ast.For):
            self._range_roles(s.iter)
            for n in ast.walk(s.target):
                if isinstance(n, ast.Name):
                    self.env[n.id] = ()
        else:
            self.shape(s.test)
        # Twice, so that values carried around the loop reach their uses.
        self._block(s.body)
        self._block(s.body)
        self._block(s.orelse)

    def _range_roles(self, it: ast.expr) -> None:
        if not (isinstance(it, ast.Call) and _last_name(it.func) in ("range", "static_range")):
            self.shape(it)
            return
        args = list(it.args)
        for i, a in enumerate(args):
            self._mark(a, "loop_step" if i == 2 else "loop_bound")
            self.shape(a)

    def _bind(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = self.shape(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                for t, v in zip(target.elts, value.elts):
                    self._bind(t, v)
                return
            self.shape(value)
            for n in ast.walk(target):
                if isinstance(n, ast.Name):
                    self.env[n.id] = ()
        else:
            self.shape(value)

    # expressions
    def shape(self, node: ast.expr) -> tuple:
        s = self._shape(node)
        named = [d for d in s if isinstance(d, str) and d != "?"]
        if len(set(named)) >= 2:
            self.tiles[tuple(named)] = None
            for d in named:
                self.roles[d].add("tile")
        return s

    def _shape(self, node: ast.expr) -> tuple:
        if isinstance(node, ast.Name):
            return self.env.get(node.id, ())
        if isinstance(node, ast.BinOp):
            return _broadcast(self.shape(node.left), self.shape(node.right))
        if isinstance(node, ast.UnaryOp):
            return self.shape(node.operand)
        if isinstance(node, (ast.BoolOp, ast.Compare)):
            parts = node.values if isinstance(node, ast.BoolOp) else [node.left, *node.comparators]
            return _broadcast_all(self.shape(p) for p in parts)
        if isinstance(node, ast.IfExp):
            self.shape(node.test)
            return _broadcast(self.shape(node.body), self.shape(node.orelse))
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Attribute):
            return self.shape(node.value) if self._is_value(node.value) else ()
        if isinstance(node, (ast.Tuple, ast.List)):
            for e in node.elts:
                self.shape(e)
        return ()

    def _subscript(self, node: ast.Subscript) -> tuple:
        base = self.shape(node.value)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        out, i = [], 0
        for it in items:
            if isinstance(it, ast.Constant) and it.value is None:
                out.append(1)
            elif isinstance(it, ast.Slice):
                out.append(base[i] if i < len(base) else "?")
                i += 1
            else:
                self.shape(it)
                i += 1  # an index drops the dimension
        return tuple(out) + tuple(base[i:]) if base or out else ()

    def _is_value(self, node: ast.expr) -> bool:
        """A tensor/local (method call receiver), as opposed to a module like `tl`."""
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(root, ast.Name) and (root.id in self.env or root.id in self.params)

    def _call(self, node: ast.Call) -> tuple:
        name = _last_name(node.func)
        method = isinstance(node.func, ast.Attribute) and self._is_value(node.func.value)
        recv = self.shape(node.func.value) if method else None  # type: ignore[union-attr]
        args = list(node.args)
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        shapes = [self.shape(a) for a in args] + [self.shape(v) for v in kw.values()]
        first = recv if method else (shapes[0] if shapes else ())
        if name == "arange" and not method:
            end = args[1] if len(args) > 1 else kw.get("end")
            for a in [*args, *kw.values()]:
                self._mark(a, "arange")
            return (self._dim(end),) if end is not None else ("?",)
        if name in ("zeros", "full", "empty") and not method:
            shape_arg = args[0] if args else kw.get("shape")
            return self._dims(shape_arg) if shape_arg is not None else ()
        if name in ("zeros_like", "full_like", "empty_like"):
            return first or ()
        if name in ("reshape", "view", "broadcast_to"):
            shape_arg = self._shape_arg(args, kw, method)
            return self._dims(shape_arg) if shape_arg is not None else ()
        if name == "dot":
            a, b = (recv, shapes[0]) if method else (shapes[0] if shapes else (), shapes[1] if len(shapes) > 1 else ())
            return self._dot(a or (), b or ())
        if name in _REDUCTIONS:
            positional = args[:1] if method else args[1:2]  # x.sum(axis) / tl.sum(x, axis)
            return _reduce(first or (), kw.get("axis", positional[0] if positional else None))
        if name in _SHAPE_KEEPING or name == "load":
            return first or ()
        if name in ("trans", "permute") and first and len(first) == 2:
            return tuple(reversed(first))
        if name in ("store", "program_id", "num_programs", "cdiv", "atomic_add", "static_assert", "device_print"):
            return ()
        return _broadcast_all([*([recv] if recv else []), *shapes])

    @staticmethod
    def _shape_arg(args: list[ast.expr], kw: dict[str, ast.expr], method: bool) -> ast.expr | None:
        """The shape of `x.reshape(a, b)` / `x.reshape((a, b))` / `tl.reshape(x, (a, b))`."""
        if method:
            return args[0] if len(args) == 1 else (ast.Tuple(args) if args else kw.get("shape"))
        return args[1] if len(args) > 1 else kw.get("shape")

    def _dot(self, a: tuple, b: tuple) -> tuple:
        if len(a) != 2 or len(b) != 2:
            return ()
        m, k, n = a[0], a[1], b[1]
        names = [d if isinstance(d, str) and d != "?" else None for d in (m, n, k)]
        self.dots[tuple(names)] = None
        for d, role in zip(names, ("dot_m", "dot_n", "dot_k")):
            if d is not None:
                self.roles[d].add(role)
        return (m, n)

    def _dim(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Name) and node.id in self.constexprs:
            return node.id
        v = _fold(node)
        return v if v is not None else "?"

    def _dims(self, node: ast.expr) -> tuple:
        self._mark(node, "shape")
        elts = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
        return tuple(self._dim(e) for e in elts)

    def _mark(self, node: ast.expr, role: str) -> None:
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id in self.constexprs:
                self.roles[n.id].add(role)


def _broadcast(a: tuple, b: tuple) -> tuple:
    if not a or not b:
        return a or b
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + a
    b = (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x == 1 or x == "?":
            out.append(y if y != 1 else x)
        else:
            out.append(x)
    return tuple(out)


def _broadcast_all(shapes: Iterable[tuple]) -> tuple:
    out: tuple = ()
    for s in shapes:
        out = _broadcast(out, s)
    return out


def _reduce(shape: tuple, axis: ast.expr | None) -> tuple:
    if axis is None or not shape:
        return ()
    a = _fold(axis)
    if a is None or not -len(shape) <= a < len(shape):
        return ()
    a %= len(shape)
    return shape[:a] + shape[a + 1:]


def _kernel_facts(module: "_Module", fn: ast.FunctionDef) -> KernelFacts:
    params = tuple(p.arg for p in _params(fn))
    constexprs = tuple(p.arg for p in _params(fn) if _is_constexpr(p.annotation))
    walker = _ShapeWalker(fn, set(constexprs))
    walker.run()
    autotune = _decorator_calls(fn, "autotune")
    keys: set[str] = set()
    if autotune:
        configs = module.autotune_configs(fn)
        for c in configs or ():
            keys.update(k for k, _ in c.kwargs)
    heur: set[str] = set()
    for call in _decorator_calls(fn, "heuristics"):
        values = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "values"), None)
        if isinstance(values, ast.Dict):
            heur.update(k.value for k in values.keys if isinstance(k, ast.Constant) and isinstance(k.value, str))
    return KernelFacts(
        name=fn.name,
        line=fn.lineno,
        params=params,
        constexprs=constexprs,
        roles={c: frozenset(r) for c, r in walker.roles.items()},
        tiles=tuple(walker.tiles),
        dots=tuple(walker.dots),
        autotune_keys=tuple(sorted(keys)),
        heuristics=tuple(sorted(heur)),
        autotuned=bool(autotune),
        has_loop=any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(fn)),
    )


# --- the module and name resolution --------------------------------------------------------


@dataclass
class _Scope:
    fn: ast.FunctionDef | None  # None: module level
    args: dict[str, tuple[ast.expr, "_Scope"]]  # helper parameters bound at the call, in the caller's scope
    chain: tuple[str, ...]  # functions from the entry down to this one

    @property
    def is_entry(self) -> bool:
        return self.fn is not None and len(self.chain) == 1


@dataclass
class _Resolved:
    kind: str  # "literal" | "derived" | "unknown"
    text: str  # the expression, as written
    where: str  # how we got there, for reports
    node: ast.expr | None = None  # the literal to rewrite
    value: Any = None


class _Module:
    def __init__(self, source: str):
        self.source = source
        self.tree = ast.parse(source)
        self.functions = {n.name: n for n in self.tree.body if isinstance(n, ast.FunctionDef)}
        self.top = _bindings(_walk_local(self.tree))
        self._local: dict[int, dict[str, list[_Bind]]] = {}
        self._configs: dict[str, tuple[ast.expr | None, tuple[ConfigSpec, ...] | None, str]] = {}
        self.kernels = {n: _kernel_facts(self, f) for n, f in self.functions.items() if _is_kernel(f)}

    def text(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.source, node) or ast.unparse(node)

    def local(self, fn: ast.FunctionDef) -> dict[str, list[_Bind]]:
        if id(fn) not in self._local:
            self._local[id(fn)] = _bindings(_walk_local(fn))
        return self._local[id(fn)]

    def module_scope(self) -> _Scope:
        return _Scope(None, {}, ())

    def definition(self, name: str, scope: _Scope) -> tuple[_Bind | None, _Scope, str]:
        """The single binding of `name` seen from `scope`, the scope to read it in, and a note."""
        if scope.fn is not None:
            binds = self.local(scope.fn).get(name)
            if binds:
                if len(binds) > 1:
                    return None, scope, f"{name} is assigned {len(binds)} times in {scope.fn.name}"
                return binds[0], scope, ""
            if name in {p.arg for p in _params(scope.fn)}:
                return self._parameter(name, scope)
        binds = self.top.get(name)
        if not binds:
            return None, scope, f"{name} is not defined in this file"
        if len(binds) > 1:
            return None, scope, f"{name} is assigned {len(binds)} times at module level"
        return binds[0], self.module_scope(), ""

    def _parameter(self, name: str, scope: _Scope) -> tuple[_Bind | None, _Scope, str]:
        fn = scope.fn
        assert fn is not None
        if name in scope.args:
            expr, caller = scope.args[name]
            return _Bind(expr, True), caller, ""
        if scope.is_entry:
            # The entry's parameters, defaults included, are its signature: never rewritten.
            return None, scope, f"argument {name!r} of the entry {fn.name}()"
        default = _defaults(fn).get(name)
        if default is not None:
            return _Bind(default, True), self.module_scope(), ""
        return None, scope, f"parameter {name!r} of {fn.name}() is not bound here"

    def resolve(self, expr: ast.expr, scope: _Scope, depth: int = 0) -> _Resolved:
        value = _fold(expr)
        if value is not None:
            return _Resolved("literal", self.text(expr), f"{self.text(expr)} (line {expr.lineno})", expr, value)
        if isinstance(expr, ast.Constant):
            text = self.text(expr)
            return _Resolved("derived", text, f"constant {text} is not an integer", expr, expr.value)
        if not isinstance(expr, ast.Name) or depth > 12:
            return _Resolved("derived", self.text(expr), f"derived from runtime values: {self.text(expr)}")
        bind, where, note = self.definition(expr.id, scope)
        if bind is None or bind.value is None:
            kind = "derived" if note.startswith("argument") else "unknown"
            return _Resolved(kind, expr.id, note or f"{expr.id} is bound by a loop, import or +=")
        if not bind.exact:
            text = self.text(bind.value)
            return _Resolved("derived", text, f"derived from runtime values: {expr.id} from {text}")
        found = self.resolve(bind.value, where, depth + 1)
        if found.kind == "literal":
            found.where = f"{expr.id} = {found.text} (line {bind.value.lineno})"
        return found

    def autotune_configs(self, fn: ast.FunctionDef) -> tuple[ConfigSpec, ...] | None:
        return self.autotune_list(fn)[1]

    def autotune_list(self, fn: ast.FunctionDef) -> tuple[ast.expr | None, tuple[ConfigSpec, ...] | None, str]:
        """(the list expression to rewrite, its configs, why not) for an autotuned kernel."""
        if fn.name not in self._configs:
            self._configs[fn.name] = self._parse_autotune(fn)
        return self._configs[fn.name]

    def _parse_autotune(self, fn: ast.FunctionDef) -> tuple[ast.expr | None, tuple[ConfigSpec, ...] | None, str]:
        call = _decorator_calls(fn, "autotune")[0]
        node = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "configs"), None)
        if isinstance(node, ast.Name):
            bind, _, note = self.definition(node.id, self.module_scope())
            node = bind.value if bind and bind.exact else None
            if node is None:
                return None, None, note or "configs are not a literal list"
        if not isinstance(node, (ast.List, ast.Tuple)):
            return None, None, "configs are built by code, not written as a list"
        configs = [self._config(e) for e in node.elts]
        if not configs or any(c is None for c in configs):
            return None, None, "a config is not a plain triton.Config(...) of literals"
        return node, tuple(configs), ""  # type: ignore[arg-type]

    def _config(self, node: ast.expr) -> ConfigSpec | None:
        if not (isinstance(node, ast.Call) and _last_name(node.func) == "Config"):
            return None
        named = dict(zip(_CONFIG_POSITIONAL, node.args))
        named.update({k.arg: k.value for k in node.keywords if k.arg})
        kwargs = named.pop("kwargs", None)
        if not isinstance(kwargs, ast.Dict) or any(k is None for k in kwargs.keys):
            return None
        items = []
        for k, v in zip(kwargs.keys, kwargs.values):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, ast.Constant)):
                return None
            items.append((k.value, v.value))
        warps = named.pop("num_warps", None)
        stages = named.pop("num_stages", None)
        w = _fold(warps) if warps is not None else None
        s = _fold(stages) if stages is not None else None
        if (warps is not None and w is None) or (stages is not None and s is None):
            return None
        extra = tuple(f"{k}={self.text(v)}" for k, v in named.items())
        return ConfigSpec(tuple(items), w, s, extra, self.text(node))


# --- launches ------------------------------------------------------------------------------


@dataclass
class _Use:
    """One launch value: which parameter of which launch it sets, and where it comes from."""

    launch: int  # index into the launch list
    kernel: str
    param: str  # constexpr name, "num_warps", "num_stages" or "autotune_configs"
    kind: str
    resolved: _Resolved
    span: Span | None = None  # the literal, insertion point or config list
    configs: tuple[ConfigSpec, ...] | None = None


@dataclass
class _Launch:
    call: ast.Call
    scope: _Scope
    facts: KernelFacts
    args: dict[str, str]
    grid: ast.expr
    uses: list[_Use] = field(default_factory=list)


def _collect_launches(module: _Module, scope: _Scope) -> Iterator[_Launch]:
    fn = scope.fn
    assert fn is not None
    calls = sorted((n for n in _walk_local(fn) if isinstance(n, ast.Call)), key=lambda c: (c.lineno, c.col_offset))
    for call in calls:
        f = call.func
        if isinstance(f, ast.Subscript) and isinstance(f.value, ast.Name) and f.value.id in module.kernels:
            yield _launch(module, call, scope, module.kernels[f.value.id])
        elif isinstance(f, ast.Name) and f.id in module.functions and f.id not in module.kernels:
            if f.id in scope.chain:
                continue  # recursion: each helper once per chain
            helper = module.functions[f.id]
            bound = {k: (v, scope) for k, v in _bind_call(helper, call).items()}
            yield from _collect_launches(module, _Scope(helper, bound, scope.chain + (f.id,)))


def _launch(module: _Module, call: ast.Call, scope: _Scope, facts: KernelFacts) -> _Launch:
    grid = call.func.slice  # type: ignore[attr-defined]
    bound: dict[str, ast.expr] = {}
    for name, arg in zip(facts.params, call.args):
        if isinstance(arg, ast.Starred):
            break
        bound[name] = arg
    options: dict[str, ast.expr] = {}
    for kw in call.keywords:
        if kw.arg in facts.params:
            bound[kw.arg] = kw.value
        elif kw.arg is not None:
            options[kw.arg] = kw.value
    launch = _Launch(call, scope, facts, {k: module.text(v) for k, v in {**bound, **options}.items()}, grid)
    _add_uses(module, launch, bound, options)
    return launch


def _add_uses(module: _Module, launch: _Launch, bound: dict[str, ast.expr], options: dict[str, ast.expr]) -> None:
    facts = launch.facts
    fn = module.functions[facts.name]
    defaults = _defaults(fn)
    for c in facts.constexprs:
        if c in facts.autotune_keys or (c in facts.heuristics and c not in bound):
            continue  # set by the decorator
        if c in bound:
            r = _resolve_arg(module, c, bound[c], launch.scope)
        elif c in defaults:
            r = module.resolve(defaults[c], module.module_scope())
            r.where = f"default of {facts.name}: {r.where}"
        else:
            r = _Resolved("unknown", "", f"{c} is not passed at the launch")
        launch.uses.append(_Use(-1, facts.name, c, "constexpr", r))
    if facts.autotuned:
        node, configs, why = module.autotune_list(fn)
        text = module.text(node) if node else ""
        r = _Resolved("configs" if configs else "unknown", text, why or "configs of @triton.autotune")
        span = _span(node) if node else None
        launch.uses.append(_Use(-1, facts.name, "autotune_configs", "autotune_configs", r, span, configs))
        return
    for opt, default in (("num_warps", DEFAULT_WARPS), ("num_stages", DEFAULT_STAGES)):
        if opt in options:
            r = _resolve_arg(module, opt, options[opt], launch.scope)
            launch.uses.append(_Use(-1, facts.name, opt, opt, r))
        else:
            r = _Resolved("insert", str(default), f"not passed: Triton's default {default}", None, default)
            launch.uses.append(_Use(-1, facts.name, opt, opt, r, _insertion_point(launch.call, opt)))


def _resolve_arg(module: _Module, name: str, expr: ast.expr, scope: _Scope) -> _Resolved:
    r = module.resolve(expr, scope)
    if r.node is expr:  # written at the launch itself
        r.where = f"{name}={r.text} (line {expr.lineno})"
    return r


def _insertion_point(call: ast.Call, name: str) -> Span:
    parts: list[Any] = [*call.args, *call.keywords]
    if not parts:
        # Just inside the closing parenthesis, which ends the call.
        line, col = call.end_lineno or call.lineno, (call.end_col_offset or 1) - 1
        return Span(line, col, line, col, 0, name, False)
    last = max(parts, key=lambda n: (n.end_lineno, n.end_col_offset))
    return Span(last.end_lineno, last.end_col_offset, last.end_lineno, last.end_col_offset, 0, name, True)


# --- grids ---------------------------------------------------------------------------------


def _grid_form(module: _Module, launch: _Launch) -> tuple[str, str, tuple[str, ...]]:
    """(kind, the expression a grid name stands for, meta keys a lambda reads)."""
    expr, resolved = launch.grid, ""
    if isinstance(expr, ast.Name):
        bind, _, _ = module.definition(expr.id, launch.scope)
        if bind is not None and bind.value is not None and bind.exact:
            expr, resolved = bind.value, module.text(bind.value)
    if isinstance(expr, ast.Lambda):
        meta = _params(expr)[0].arg if _params(expr) else None
        keys = [n.slice.value for n in ast.walk(expr.body) if isinstance(n, ast.Subscript)
                and isinstance(n.value, ast.Name) and n.value.id == meta
                and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str)]
        return "lambda", resolved, tuple(dict.fromkeys(keys))
    if isinstance(expr, (ast.Tuple, ast.List)):
        return "tuple", resolved, ()
    if isinstance(expr, ast.Call):
        return "call", resolved, ()
    return "other", resolved, ()


def _grid_literals(module: _Module, launch: _Launch) -> list[tuple[Span, int]]:
    """Integer literals the grid divides by (and the `255` of `(n + 255) // 256`, delta -1)."""
    out: list[tuple[Span, int]] = []
    seen: set[tuple[int, str]] = set()

    def lit(node: ast.expr, scope: _Scope, delta: int) -> None:
        r = module.resolve(node, scope)
        if r.kind == "literal" and r.node is not None:
            out.append((_span(r.node, delta), r.value - delta))

    def walk(node: ast.expr, scope: _Scope, depth: int) -> None:
        lambda_args = {p.arg for n in ast.walk(node) if isinstance(n, ast.Lambda) for p in _params(n)}
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and _last_name(n.func).endswith("cdiv") and len(n.args) >= 2:
                lit(n.args[1], scope, 0)
            elif isinstance(n, ast.BinOp) and isinstance(n.op, (ast.FloorDiv, ast.Div)):
                lit(n.right, scope, 0)
                if isinstance(n.left, ast.BinOp) and isinstance(n.left.op, ast.Add):
                    lit(n.left.right, scope, -1)
            elif isinstance(n, ast.Name) and n.id not in lambda_args and depth < 6:
                key = (id(scope.fn), n.id)
                bind, where, _ = module.definition(n.id, scope)
                if key not in seen and bind is not None and bind.value is not None and _fold(bind.value) is None:
                    seen.add(key)
                    walk(bind.value, where, depth + 1)

    walk(launch.grid, launch.scope, 0)
    return out


# --- from uses to tunables -----------------------------------------------------------------


class _Groups:
    """Union-find over literal spans: one group is one tunable."""

    def __init__(self) -> None:
        self.parent: dict[tuple, tuple] = {}

    def find(self, k: tuple) -> tuple:
        self.parent.setdefault(k, k)
        while self.parent[k] != k:
            self.parent[k] = self.parent[self.parent[k]]
            k = self.parent[k]
        return k

    def union(self, a: tuple, b: tuple) -> None:
        self.parent[self.find(a)] = self.find(b)


def _build_sites(module: _Module, launches: list[_Launch]) -> list[LaunchSite]:
    uses = []
    for i, launch in enumerate(launches):
        for u in launch.uses:
            u.launch = i
            if u.resolved.kind == "literal" and u.resolved.node is not None:
                u.span = _span(u.resolved.node)
            uses.append(u)
    groups, spans = _group_uses(module, launches, uses)
    tunable_of = _make_tunables(launches, uses, groups, spans)
    return [_site(module, launch, i, uses, tunable_of) for i, launch in enumerate(launches)]


def _use_key(u: _Use) -> tuple:
    if u.span is not None and u.span.insert is None:
        return ("span",) + u.span.key
    if u.span is not None:
        return ("insert", u.param) + u.span.key
    return ("launch", u.launch, u.param)


def _group_uses(module: _Module, launches: list[_Launch], uses: list[_Use]) -> tuple[_Groups, dict[tuple, Span]]:
    groups = _Groups()
    spans: dict[tuple, Span] = {}
    for u in uses:
        groups.find(_use_key(u))
        if u.span is not None:
            spans[_use_key(u)] = u.span
    owned = {u.span.key for u in uses if u.span is not None}
    for i, launch in enumerate(launches):
        blocks = [u for u in uses if u.launch == i and u.kind == "constexpr" and u.resolved.kind == "literal"]
        for span, value in _grid_literals(module, launch):
            if span.key in owned:
                continue  # the grid reads a value we already tune (a shared variable)
            for u in blocks:
                if isinstance(u.resolved.value, int) and u.resolved.value >= 4 and u.resolved.value == value:
                    key = ("span",) + span.key
                    spans[key] = span
                    groups.union(key, _use_key(u))
    return groups, spans


def _make_tunables(launches: list[_Launch], uses: list[_Use], groups: _Groups,
                   spans: dict[tuple, Span]) -> dict[int, Tunable]:
    """The tunable of each use, keyed by the use's position in `uses`."""
    members: dict[tuple, list[_Use]] = defaultdict(list)
    for u in uses:
        members[groups.find(_use_key(u))].append(u)
    locations: dict[tuple, list[Span]] = defaultdict(list)
    for key, span in spans.items():
        locations[groups.find(key)].append(span)
    by_root: dict[tuple, Tunable] = {}
    taken: set[str] = set()
    for root, group in members.items():  # first-use order: dicts keep insertion order
        tid = _fresh_id(f"{group[0].kernel}.{group[0].param}", taken)
        locs = tuple(sorted(set(locations[root]), key=lambda s: (s.line, s.col)))
        by_root[root] = _tunable(launches, tid, group, locs)
    return {i: by_root[groups.find(_use_key(u))] for i, u in enumerate(uses)}


def _fresh_id(base: str, taken: set[str]) -> str:
    tid, n = base, 1
    while tid in taken:
        n += 1
        tid = f"{base}#{n}"
    taken.add(tid)
    return tid


def _tunable(launches: list[_Launch], tid: str, group: list[_Use], locs: tuple[Span, ...]) -> Tunable:
    first = group[0]
    feeds = tuple(dict.fromkeys(f"{u.kernel}.{u.param}" for u in group))
    kinds = {u.kind for u in group}
    roles = frozenset().union(*(launches[u.launch].facts.roles.get(u.param, frozenset()) for u in group))
    current = first.configs if first.kind == "autotune_configs" else first.resolved.value
    why = first.resolved.where
    problem = _not_free(first, kinds, group, launches)
    return Tunable(
        id=tid,
        kind=first.kind,
        current=current,
        free=problem is None,
        why=problem or why,
        locations=locs if problem is None else (),
        legal=_legal(first.kind, current) if problem is None else (),
        roles=roles,
        feeds=feeds,
        relations=_relations(first.kind, roles, group),
    )


def _not_free(first: _Use, kinds: set[str], group: list[_Use], launches: list[_Launch]) -> str | None:
    r = first.resolved
    if len(kinds) > 1:
        return f"one value feeds {' and '.join(sorted(kinds))}: not tuned"
    if r.kind == "configs":
        return None
    if r.kind not in ("literal", "insert"):
        return r.where
    if first.kind != "constexpr":
        legal = WARPS if first.kind == "num_warps" else STAGES
        return None if r.value in legal else f"{r.value} is not a legal {first.kind}"
    for u in group:
        if not launches[u.launch].facts.roles.get(u.param, frozenset()) & TILE_ROLES:
            return f"{u.kernel}.{u.param} shapes no tensor (may carry meaning): {r.where}"
    if not is_pow2(r.value):
        return f"{r.value} is not a power of two: {r.where}"
    return None


def _legal(kind: str, current: Any) -> tuple[int, ...]:
    if kind == "num_warps":
        return WARPS
    if kind == "num_stages":
        return STAGES
    if kind == "constexpr":
        values = {1 << p for p in range(BLOCK_MIN.bit_length() - 1, BLOCK_MAX.bit_length())}
        return tuple(sorted(values | {current}))
    return ()


def _relations(kind: str, roles: frozenset[str], group: list[_Use]) -> tuple[str, ...]:
    out = []
    if kind == "constexpr":
        if "arange" in roles:
            out.append("tl.arange size: a power of two")
        if roles & DOT_ROLES:
            out.append(f"tl.dot dimension: >= {DOT_MIN}")
        if "loop_step" in roles:
            out.append("loop step: the loop count follows it")
    if kind == "num_warps":
        out.append("threads per program = 32 * num_warps")
    if kind == "num_stages":
        out.append("software-pipelined loads: shared memory grows with num_stages")
    if kind == "autotune_configs":
        keys = sorted({k for u in group for c in (u.configs or ()) for k, _ in c.kwargs})
        out.append(f"each config sets {', '.join(keys) or 'only warps/stages'}; the grid must read them from meta")
    return tuple(out)


def _site(module: _Module, launch: _Launch, index: int, uses: list[_Use], tunable_of: dict[int, Tunable]) -> LaunchSite:
    by_param = {u.param: tunable_of[i] for i, u in enumerate(uses) if u.launch == index}
    _set_pairs(launch.facts, by_param)
    kind, resolved, meta = _grid_form(module, launch)
    scope = launch.scope
    return LaunchSite(
        kernel=launch.facts.name,
        line=launch.call.lineno,
        function=scope.fn.name if scope.fn else "",
        via=scope.chain,
        grid=module.text(launch.grid),
        grid_kind=kind,
        grid_resolved=resolved,
        grid_meta=meta,
        args=launch.args,
        bindings={p: t.id for p, t in by_param.items()},
        tunables=list({t.id: t for t in by_param.values()}.values()),
        facts=launch.facts,
    )


def _set_pairs(facts: KernelFacts, by_param: dict[str, Tunable]) -> None:
    for tile in facts.tiles:
        for a in tile:
            for b in tile:
                ta, tb = by_param.get(a), by_param.get(b)
                if ta is not None and tb is not None and ta is not tb and tb.id not in ta.pairs:
                    ta.pairs = ta.pairs + (tb.id,)
                    ta.relations = ta.relations + (f"2D tile with {tb.id}: product <= {MAX_TENSOR_NUMEL}",)
