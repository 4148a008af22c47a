"""Replay the host code that computes a launch value, on one case's captured runtime values.

A launch value that is not a literal (`min(triton.next_power_of_2(n_cols), 1024)`,
`cfg["BLOCK_M"]` with `cfg = CONFIGS[x.dtype]`, `4 if BLOCK < 2048 else 8`, a helper's
return value, a `@triton.heuristics` lambda) is still a function of the file's integer
literals once the runtime inputs are known. `Replay` evaluates such an expression the way
Python would, reading names from the function body (assignments and `if` chains, replayed
in order) and, where the body does not say, from the locals captured at the launch. It
records which integer literals the value read, so a rewrite can change exactly those.

Only side-effect-free host code is understood: arithmetic, comparisons, conditionals and
`match`, `min`/`max`/`abs`/`int`/`divmod`, `triton.next_power_of_2`/`cdiv`, `math`, dict/list/tuple
literals and subscripts, tensor `.shape`/`.dtype`/`.numel()`/`.stride()`, enum members,
environment variables, CUDA's availability and capability, and calls of plain helper
functions of the same file (`replay_values` holds the values and functions). Anything else is
`UNKNOWN`, never a guess.
"""

from __future__ import annotations

import ast
import operator
import os
from typing import Any, Callable

from tritonforge.analysis.astfold import last_name
from tritonforge.analysis.launch_sites.model import CONFIG_OPTIONS
from tritonforge.analysis.launch_sites.replay_statements import MISSING, Frame, Helper, LazyDict, Thunk
from tritonforge.analysis.launch_sites.replay_tables import NOT_FOUND, TableReplay
from tritonforge.analysis.launch_sites.replay_values import (
    BINOPS, COMPARE, DEVICE_QUERIES, ELEMENT_SIZE, FUNCTIONS, INT_METHODS, MAX_DEPTH, MODULES, STR_ARG_METHODS,
    STR_METHODS, THIS_MODULE, TRITON_FUNCTIONS, UNKNOWN, ClassValue, ContextVarValue, Dotted, EnumClass, EnumMember,
    DeviceValue, Instance, Items, ModuleGlobals, Record, TensorValue, device_query, literal_int, same_key, torch_build)
from tritonforge.analysis.launch_sites.syntax import config_table, keyword_dict

__all__ = ["Frame", "Replay"]


class Replay(TableReplay):
    """Evaluate expressions of one source file on one case, with literals optionally replaced.

    `edits` maps id(ast.Constant) to the value that literal should have; `reads` collects
    the integer literals an evaluation depended on (reset it before each evaluation).
    """

    def __init__(self, tree: ast.Module, captured: dict[str, dict[str, Any]],
                 edits: dict[int, int] | None = None) -> None:
        self.tree = tree
        self.functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        self.enums = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)
                      and any(last_name(b).endswith("Enum") for b in n.bases)}
        self.classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef) and n.name not in self.enums}
        self.captured = captured  # function name -> its locals at the launch
        self.edits = edits or {}
        self.reads: list[ast.Constant] = []
        # A loop's work items read as the first item's: literals of each column, by the first's id.
        self.columns: dict[int, tuple[ast.Constant, ...]] = {}
        self._module: Frame | None = None
        self._depth = 0
        self._once: dict[tuple[int, str], bool] = {}

    def value_of(self, node: ast.expr, frame: Frame) -> tuple[Any, list[ast.Constant]]:
        """The value of `node` in `frame` and the integer literals it read, in order, once each."""
        self.reads = []
        value = self.eval(node, frame)
        return value, list({id(c): c for c in self.reads}.values())

    # --- frames -----------------------------------------------------------------------


    # --- expressions ------------------------------------------------------------------
    def name(self, name: str, frame: Frame) -> Any:
        if name in frame.values:
            read = len(self.reads)
            got = self.force(frame.values[name])
            if got is UNKNOWN and name in frame.captured and self._bound_once(frame.fn, name) \
                    and not any(id(c) in self.edits for c in self.reads[read:]):
                # Host code replay cannot follow (`X = X.contiguous().view(-1, d)`): the
                # launch's own local holds the one value this name ever had there, and the
                # literals the failed replay read (an index `[-1]`) decide nothing. Not so
                # where it read an edited literal: the capture is of the code before the edit
                # (`_WARPS[BLOCK]` with BLOCK moved to a key the table lacks).
                del self.reads[read:]
                return frame.captured[name]
            return got
        if name in frame.captured:
            return frame.captured[name]
        module = self.module_frame()
        if frame is not module and name in module.values:
            return self.force(module.values[name])
        if name in FUNCTIONS or name in MODULES:
            return Dotted(name)
        if name in ("globals", "__name__"):
            return Dotted(name) if name == "globals" else THIS_MODULE
        if name in TRITON_FUNCTIONS:  # from triton import next_power_of_2
            return Dotted(f"triton.{name}")
        if name in self.functions:
            return Helper(self.functions[name])
        if name in self.enums:
            return EnumClass(self.enums[name])
        if name in self.classes:
            return ClassValue(self.classes[name])
        return UNKNOWN

    def eval(self, node: ast.expr, frame: Frame) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                return UNKNOWN
            return self._eval(node, frame)
        except (ArithmeticError, TypeError, ValueError, IndexError, KeyError, RecursionError):
            return UNKNOWN
        finally:
            self._depth -= 1

    def _eval(self, node: ast.expr, frame: Frame) -> Any:
        if isinstance(node, ast.Constant):
            return self._constant(node)
        if isinstance(node, ast.Name):
            return self.name(node.id, frame)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, frame)
        if isinstance(node, ast.BinOp):
            read = len(self.reads)
            left = self.eval(node.left, frame)
            if isinstance(node.op, ast.Pow) and isinstance(node.left, ast.Constant):
                del self.reads[read:]  # the 2 of `2 ** ceil(log2(n))`: a power of two, not a knob
            sized = len(self.reads) == read and not isinstance(node.left, ast.Constant)  # read no literal
            right = self.eval(node.right, frame)
            if sized and isinstance(node.op, (ast.FloorDiv, ast.RShift)) and isinstance(node.right, ast.Constant):
                del self.reads[read:]  # unsloth's `head_dim // 2`: which part of a size, not a knob
            return self._apply(BINOPS.get(type(node.op)), left, right)
        if isinstance(node, ast.UnaryOp):
            v = self.eval(node.operand, frame)
            if v is UNKNOWN:
                return UNKNOWN
            return {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
                    ast.Invert: operator.invert}[type(node.op)](v)
        if isinstance(node, ast.Compare):
            return self._compare(node, frame)
        if isinstance(node, ast.BoolOp):
            return self._boolop(node, frame)
        if isinstance(node, ast.IfExp):
            test = self.eval(node.test, frame)
            return UNKNOWN if test is UNKNOWN else self.eval(node.body if test else node.orelse, frame)
        if isinstance(node, (ast.Tuple, ast.List)):
            items, parts = [], []
            for e in node.elts:
                at = len(self.reads)
                items.append(self.eval(e, frame))
                parts.append(tuple(self.reads[at:]))
            return Items(items, parts)
        if isinstance(node, ast.Dict):
            return LazyDict(self, node, frame)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, frame)
        if isinstance(node, ast.ListComp):
            return self._comprehension(node, frame)
        if isinstance(node, ast.DictComp):
            return self._dict_comprehension(node, frame)
        if isinstance(node, ast.Call):
            return self._call(node, frame)
        if isinstance(node, ast.NamedExpr):
            return self.eval(node.value, frame)  # its name is bound by the statement (`_walrus`)
        if isinstance(node, ast.Lambda):
            return Helper(node, frame)
        if isinstance(node, ast.JoinedStr):  # f"BLOCK_{kind.upper()}": a name built at run time
            return self._fstring(node, frame)
        return UNKNOWN

    def _constant(self, node: ast.Constant) -> Any:
        v = node.value
        if isinstance(v, int) and not isinstance(v, bool):
            self.reads.append(node)
            return self.edits.get(id(node), v)
        if literal_int(node) is not None:  # `int(os.environ.get("LIB_BLOCK", "512"))`: the default's digits
            self.reads.append(node)
            return str(self.edits[id(node)]) if id(node) in self.edits else v
        return v

    def _attribute(self, node: ast.Attribute, frame: Frame) -> Any:
        base = self.eval(node.value, frame)
        if isinstance(base, Dotted):
            dotted = f"{base.name}.{node.attr}"
            if dotted in ("triton.__version__", "torch.__version__"):  # lightllm's `if triton.__version__ >= "2.1.0":`
                return _installed_version(base.name)
            if base.name == "torch" or dotted.startswith("torch."):
                return dotted  # torch.float16 and the like: compared by name
            return Dotted(dotted)
        if isinstance(base, (TensorValue, DeviceValue)):
            return base.attr(node.attr)
        if isinstance(base, ModuleGlobals):  # `sys.modules[__name__].BLOCK`
            got = self.global_named(node.attr)
            return UNKNOWN if got is MISSING else got
        if isinstance(base, LazyDict) and base.namespace:
            return base.get(node.attr)
        if isinstance(base, EnumClass):  # `Tile.LARGE`: an IntEnum's member is its value
            member = base.member(node.attr)
            if member is None:
                return UNKNOWN
            return self.eval(member, self.module_frame()) if base.is_int else EnumMember(base.node.name, node.attr, member)
        if isinstance(base, ClassValue):
            return self._class_attribute(base, node.attr)
        if isinstance(base, Instance):
            if node.attr in base.attrs:
                self.reads.extend(base.made_reads)
                return self.force(base.attrs[node.attr])
            return self._class_attribute(base.cls, node.attr, base)
        if isinstance(base, Record):
            if node.attr in base.fields:
                expr, where = base.fields[node.attr]
                return self.eval(expr, where)
            method = base.cls.method(node.attr) if base.cls is not None else None  # `cfg.block`, a property
            if method is None or method[1] not in ("property", "plain"):
                return UNKNOWN
            helper = Helper(method[0], bound=(base,))
            return helper.call(self, [], {}) if method[1] == "property" else helper
        if isinstance(base, EnumMember) and node.attr == "value":
            return self.eval(base.value, self.module_frame())
        if base == "torch.cuda":  # torch.cuda.is_available and the like (see DEVICE_QUERIES)
            return f"torch.cuda.{node.attr}"
        if base == "torch.version" and node.attr in ("hip", "cuda"):  # SGLang's `_is_hip = torch.version.hip is not None`
            return torch_build(node.attr)
        if isinstance(base, str) and node.attr == "itemsize":
            return ELEMENT_SIZE.get(base.removeprefix("torch."), UNKNOWN)
        return UNKNOWN

    def _record(self, cls: ClassValue, call: ast.Call, frame: Frame) -> Any:
        """`LaunchConfig(vec=2, num_warps=2)`: each field's expression, given or defaulted."""
        fields = cls.fields() or []
        names = [name for name, _ in fields]
        given: dict[str, tuple[ast.expr, Any]] = dict(zip(names, ((a, frame) for a in call.args)))
        given.update({k.arg: (k.value, frame) for k in call.keywords if k.arg})
        if len(call.args) > len(names) or set(given) - set(names):
            return UNKNOWN
        missing = [name for name, default in fields if name not in given and default is None]
        given.update({name: (default, self.module_frame()) for name, default in fields
                      if name not in given and default is not None})
        return Record(cls, given) if not missing else self._post_init(cls, given, missing)

    def _post_init(self, cls: ClassValue, given: dict[str, tuple[ast.expr, Any]], missing: list[str]) -> Any:
        """A record whose fields without a default (`field(init=False)`) its `__post_init__`
        sets (`self.block = 64`): each read where the method sets it."""
        post = cls.method("__post_init__")
        if post is None:
            return UNKNOWN
        made = Instance(cls, {name: Thunk(expr, where) for name, (expr, where) in given.items()})
        Helper(post[0], bound=(made,)).call(self, [], {})
        for name in missing:
            got = made.attrs.get(name)
            if not isinstance(got, Thunk) or got.control or got.path:
                return UNKNOWN
            given[name] = (got.expr, got.frame)
        return Record(cls, given)

    @staticmethod
    def _replaced(record: Record, call: ast.Call, frame: Frame) -> Any:
        """`cfg._replace(block=2048)`: the same record with the fields the call gives."""
        given = {k.arg: (k.value, frame) for k in call.keywords if k.arg}
        if set(given) - set(record.fields) or any(k.arg is None for k in call.keywords):
            return UNKNOWN
        return Record(record.cls, {**record.fields, **given})

    def _instance(self, cls: ClassValue, args: list[Any], kwargs: dict[str, Any]) -> Instance:
        """`KernelConfig(num_warps=1)` of a plain class: its `__init__` replayed on a new instance."""
        made = Instance(cls)
        init = cls.method("__init__")
        if init is not None:
            Helper(init[0], bound=(made,)).call(self, args, kwargs)
        return made

    def _class_attribute(self, cls: ClassValue, attr: str, instance: Instance | None = None) -> Any:
        """`Cls.X`, `cls.X` or `self.X` not set by `__init__`: a literal of the class body, or a
        method replay can call."""
        value = cls.attribute(attr)
        if value is not None:
            return self.eval(value, self.module_frame())
        method = cls.method(attr)
        if method is None:
            # `_Tuning.AddRMSNorm.BLOCK`: a class nested in the class body, a namespace of its own.
            inner = next((n for n in cls.node.body if isinstance(n, ast.ClassDef) and n.name == attr), None)
            return UNKNOWN if inner is None or inner.bases else ClassValue(inner)
        fn, binding = method
        if binding == "property":  # `self.block` of a `@property`: its value, as Python reads it
            return Helper(fn, bound=(instance or cls,)).call(self, [], {})
        if binding == "plain" and instance is not None:
            return Helper(fn, bound=(instance,))
        return Helper(fn, bound=(cls,) if binding == "class" else ())

    def _apply(self, op: Callable[[Any, Any], Any] | None, a: Any, b: Any) -> Any:
        if op is None or a is UNKNOWN or b is UNKNOWN:
            return UNKNOWN
        return op(a, b)

    def _compare(self, node: ast.Compare, frame: Frame) -> Any:
        left = self.eval(node.left, frame)
        for op, right_node in zip(node.ops, node.comparators):
            right = self.eval(right_node, frame)
            fn = COMPARE.get(type(op))
            if fn is None or left is UNKNOWN or right is UNKNOWN:
                return UNKNOWN
            holds = self._contains(left, right, op) if isinstance(right, LazyDict) else fn(left, right)
            if holds is UNKNOWN:  # `x is y` of objects replay stands in for
                return UNKNOWN
            if not holds:
                return False
            left = right
        return True

    @staticmethod
    def _contains(key: Any, table: LazyDict, op: ast.cmpop) -> Any:
        """`key in table` (`if key not in _CACHE:` before filling a module cache)."""
        if not isinstance(op, (ast.In, ast.NotIn)):
            return UNKNOWN
        found = table.entry(key)
        return UNKNOWN if found is UNKNOWN else (found is MISSING) == isinstance(op, ast.NotIn)

    def _boolop(self, node: ast.BoolOp, frame: Frame) -> Any:
        value: Any = None
        for v in node.values:
            value = self.eval(v, frame)
            if value is UNKNOWN:
                return UNKNOWN
            if isinstance(node.op, ast.And) and not value:
                return value
            if isinstance(node.op, ast.Or) and value:
                return value
        return value

    def _subscript(self, node: ast.Subscript, frame: Frame) -> Any:
        start = len(self.reads)
        base = self.eval(node.value, frame)
        read = len(self.reads)
        key = self.eval(node.slice, frame)
        if base is UNKNOWN or key is UNKNOWN:
            return UNKNOWN
        if isinstance(base, tuple) and base and all(isinstance(x, str) for x in base):
            del self.reads[read:]  # `.split(".")[-1]`: which part of a name, not a tuning knob
        if isinstance(base, LazyDict):
            return base.get(key)
        if isinstance(base, ModuleGlobals):  # `globals()["BLOCK"]`: a name the module lacks is a KeyError
            got = self.global_named(key)
            return UNKNOWN if got is MISSING else got
        if base == Dotted("sys.modules") and key == THIS_MODULE:
            return ModuleGlobals()
        if isinstance(base, dict):
            if isinstance(node.slice, ast.Constant):
                del self.reads[read:]  # `configs[1024]`: which entry, written out, not a knob
            return self.force(next((v for k, v in base.items() if same_key(k, key)), UNKNOWN))
        if isinstance(base, tuple) and isinstance(key, int) and not isinstance(key, bool):
            if isinstance(node.slice, (ast.Constant, ast.UnaryOp)):
                del self.reads[read:]  # `x.shape[1]`, `cfg[0]`: which item, written out, not a knob
            self.keep_item(start, base, key)
            return self.force(base[key])  # a class's `*args` are read where used
        if isinstance(base, Instance) and (method := base.cls.method("__getitem__")) is not None:
            self.reads.extend(base.made_reads)  # a Mapping subclass (kernl's config objects)
            return Helper(method[0], bound=(base,)).call(self, [key], {})
        return UNKNOWN

    def _call(self, node: ast.Call, frame: Frame) -> Any:
        func = node.func
        if isinstance(func, ast.Attribute):
            owner = self.eval(func.value, frame)
            if isinstance(owner, TensorValue):
                return owner.method(func.attr, [self.eval(a, frame) for a in node.args])
            if ast.unparse(func) in ("os.environ.get", "os.getenv") and node.args and not node.keywords:
                return self._environ(node, frame)
            if isinstance(owner, str) and func.attr in STR_METHODS and not node.args:
                return getattr(owner, func.attr)()
            if isinstance(owner, str) and func.attr in STR_ARG_METHODS and not node.keywords:
                args = [self.eval(a, frame) for a in node.args]
                got = getattr(owner, func.attr)(*args) if all(isinstance(a, str) for a in args) else UNKNOWN
                return tuple(got) if isinstance(got, list) else got
            if isinstance(owner, int) and func.attr in INT_METHODS and not node.args:
                return getattr(owner, func.attr)()  # `1 << (n - 1).bit_length()`: a power of two by bits
            if isinstance(owner, ContextVarValue) and func.attr == "get" and not node.keywords and len(node.args) < 2:
                default = node.args[0] if node.args else owner.default  # `var.get(fallback)` before the var's own
                return UNKNOWN if default is None else self.eval(default, frame if node.args else owner.frame)
            if isinstance(owner, Record) and func.attr == "_replace" and not node.args:  # NamedTuple
                return self._replaced(owner, node, frame)
            if isinstance(owner, Record) and func.attr == "_asdict" and not node.args and not node.keywords:
                return LazyDict(self, ast.Dict([], []), frame).with_fields(owner)  # `**tiles._asdict()`
            if isinstance(owner, LazyDict) and func.attr in ("items", "keys", "values") and not node.args:
                return owner.listing(func.attr)  # `for k, v in _TUNED.items()`
            if isinstance(owner, dict) and func.attr in ("items", "keys", "values") and not node.args:
                items = [(k, self.force(v)) for k, v in owner.items()]  # of a dict a comprehension made
                return tuple(items if func.attr == "items" else [kv[func.attr == "values"] for kv in items])
            if isinstance(owner, ModuleGlobals) and func.attr == "get" and node.args and not node.keywords:
                got = self.global_named(self.eval(node.args[0], frame))
                return got if got is not MISSING else self.eval(node.args[1], frame) if len(node.args) > 1 else None
            # `.pop(key, default)` reads as `.get`: the launcher's `**kwargs`, which pops, is
            # taken as its caller passed it (`Replay.function_frame`), not as captured after.
            if isinstance(owner, (LazyDict, dict)) and func.attr in ("get", "pop") and node.args:
                key = self.eval(node.args[0], frame)
                got = owner.lookup(key) if isinstance(owner, LazyDict) else self.force(self._subscript_dict(owner, key))
                if got is MISSING or got is UNKNOWN and not isinstance(owner, LazyDict):
                    return self.eval(node.args[1], frame) if len(node.args) > 1 else None
                return got
        target = self.eval(func, frame)
        if target is UNKNOWN and isinstance(func, ast.Name) and func.id == "dict" and not node.args:
            return LazyDict(self, keyword_dict(node), frame)  # `dict(**_BASE, BLOCK=256)`: a display
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return UNKNOWN
        made = last_name(func)
        args: list[Any] | None = None
        if made in ("replace", "asdict") and len(node.args) == 1 and _from_dataclasses(target):
            args = [self.eval(node.args[0], frame)]
            if isinstance(args[0], Record):  # dataclasses.replace(cfg, block=2048), **asdict(cfg)
                return (self._replaced(args[0], node, frame) if made == "replace"
                        else LazyDict(self, ast.Dict([], []), frame).with_fields(args[0]))
        if isinstance(target, ClassValue) and target.fields() is not None:
            return self._record(target, node, frame)
        if isinstance(target, Dotted) and target.name.startswith("triton") and made == "Config":
            return _triton_config(node, frame)  # `cfg = _CONFIGS[0]`, then `cfg.kwargs["BLOCK"]`, `cfg.num_warps`
        if made == "next" and isinstance(func, ast.Name) and target is UNKNOWN and len(node.args) in (1, 2) \
                and isinstance(node.args[0], (ast.GeneratorExp, ast.Call)):  # `next(c for c in _CONFIGS if ...)`
            got = self._first(node.args[0], frame)
            return self.eval(node.args[1], frame) if got is NOT_FOUND and len(node.args) == 2 else \
                UNKNOWN if got is NOT_FOUND else got
        if made in ("min", "max") and isinstance(func, ast.Name) and len(node.args) == 1 \
                and [k.arg for k in node.keywords] == ["key"]:
            return self._extreme(node, made, frame)
        if target is UNKNOWN and made == "getattr" and isinstance(func, ast.Name) and len(node.args) in (2, 3):
            return self._getattr(node, frame)
        if target is UNKNOWN and made == "defaultdict" and node.args and not node.keywords:
            return self._defaultdict(node, frame)
        if made == "ContextVar" and (target is UNKNOWN or target == Dotted("contextvars.ContextVar")):
            return ContextVarValue(next((k.value for k in node.keywords if k.arg == "default"), None), frame)
        if target is UNKNOWN and made == "MappingProxyType" and len(node.args) == 1 and not node.keywords:
            return self.eval(node.args[0], frame)  # `types.MappingProxyType({...})`: a read-only view
        if target is UNKNOWN and made == "dict" and isinstance(func, ast.Name) and len(node.args) == 1 \
                and not node.keywords:
            zipped = self._zipped(node.args[0], frame)
            copied = self.eval(node.args[0], frame) if zipped is None else zipped  # `dict(kwargs)`: a copy
            return dict(copied) if isinstance(copied, dict) else copied if isinstance(copied, LazyDict) else UNKNOWN
        if target is UNKNOWN and not node.args and made == "SimpleNamespace":
            return LazyDict(self, keyword_dict(node), frame, True)
        if isinstance(target, ClassValue):  # each argument read where `__init__` uses it, charged there
            return self._instance(target, [Thunk(a, frame) for a in node.args],
                                  {k.arg: Thunk(k.value, frame) for k in node.keywords if k.arg})
        args = args if args is not None else [self.eval(a, frame) for a in node.args]
        kwargs = {k.arg: self.eval(k.value, frame) for k in node.keywords if k.arg}
        if isinstance(target, Helper):
            return target.call(self, args, kwargs)
        if target == Dotted("globals") and not args and not kwargs:
            return ModuleGlobals()
        if isinstance(target, str) and target in DEVICE_QUERIES:
            return device_query(target)
        if isinstance(target, Dotted):
            fn = FUNCTIONS.get(target.name)
            if fn is None and target.name.startswith("triton."):
                fn = TRITON_FUNCTIONS.get(target.name.rsplit(".", 1)[-1])
            if fn is None or any(v is UNKNOWN for v in [*args, *kwargs.values()]):
                return UNKNOWN
            return fn(*args, **kwargs)
        return UNKNOWN

    def global_named(self, name: Any) -> Any:
        """A name of the file's namespace looked up by a string (`globals().get("BLOCK", 128)`):
        read as if written; MISSING where the module never binds it."""
        module = self.module_frame()
        if not isinstance(name, str):
            return UNKNOWN
        if name in module.values or name in self.functions or name in self.classes or name in self.enums:
            return self.name(name, module)
        return MISSING

    def _getattr(self, node: ast.Call, frame: Frame) -> Any:
        """`getattr(_Tiles, f"BLOCK_{kind.upper()}")`: the attribute the name comes to, read as
        if written out (its literal is the one a move edits)."""
        name = self.eval(node.args[1], frame)
        if not (isinstance(name, str) and name.isidentifier()):
            return UNKNOWN
        got = self.eval(ast.Attribute(value=node.args[0], attr=name, ctx=ast.Load()), frame)
        return self.eval(node.args[2], frame) if got is UNKNOWN and len(node.args) == 3 else got

    def _defaultdict(self, node: ast.Call, frame: Frame) -> Any:
        """`collections.defaultdict(lambda: 2, {...})`: the table, and its factory for the keys
        it lacks."""
        factory = self.eval(node.args[0], frame)
        table = self.eval(node.args[1], frame) if len(node.args) > 1 else LazyDict(self, ast.Dict([], []), frame)
        if not isinstance(factory, Helper) or not isinstance(table, LazyDict):
            return UNKNOWN
        return table.with_default(factory)

    def _fstring(self, node: ast.JoinedStr, frame: Frame) -> Any:
        parts = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                value = self.eval(part.value, frame)
                if part.conversion != -1 or part.format_spec is not None or not isinstance(value, (str, int)):
                    return UNKNOWN
                parts.append(str(value))
            else:
                parts.append(str(getattr(part, "value", "")))
        return "".join(parts)

    def _environ(self, node: ast.Call, frame: Frame) -> Any:
        """An environment variable as this process sees it (a candidate runs under the same
        environment); its default, and the literals that default reads, when it is not set."""
        name = self.eval(node.args[0], frame)
        if not isinstance(name, str):
            return UNKNOWN
        if name in os.environ:
            return os.environ[name]
        return self.eval(node.args[1], frame) if len(node.args) > 1 else None

    @staticmethod
    def _subscript_dict(d: dict, key: Any) -> Any:
        return next((v for k, v in d.items() if same_key(k, key)), UNKNOWN)


def _from_dataclasses(target: Any) -> bool:
    """`replace`/`asdict` as imported from dataclasses (by name or through the module), not a
    function of the file's own by the same name."""
    return target is UNKNOWN or isinstance(target, Dotted) and target.name.startswith("dataclasses.")


def _triton_config(node: ast.Call, frame: Frame) -> Any:
    """A `triton.Config(...)` as a record of what it was given: `kwargs` (its dict) and the
    options written (`num_warps`, `num_stages`, ...); an option not written reads as unknown."""
    table = config_table(node)
    if table is None:
        return UNKNOWN
    fields = {"kwargs": (table, frame)}
    fields.update({k.arg: (k.value, frame) for k in node.keywords if k.arg in CONFIG_OPTIONS})
    return Record(None, fields)  # type: ignore[arg-type]


def _installed_version(module: str) -> Any:
    """The version of triton or torch this process has, which the worker that runs the
    candidates shares (a module-level branch on it is taken as the candidates take it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(module)
    except PackageNotFoundError:
        return UNKNOWN
