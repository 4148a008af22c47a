"""The host side of a launch while it is captured.

`host_frames` snapshots the locals of the problem file's functions on the stack at a
launch, in a JSON form that `launch_sites.replay` reads back: shapes, dtypes, sizes, config
dicts; never tensor data. `launch_origin` says which line of the file made the launch. `cuda_stand_ins` lets an entry written for a GPU
(`with torch.cuda.device(x.device):`, `assert x.is_cuda`, `torch.cuda.synchronize()`) run
its host code on CPU tensors while its launches are recorded and skipped;
`cuda_placements_harmless` keeps only the calls that place work, for Triton's interpreter.
"""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass
from types import FrameType
from typing import Any, Iterator

_MAX_ITEMS = 64
_MAX_DEPTH = 3


def snapshot_value(value: Any, depth: int = 0) -> Any:
    """A local as plain JSON: numbers, strings, dtypes by name, tensors by shape/dtype/strides,
    containers of those; anything else by its type name."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    kind = type(value).__module__.split(".")[0], type(value).__name__
    if kind == ("torch", "dtype") or kind == ("torch", "device"):
        return str(value)
    if hasattr(value, "data_ptr") and hasattr(value, "shape") and hasattr(value, "stride"):
        return {"__tensor__": {"shape": list(value.shape), "dtype": str(value.dtype),
                               "strides": list(value.stride()), "device": str(getattr(value, "device", ""))}}
    if kind[1] == "constexpr":
        return snapshot_value(getattr(value, "value", None), depth)
    if depth < _MAX_DEPTH and isinstance(value, (list, tuple)) and len(value) <= _MAX_ITEMS:
        return [snapshot_value(v, depth + 1) for v in value]
    if depth < _MAX_DEPTH and isinstance(value, dict) and len(value) <= _MAX_ITEMS:
        return {"__dict__": [[snapshot_value(k, depth + 1), snapshot_value(v, depth + 1)] for k, v in value.items()]}
    if kind == ("torch", "Size"):
        return list(value)
    return {"__object__": f"{kind[0]}.{kind[1]}"}


def host_frames(source_file: str | None) -> dict[str, dict[str, Any]]:
    """Locals of every function of `source_file` on the current stack, innermost first wins."""
    out: dict[str, dict[str, Any]] = {}
    for frame in _frames_of(source_file):
        name = frame.f_code.co_name
        if name not in out and name != "<module>":
            out[name] = {k: snapshot_value(v) for k, v in frame.f_locals.items() if not k.startswith("__")}
    return out


def launch_origin(source_file: str | None) -> tuple[int | None, int | None, str | None]:
    """(line, column, function) of the call the innermost of `source_file`'s frames on the
    stack is making: the call that left the file for the launch. The column is the call's
    `ast` col_offset (None where the interpreter does not say)."""
    frame = next(_frames_of(source_file), None)
    if frame is None:
        return None, None, None
    positions = list(frame.f_code.co_positions()) if hasattr(frame.f_code, "co_positions") else []
    at = positions[frame.f_lasti // 2] if 0 <= frame.f_lasti // 2 < len(positions) else None
    col = at[2] if at is not None and at[0] == frame.f_lineno else None
    return frame.f_lineno, col, frame.f_code.co_name


def call_lines(source_file: str | None) -> tuple[int, ...]:
    """The line each of `source_file`'s frames on the stack is at, outermost first: the path
    through the file's functions to the launch (a launcher helper called from two lines of the
    entry is told apart by it)."""
    return tuple(frame.f_lineno for frame in _frames_of(source_file))[::-1]


def _frames_of(source_file: str | None) -> Iterator[FrameType]:
    frame = sys._getframe(1) if source_file else None
    while frame is not None:
        if frame.f_code.co_filename == source_file:
            yield frame
        frame = frame.f_back


class _AnyDevice(contextlib.nullcontext):
    """`torch.cuda.device(anything)` as a context that does nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()


@dataclass(frozen=True)
class _StandInProperties:
    """What `torch.cuda.get_device_properties` gives host code during a CPU capture: an
    H100/H200-sized part (132 SMs), so code that sizes a persistent grid by the SM count
    takes its GPU path. Only grids depend on it, and no kernel runs in a capture."""

    name: str = "capture stand-in (132 SMs)"
    major: int = 9
    minor: int = 0
    multi_processor_count: int = 132
    total_memory: int = 80 << 30
    L2_cache_size: int = 50 << 20
    regs_per_multiprocessor: int = 65536
    max_threads_per_multi_processor: int = 2048
    warp_size: int = 32


def _placements() -> list[tuple[Any, str, Any]]:
    """CUDA calls that only choose a device or wait for one, as calls that do nothing."""
    import torch

    return [(torch.cuda, "device", _AnyDevice), (torch.cuda, "device_of", _AnyDevice),
            (torch.cuda, "set_device", lambda *a, **k: None), (torch.cuda, "synchronize", lambda *a, **k: None)]


@contextlib.contextmanager
def cuda_placements_harmless() -> Iterator[None]:
    """In Triton's interpreter, where every tensor is on the CPU: `torch.cuda.device(...)`
    around a launch, `torch.cuda.set_device` and `torch.cuda.synchronize` do nothing instead
    of raising. They answer no question, so host code takes the path it would take without
    them; the queries (`x.is_cuda`, `torch.cuda.is_available()`) keep their true answers."""
    with _patched(_placements()):
        yield


@contextlib.contextmanager
def cuda_stand_ins() -> Iterator[None]:
    """While capturing on CPU tensors: CUDA device calls do nothing and tensors say they are
    on CUDA, so host code takes the path it takes on a GPU. Restored on exit."""
    import torch

    patches = _placements() + [
        (torch.cuda, "current_device", lambda: 0), (torch.cuda, "is_available", lambda: True),
        (torch.cuda, "device_count", lambda: 1),
        (torch.cuda, "get_device_properties", lambda *a, **k: _StandInProperties()),
        (torch.cuda, "get_device_capability", lambda *a, **k: (9, 0)),
        (torch.cuda, "get_device_name", lambda *a, **k: _StandInProperties.name),
        (torch.Tensor, "is_cuda", property(lambda self: True)),
    ]
    with _patched(patches):
        yield


@contextlib.contextmanager
def _patched(patches: list[tuple[Any, str, Any]]) -> Iterator[None]:
    saved = [(owner, name, owner.__dict__.get(name, _MISSING)) for owner, name, _ in patches]
    try:
        for owner, name, value in patches:
            setattr(owner, name, value)
        yield
    finally:
        for owner, name, old in reversed(saved):
            if old is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, old)


_MISSING = object()
