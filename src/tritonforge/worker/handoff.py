"""Hand one call's outputs from the judging worker to the referee, as plain data.

The referee computes the reference in a process no candidate has touched and compares
there, so what crosses over comes from the candidate's process and is read as data only:
JSON for the structure and for numbers, a `torch.load(weights_only=True)` file for CPU
tensors, and CUDA tensors by their IPC handle, rebuilt from checked fields (no pickle).
The judging worker keeps the tensors alive until its next request: the referee reads them
in place.
"""

from __future__ import annotations

import base64
import math
import tempfile
from pathlib import Path
from typing import Any

import torch
# Imported now, before the worker's integrity snapshot: importing it registers reducers.
from torch.multiprocessing.reductions import rebuild_cuda_tensor, reduce_tensor

from tritonforge.worker import compare as cmp

# A tensor's dtype crosses as its name and comes back only from this list.
DTYPES = {str(d).removeprefix("torch."): d for d in (
    torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16,
    torch.int8, torch.uint8, torch.bool, torch.complex64, torch.complex128,
    *(getattr(torch, n) for n in ("float8_e4m3fn", "float8_e5m2", "uint16", "uint32", "uint64") if hasattr(torch, n)))}


class HandoffError(ValueError):
    """What came over is not a well-formed package of outputs."""


class Outbox:
    """The judging worker's side: packages outputs and keeps them alive until cleared."""

    def __init__(self, under: Path) -> None:
        self.kept: list[torch.Tensor] = []
        self.dir = Path(tempfile.mkdtemp(prefix="handoff-", dir=under))
        self.files = 0

    def clear(self) -> None:
        self.kept.clear()
        for f in self.dir.glob("*.pt"):
            f.unlink(missing_ok=True)

    def package(self, produced: Any) -> dict[str, Any]:
        """{"shape": a description, "leaves": [...], "file": CPU tensors' file or None}."""
        leaves, cpu = [], []
        for path, leaf in cmp.flatten(produced):
            leaves.append(self._leaf(path, leaf, cpu))
        file = None
        if cpu:
            self.files += 1
            file = str(self.dir / f"outputs-{self.files}.pt")
            torch.save(cpu, file)
        return {"shape": cmp.shape_of(produced), "leaves": leaves, "file": file}

    def _leaf(self, path: str, leaf: Any, cpu: list[torch.Tensor]) -> dict[str, Any]:
        if isinstance(leaf, cmp.WrittenOutput):  # an out= argument returned: judged as that argument
            return {**self._leaf(path, leaf.tensor, cpu), "written": leaf.name}
        if isinstance(leaf, torch.Tensor):
            t = leaf.detach()
            if t.is_cuda:
                self.kept.append(t)
                return {"path": path, "cuda": _ipc_fields(t)}
            cpu.append(t)
            return {"path": path, "cpu": len(cpu) - 1}
        if leaf is None or isinstance(leaf, (bool, int, str)):
            return {"path": path, "value": leaf}
        if isinstance(leaf, float):
            return {"path": path, "float": repr(leaf)}  # JSON has no NaN or Inf
        return {"path": path, "other": type(leaf).__name__}


def _ipc_fields(t: torch.Tensor) -> dict[str, Any]:
    _, a = reduce_tensor(t)
    (_cls, size, stride, offset, _storage_cls, dtype, device, handle, size_bytes, offset_bytes, _grad,
     ref_handle, ref_offset, event_handle, event_sync) = a
    return {"size": list(size), "stride": list(stride), "offset": int(offset), "dtype": _dtype_name(dtype),
            "device": int(device), "handle": _b64(handle), "size_bytes": int(size_bytes),
            "offset_bytes": int(offset_bytes), "ref_handle": _b64(ref_handle), "ref_offset": int(ref_offset),
            "event_handle": _b64(event_handle), "event_sync": bool(event_sync)}


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _b64(b: bytes | None) -> str | None:
    return None if b is None else base64.b64encode(b).decode()


# --- the referee's side ----------------------------------------------------------------
def unpack(pkg: Any, device: str) -> tuple[str, list[tuple[str, Any]]]:
    """(the structure's description, [(path, leaf)]) with tensors rebuilt; raises HandoffError."""
    if not isinstance(pkg, dict) or not isinstance(pkg.get("leaves"), list):
        raise HandoffError("not a package of outputs")
    cpu: list[Any] = []
    if pkg.get("file") is not None:
        cpu = torch.load(_str(pkg["file"]), weights_only=True, map_location="cpu")
        if not isinstance(cpu, list) or not all(type(t) is torch.Tensor for t in cpu):
            raise HandoffError("the CPU tensors' file holds something else")
    leaves = []
    for leaf in pkg["leaves"]:
        if not isinstance(leaf, dict):
            raise HandoffError("a leaf is not an object")
        leaves.append((_str(leaf.get("path")), _leaf(leaf, cpu, device)))
    return _str(pkg.get("shape", "")), leaves


def _leaf(leaf: dict[str, Any], cpu: list[Any], device: str) -> Any:
    if "written" in leaf:
        tensor = _leaf({k: v for k, v in leaf.items() if k != "written"}, cpu, device)
        if not isinstance(tensor, torch.Tensor):
            raise HandoffError("a written output without its tensor")
        return cmp.WrittenOutput(_str(leaf["written"]), tensor)
    if "cuda" in leaf:
        if device != "cuda":
            raise HandoffError("a CUDA tensor handed to a CPU referee")
        return _rebuild_cuda(leaf["cuda"])
    if "cpu" in leaf:
        i = _int(leaf["cpu"])
        if not 0 <= i < len(cpu):
            raise HandoffError("a CPU tensor's index is out of range")
        return cpu[i]
    if "float" in leaf:
        return float(_str(leaf["float"]))  # float() parses 'nan' and 'inf' too, and nothing else
    if "value" in leaf:
        v = leaf["value"]
        if v is not None and not isinstance(v, (bool, int, str)):
            raise HandoffError("a value leaf is not a plain value")
        return v
    if "other" in leaf:
        return Unsupported(_str(leaf["other"]))
    raise HandoffError("a leaf of no known kind")


class Unsupported:
    """A returned leaf that is neither a tensor nor a plain value: compared by its type name."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unsupported) and other.name == self.name

    def __repr__(self) -> str:
        return f"<{self.name}>"


def _rebuild_cuda(f: Any) -> torch.Tensor:
    if not isinstance(f, dict):
        raise HandoffError("a CUDA leaf is not an object")
    dtype = DTYPES.get(_str(f.get("dtype")))
    if dtype is None:
        raise HandoffError(f"unknown dtype {f.get('dtype')!r}")
    size, stride = _ints(f.get("size")), _ints(f.get("stride"))
    offset, size_bytes, offset_bytes = _int(f.get("offset")), _int(f.get("size_bytes")), _int(f.get("offset_bytes"))
    if len(size) != len(stride) or min([offset, size_bytes, offset_bytes, *size, *stride], default=0) < 0:
        raise HandoffError("a CUDA tensor's sizes are malformed")
    item = torch.empty(0, dtype=dtype).element_size()
    last = offset + sum((n - 1) * s for n, s in zip(size, stride)) if math.prod(size) else -1
    if (last + 1) * item > size_bytes:
        raise HandoffError("a CUDA tensor reaches past its storage")
    handle = _bytes(f.get("handle"))
    return rebuild_cuda_tensor(torch.Tensor, tuple(size), tuple(stride), offset, torch.UntypedStorage, dtype,
                               _int(f.get("device")), handle, size_bytes, offset_bytes, False,
                               _bytes(f.get("ref_handle")), _int(f.get("ref_offset")), _bytes(f.get("event_handle")),
                               bool(f.get("event_sync")))


def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise HandoffError("expected a string")
    return v


def _int(v: Any) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise HandoffError("expected an integer")
    return v


def _ints(v: Any) -> list[int]:
    if not isinstance(v, list):
        raise HandoffError("expected a list of integers")
    return [_int(x) for x in v]


def _bytes(v: Any) -> bytes | None:
    if v is None:
        return None
    try:
        return base64.b64decode(_str(v), validate=True)
    except ValueError:
        raise HandoffError("a handle is not base64") from None
