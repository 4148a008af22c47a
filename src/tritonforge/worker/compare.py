"""Worker-side checks of one call's outputs: against the reference, for aliasing, for mutation.

Everything is compared in full and in float64, so that a candidate cannot pass by
writing only the part of an output that a sample would look at.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from tritonforge.problem.spec import Tolerance


@dataclass
class Comparison:
    ok: bool
    message: str = ""
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0


def flatten(obj: Any, path: str = "out") -> list[tuple[str, Any]]:
    """Leaves of a returned structure (tensors, numbers, None) with their paths."""
    if isinstance(obj, (tuple, list)):
        return [leaf for i, v in enumerate(obj) for leaf in flatten(v, f"{path}[{i}]")]
    if isinstance(obj, dict):
        return [leaf for k in sorted(obj, key=str) for leaf in flatten(obj[k], f"{path}[{k!r}]")]
    return [(path, obj)]


@dataclass(eq=False)
class WrittenOutput:
    """A returned tensor that is an argument declared in OUTPUTS, as the view it was passed
    (the out= convention): it is judged once, as that argument, not as a second output."""

    name: str
    tensor: torch.Tensor


def as_written(returned: Any, written: dict[str, torch.Tensor]) -> Any:
    """`returned` with each tensor that is one of `written` (same storage, same view) marked as it."""
    if isinstance(returned, list):
        return [as_written(v, written) for v in returned]
    if isinstance(returned, tuple):
        return tuple(as_written(v, written) for v in returned)
    if isinstance(returned, dict):
        return {k: as_written(v, written) for k, v in returned.items()}
    if isinstance(returned, torch.Tensor):
        name = next((n for n, w in written.items() if isinstance(w, torch.Tensor) and same_view(returned, w)), None)
        if name is not None:
            return WrittenOutput(name, returned)
    return returned


def same_view(a: torch.Tensor, b: torch.Tensor) -> bool:
    """The same elements of the same memory, seen the same way."""
    return (a.device == b.device and a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride()
            and a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
            and a.storage_offset() == b.storage_offset())


def tensors(obj: Any) -> list[torch.Tensor]:
    return [v for _, v in flatten(obj) if isinstance(v, torch.Tensor)]


def _span(t: torch.Tensor) -> tuple[int, int]:
    storage = t.untyped_storage()
    return storage.data_ptr(), storage.data_ptr() + storage.nbytes()


def shares_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.device != b.device:
        return False
    (a0, a1), (b0, b1) = _span(a), _span(b)
    return a0 < b1 and b0 < a1 and a1 > a0 and b1 > b0


def aliasing(outputs: Any, others: list[torch.Tensor], what: str) -> str | None:
    """Message when an output tensor shares memory with one of `others`, else None."""
    for path, out in flatten(outputs):
        if isinstance(out, torch.Tensor):
            for i, other in enumerate(others):
                if shares_memory(out, other):
                    return f"{path} shares memory with {what} {i}"
    return None


def snapshot(args: tuple) -> list[Any]:
    return [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]


def mutated(args: tuple, before: list[Any], names: list[str], allowed: set[str]) -> str | None:
    """Message naming the first input that changed though the problem did not declare it an output."""
    for name, now, then in zip(names, args, before):
        if name in allowed or not isinstance(now, torch.Tensor):
            continue
        if now.shape != then.shape or now.dtype != then.dtype or not same_bits(now, then):
            return f"input '{name}' was modified (declare it in OUTPUTS if that is intended)"
    return None


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype.is_floating_point:
        return bool(torch.equal(torch.nan_to_num(a, nan=0.0), torch.nan_to_num(b, nan=0.0))
                    and torch.equal(torch.isnan(a), torch.isnan(b)))
    return bool(torch.equal(a, b))


def compare(candidate: Any, reference: Any, tolerance: Tolerance | None) -> Comparison:
    """Compare two returned structures leaf by leaf in float64."""
    return compare_leaves(shape_of(candidate), flatten(candidate), reference, tolerance)


def compare_leaves(shape: str, got: list[tuple[str, Any]], reference: Any, tolerance: Tolerance | None) -> Comparison:
    """Compare a structure's leaves (`shape` describes it) with the reference's, leaf by leaf in float64."""
    want = flatten(reference)
    if [p for p, _ in got] != [p for p, _ in want]:
        return Comparison(False, f"returned {shape}, the reference returned {shape_of(reference)}")
    result = Comparison(True)
    for (path, c), (_, r) in zip(got, want):
        leaf = _compare_leaf(path, c, r, tolerance)
        result.max_abs_err = max(result.max_abs_err, leaf.max_abs_err)
        result.max_rel_err = max(result.max_rel_err, leaf.max_rel_err)
        if not leaf.ok and result.ok:
            result.ok, result.message = False, leaf.message
    return result


def _compare_leaf(path: str, c: Any, r: Any, tolerance: Tolerance | None) -> Comparison:
    if isinstance(c, WrittenOutput) and isinstance(r, WrittenOutput) and c.name == r.name:
        return Comparison(True)  # judged with the arguments written
    c = c.tensor if isinstance(c, WrittenOutput) else c
    r = r.tensor if isinstance(r, WrittenOutput) else r
    if isinstance(r, torch.Tensor):
        if not isinstance(c, torch.Tensor):
            return Comparison(False, f"{path} is {type(c).__name__}, the reference returned a tensor")
        return _compare_tensors(path, c, r, tolerance or Tolerance.for_dtype(str(r.dtype)))
    if isinstance(c, torch.Tensor):
        return Comparison(False, f"{path} is a tensor, the reference returned {type(r).__name__}")
    if isinstance(r, float) and isinstance(c, (int, float)):
        tol = tolerance or Tolerance.for_dtype("float64")
        err = abs(c - r)
        ok = err <= tol.atol + tol.rtol * abs(r) or (math.isnan(c) and math.isnan(r))
        return Comparison(ok, "" if ok else f"{path} = {c!r}, the reference gave {r!r}", err, err / max(abs(r), 1e-30))
    ok = c == r
    return Comparison(ok, "" if ok else f"{path} = {c!r}, the reference gave {r!r}")


def _compare_tensors(path: str, c: torch.Tensor, r: torch.Tensor, tol: Tolerance) -> Comparison:
    if c.shape != r.shape:
        return Comparison(False, f"{path} has shape {tuple(c.shape)}, the reference {tuple(r.shape)}")
    if c.dtype != r.dtype:
        return Comparison(False, f"{path} has dtype {c.dtype}, the reference {r.dtype}")
    if c.numel() == 0:
        return Comparison(True)
    c64, r64 = c.detach().to(torch.float64), r.detach().to(torch.float64)
    c_bad, r_bad = ~torch.isfinite(c64), ~torch.isfinite(r64)
    if bool((c_bad & ~r_bad).any()):
        n = int((c_bad & ~r_bad).sum())
        return Comparison(False, f"{path} has {n} NaN/Inf values where the reference has none", math.inf, math.inf)
    if bool(r_bad.any()):
        # Non-finite reference values must be matched exactly (NaN by NaN, +Inf by +Inf).
        same = torch.where(torch.isnan(r64), torch.isnan(c64), c64 == r64)
        if not bool(same[r_bad].all()):
            return Comparison(False, f"{path} differs from the reference where the reference is NaN/Inf")
    finite = ~r_bad
    diff = (c64 - r64).abs()[finite]
    ref_abs = r64.abs()[finite]
    max_abs = float(diff.max()) if diff.numel() else 0.0
    rel = diff / ref_abs.clamp_min(max(tol.atol, 1e-30))
    max_rel = float(rel.max()) if rel.numel() else 0.0
    bound = tol.atol + tol.rtol * ref_abs
    bad = diff > bound
    if not bool(bad.any()) and ref_abs.numel() and bool((ref_abs <= bound).all()) and float(ref_abs.max()) > 0:
        return _loose(path, c64[finite], r64[finite], max_abs, max_rel)
    if bool(bad.any()):
        n = int(bad.sum())
        return Comparison(
            False,
            f"{path}: {n} of {c.numel()} elements outside atol={tol.atol:g}, rtol={tol.rtol:g} "
            f"(max abs err {max_abs:.3g})",
            max_abs, max_rel,
        )
    return Comparison(True, "", max_abs, max_rel)


# When the tolerance would accept zeros, the output's error, as a fraction of the reference's
# norm, must stay below this: far above rounding, far below what constants or noise give.
LOOSE_NORM_BOUND = 0.05


def _loose(path: str, c: torch.Tensor, r: torch.Tensor, max_abs: float, max_rel: float) -> Comparison:
    """The tolerance cannot tell this reference from zeros: compare norms instead."""
    norm_err = float((c - r).norm() / r.norm())
    if norm_err > LOOSE_NORM_BOUND:
        return Comparison(False, f"{path}: the tolerance would accept zeros here, and the error is "
                                 f"{norm_err:.3g} of the reference's norm (at most {LOOSE_NORM_BOUND:g})",
                          max_abs, max_rel)
    return Comparison(True, "", max_abs, max_rel)


def shape_of(obj: Any) -> str:
    if isinstance(obj, torch.Tensor):
        return f"a tensor {tuple(obj.shape)}"
    if isinstance(obj, (tuple, list)):
        return f"a {type(obj).__name__} of {len(obj)}"
    return type(obj).__name__
