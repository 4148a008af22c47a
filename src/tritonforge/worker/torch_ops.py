"""Which torch operations a call runs itself, outside its Triton kernels.

A candidate must compute with Triton kernels. Torch may allocate, view, copy and fill for
it, and may do whatever the problem's own entry does with it; any other aten operation
(`aten.add`, `aten.mm`, a call to the reference...) means the answer came from torch.
Recorded with a TorchDispatchMode around checked calls only; operations inside a Triton
launch (the interpreter's own copies) are not the candidate's.
"""

from __future__ import annotations

from typing import Any

from torch.utils._python_dispatch import TorchDispatchMode

from tritonforge.worker.launches import LaunchCounter, current_stream

# Aten operations that move or shape memory but compute nothing.
GLUE = frozenset("""
empty empty_like empty_strided empty_permuted zeros zeros_like ones ones_like full full_like new_empty
new_empty_strided new_zeros new_ones new_full scalar_tensor arange lift_fresh lift_fresh_copy
view _unsafe_view reshape as_strided expand expand_as permute transpose t squeeze unsqueeze slice select
split split_with_sizes chunk unbind flatten unflatten narrow alias detach view_as movedim contiguous
copy_ clone _to_copy to _copy_from _copy_from_and_resize fill_ zero_ resize_ set_ record_stream
size stride sym_size sym_stride sym_numel sym_storage_offset is_contiguous dim numel
_local_scalar_dense item is_same_size is_nonzero
""".split())


class TorchOps(TorchDispatchMode):
    """Names of the aten operations run during a call, and the streams they ran on."""

    def __init__(self, launches: LaunchCounter, stream: int | None) -> None:
        super().__init__()
        self.launches = launches
        self.stream = stream
        self.ops: set[str] = set()
        self.foreign_stream = False

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        body = _python_body(func)
        if body is not None:
            # An operator defined in Python (the file's own `triton_op` or `custom_op`): what
            # counts is what its body runs, so it runs here, watched like the caller.
            with self:
                return body(*args, **(kwargs or {}))
        if self.launches.depth == 0:
            self.ops.add(func._overloadpacket.__name__)
            if self.stream is not None and current_stream() != self.stream:
                self.foreign_stream = True
        return func(*args, **(kwargs or {}))

    def compute(self, allowed: set[str] | frozenset[str] = frozenset()) -> list[str]:
        return computing(self.ops, allowed)


def _python_body(func: Any) -> Any:
    """The Python function behind an operator made with torch.library.custom_op or triton_op."""
    if getattr(func, "namespace", "aten") in ("aten", "prim", "prims"):
        return None
    try:
        from torch._library.custom_ops import OPDEFS
    except ImportError:  # a torch without Python custom operators
        return None
    opdef = OPDEFS.get(func._schema.name)
    return getattr(opdef, "_init_fn", None)


def computing(ops: set[str], allowed: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The operations among `ops` that computed something and are not allowed."""
    return sorted(op for op in ops if op not in GLUE and op not in allowed)
