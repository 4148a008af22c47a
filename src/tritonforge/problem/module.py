"""Worker-side view of a problem file: import it and read what it declares.

Only worker processes import user code (see `tritonforge.worker`); errors here
become `ProblemError`s, one line naming the file and what is wrong.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import inspect
import itertools
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from tritonforge.problem.custom_ops import own_operator_names
from tritonforge.problem.inputs import InputSpec, SpecError
from tritonforge.problem.spec import Case, Parameter, Problem, ProblemError, Tolerance


def syntax_error(path: Path) -> str | None:
    """One line describing why `path` is not valid Python, or None when it parses."""
    try:
        ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as e:
        return f"does not parse: {e.msg}" + (f" (line {e.lineno})" if e.lineno else "")
    except (OSError, UnicodeDecodeError) as e:
        return unreadable(e)
    return None


def unreadable(e: OSError | UnicodeDecodeError) -> str:
    """Why a file could not be read as source, in words rather than a codec's."""
    if isinstance(e, UnicodeDecodeError):
        return f"is not a Python source file (byte {e.object[e.start]:#04x} at offset {e.start} is not UTF-8 text)"
    return f"cannot be read: {e.strerror or e}"


def import_file(path: Path, prefix: str) -> ModuleType:
    """Import a Python file under a name unique to its path and contents.

    Triton reads kernel sources back through `inspect`, so the module is registered in
    `sys.modules` and keeps its real file name.
    """
    path = path.resolve()
    data = path.read_bytes()
    digest = hashlib.sha1(str(path).encode() + data).hexdigest()[:12]
    name = f"_tf_{prefix}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    renamed = own_operator_names(data.decode(errors="replace"), f"tf{prefix}{digest}")
    try:
        if renamed is None:
            spec.loader.exec_module(module)
        else:  # operators of its own, so another file's cannot replace them
            exec(compile(renamed, str(path), "exec"), module.__dict__)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def signature_of(fn: Callable) -> list[Parameter]:
    """The parameters a caller passes; for an autograd Function's `apply` (an entry written
    `layer_norm = LayerNorm.apply`), its `forward`'s after `ctx`; for an operator made with
    torch.library.triton_op or custom_op, its schema's."""
    schema = getattr(getattr(fn, "_opoverload", None), "_schema", None)  # a CustomOpDef
    if schema is not None:
        return [Parameter(name=a.name, kind="KEYWORD_ONLY" if a.kwarg_only else "POSITIONAL_OR_KEYWORD",
                          default=repr(a.default_value) if a.has_default_value() else None)
                for a in schema.arguments]
    owner = getattr(fn, "__self__", None)
    forward = getattr(owner, "forward", None) if getattr(fn, "__name__", "") == "apply" else None
    if isinstance(owner, type) and forward is not None and _is_autograd_function(owner):
        found = list(inspect.signature(forward).parameters.values())[1:]
    else:
        found = list(inspect.signature(fn).parameters.values())
    params = []
    for p in found:
        default = None if p.default is inspect.Parameter.empty else repr(p.default)
        params.append(Parameter(name=p.name, kind=p.kind.name, default=default))
    return params


def _is_autograd_function(cls: type) -> bool:
    import torch

    return issubclass(cls, torch.autograd.Function)


def _beside(path: Path) -> None:
    """The problem's folder on the import path, as Python puts a script's: kernels kept in a
    module beside it (`from _kernels import add_kernel`) import wherever a candidate of it runs."""
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)


class ProblemModule:
    """An imported problem file together with the choices the user made on the command line."""

    def __init__(self, path: Path, entry: str | None = None, specs: list[str] | None = None):
        self.path = Path(path)
        where = syntax_error(self.path)
        if where:
            raise ProblemError(self.path, where)
        _beside(self.path)
        try:
            self.module = import_file(self.path, "problem")
        except BaseException as e:  # a problem's top level may raise anything
            raise ProblemError(self.path, f"importing it raised {_one_line(e)}") from None
        self.entry_name = entry or getattr(self.module, "ENTRY", None)
        if not self.entry_name:
            raise ProblemError(self.path, "defines no ENTRY (set ENTRY = \"name\" or pass --entry)")
        if not isinstance(self.entry_name, str):
            raise ProblemError(self.path, f"ENTRY must be a string, not {type(self.entry_name).__name__}")
        if not hasattr(self.module, self.entry_name):
            raise ProblemError(self.path, f"has no function named '{self.entry_name}' (ENTRY)")
        self.entry = getattr(self.module, self.entry_name)
        if not callable(self.entry):
            raise ProblemError(self.path, f"ENTRY names '{self.entry_name}', which is not a function"
                                          f" ({type(self.entry).__name__})")
        params = signature_of(self.entry)
        self.param_names = [p.name for p in params]
        # The parameters make_inputs must give; the ones after them may keep their defaults.
        optional = itertools.takewhile(lambda p: p.default is not None or p.kind.startswith("VAR_"), reversed(params))
        self.required = len(params) - len(list(optional))
        self.specs = [self._parse_spec(s) for s in specs or []]
        self.make_inputs = getattr(self.module, "make_inputs", None)
        if not self.specs and not callable(self.make_inputs):
            raise ProblemError(self.path, "defines no make_inputs(seed, device, **shape) (or pass --inputs)")
        reference = getattr(self.module, "reference", None)
        if reference is not None and not callable(reference):
            raise ProblemError(self.path, "reference is not a function")
        self.reference = reference
        self.tolerance = self._tolerance()
        self.outputs = self._outputs()
        self.flops = self._hook("FLOPS")
        self.bytes = self._hook("BYTES")

    # --- declarations -------------------------------------------------------------
    def _parse_spec(self, text: str) -> InputSpec:
        try:
            spec = InputSpec.parse(text)
            missing = [n for n in self._passed(spec) if n not in spec.args]
            unknown = [n for n in spec.args if n not in self.param_names]
        except SpecError as e:
            raise ProblemError(self.path, f"--inputs: {e}") from None
        if missing or unknown:
            raise ProblemError(
                self.path,
                f"--inputs '{text}' must name the parameters of {self.entry_name}"
                f"{tuple(self.param_names)} (missing {missing}, unknown {unknown})",
            )
        return spec

    def _passed(self, spec: InputSpec) -> list[str]:
        """The parameters an input spec passes, by position: the required ones and every one up
        to the last it names (a defaulted one it leaves out keeps its default)."""
        named = [i for i, n in enumerate(self.param_names) if n in spec.args]
        return self.param_names[:max([self.required - 1, *named]) + 1]

    def _shapes(self, attr: str, default: Any) -> list[Case]:
        value = getattr(self.module, attr, default)
        if not isinstance(value, (list, tuple)) or not all(isinstance(s, dict) for s in value):
            raise ProblemError(self.path, f"{attr} must be a list of dicts of make_inputs keyword arguments")
        if not value:
            raise ProblemError(self.path, f"{attr} is empty")
        return [Case(params=dict(s)) for s in value]

    def cases(self) -> tuple[list[Case], list[Case]]:
        if self.specs:
            cases = [Case(params={}, spec=s.text) for s in self.specs]
            return cases, cases
        shapes = self._shapes("SHAPES", [{}])
        return shapes, self._shapes("TEST_SHAPES", [c.params for c in shapes])

    def _tolerance(self) -> Tolerance | None:
        tol = getattr(self.module, "TOLERANCE", None)
        if tol is None:
            return None
        ok = isinstance(tol, dict) and set(tol) <= {"atol", "rtol"} and tol
        ok = ok and all(isinstance(v, (int, float)) and v >= 0 for v in tol.values())
        if not ok:
            raise ProblemError(self.path, 'TOLERANCE must look like {"atol": 1e-3, "rtol": 1e-3}')
        return Tolerance(atol=float(tol.get("atol", 0.0)), rtol=float(tol.get("rtol", 0.0)))

    def _outputs(self) -> list[str]:
        outs = getattr(self.module, "OUTPUTS", [])
        names = []
        for o in outs if isinstance(outs, (list, tuple)) else [outs]:
            if isinstance(o, int) and 0 <= o < len(self.param_names):
                names.append(self.param_names[o])
            elif isinstance(o, str) and o in self.param_names:
                names.append(o)
            else:
                raise ProblemError(self.path, f"OUTPUTS names {o!r}, which is not a parameter of {self.entry_name}")
        return names

    def _hook(self, attr: str) -> Callable | None:
        fn = getattr(self.module, attr, None)
        if fn is not None and not callable(fn):
            raise ProblemError(self.path, f"{attr} must be a function of the shape keyword arguments")
        return fn

    # --- use ----------------------------------------------------------------------
    def describe(self) -> Problem:
        cases, test_cases = self.cases()
        return Problem(
            path=self.path.resolve(),
            entry=self.entry_name,
            signature=signature_of(self.entry),
            cases=cases,
            test_cases=test_cases,
            has_reference=self.reference is not None,
            tolerance=self.tolerance,
            outputs=self.outputs,
            inputs_specs=[s.text for s in self.specs],
            has_flops=self.flops is not None,
            has_bytes=self.bytes is not None,
        )

    def make_args(self, case: Case, seed: int, device: str) -> tuple:
        """Fresh arguments for one case. Raises ProblemError naming what went wrong."""
        if case.spec is not None:
            spec = next(s for s in self.specs if s.text == case.spec)
            return spec.make(seed, device, self._passed(spec))
        try:
            args = self.make_inputs(seed, device, **case.params)
        except BaseException as e:
            if out_of_memory(e):  # the case is too big for the device: say which, and what to do
                raise ProblemError(self.path, f"case {case.label}: make_inputs ran out of memory"
                                              f"{_tried(e)}; reduce SHAPES") from None
            raise ProblemError(self.path, f"make_inputs(seed={seed}, {case.label}) raised {_one_line(e)}") from None
        if not isinstance(args, tuple):
            args = tuple(args) if isinstance(args, list) else (args,)
        return args


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def out_of_memory(e: BaseException) -> bool:
    """torch.cuda.OutOfMemoryError on a GPU; a RuntimeError of the CPU allocator otherwise."""
    text = str(e).lower()
    return (isinstance(e, MemoryError) or type(e).__name__ == "OutOfMemoryError"
            or "out of memory" in text or "can't allocate memory" in text)


def _tried(e: BaseException) -> str:
    """' (tried to allocate 4 PiB)', from the allocator's message (CUDA's or the CPU's), or ''."""
    m = re.search(r"tried to allocate ([\d.]+) ?([KMGTP]i?B|bytes)", str(e), re.IGNORECASE)
    if not m:
        return ""
    size, unit = float(m.group(1)), m.group(2)
    if unit == "bytes":
        for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
            if size < 1024 or unit == "PiB":
                break
            size /= 1024
    return f" (tried to allocate {size:.3g} {unit})"
