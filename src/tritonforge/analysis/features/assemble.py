"""Features of every kernel of a source: each kernel's own scan, with the scans of the
jitted helpers it reaches merged in, and what its decorators declare."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from tritonforge.analysis.features.model import KernelFeatures
from tritonforge.analysis.features.scan import FunctionScanner, Scan
from tritonforge.analysis.kernel_source import Kernel, KernelSource, call_arguments


def features_of_source(source: str) -> dict[str, KernelFeatures]:
    """Features of every `@triton.jit` function in `source`, by function name."""
    module = KernelSource(source)
    scans = {name: FunctionScanner(k, module).scan() for name, k in module.kernels.items()}
    return {name: _assemble(k, scans, module) for name, k in module.kernels.items()}


def features_of_file(path: str | Path) -> dict[str, KernelFeatures]:
    return features_of_source(Path(path).read_text())


def _assemble(kernel: Kernel, scans: dict[str, Scan], module: KernelSource) -> KernelFeatures:
    name, fn = kernel.name, kernel.fn
    callees = _reachable(name, scans)
    parts = [scans[name]] + [scans[c] for c in callees]
    feats = KernelFeatures(
        name=name,
        line=fn.lineno,
        params=list(kernel.params),
        constexpr_params=list(kernel.constexprs),
        decorators=[module.decorator_name(d) or ast.unparse(d) for d in fn.decorator_list],
        callees=callees,
        called_by=[other for other, s in scans.items() if name in s.references],
    )
    _read_decorators(feats, kernel)
    notable: Counter = Counter()
    for part in parts:
        feats.loads += part.loads
        feats.stores += part.stores
        feats.dots += part.dots
        feats.reductions += part.reductions
        feats.atomics += part.atomics
        feats.loops += part.loops
        notable.update(part.notable)
        feats.unresolved_calls += [u for u in part.unresolved if u not in feats.unresolved_calls]
    feats.program_id_axes = sorted(set().union(*(p.program_id_axes for p in parts)))
    feats.num_programs_axes = sorted(set().union(*(p.num_programs_axes for p in parts)))
    feats.notable_ops = dict(sorted(notable.items()))
    return feats


def _reachable(name: str, scans: dict[str, Scan]) -> list[str]:
    seen: list[str] = []
    stack = list(reversed(scans[name].references))
    while stack:
        callee = stack.pop()
        if callee == name or callee in seen:
            continue
        seen.append(callee)
        stack.extend(reversed(scans[callee].references))
    return seen


def _read_decorators(feats: KernelFeatures, kernel: Kernel) -> None:
    if isinstance(kernel.jit, ast.Call):
        feats.jit_kwargs = {k.arg: ast.unparse(k.value) for k in kernel.jit.keywords if k.arg}
    if kernel.autotune is not None:
        bound = call_arguments(kernel.autotune, ("configs", "key"))
        configs = bound.get("configs")
        if isinstance(configs, (ast.List, ast.Tuple)):
            feats.autotune_configs = len(configs.elts)
        key = bound.get("key")
        if isinstance(key, (ast.List, ast.Tuple)):
            feats.autotune_key = [ast.unparse(e).strip("'\"") for e in key.elts]
    feats.heuristics = kernel.heuristic_names()
