"""Static features of Triton kernels, read from Python source with `ast`.

Nothing is imported or run: a problem file or candidate kernel can be described before
any worker process touches it, and without a GPU. Every function decorated with
`@triton.jit` (bare or with arguments, imported under any alias, under `@triton.autotune`
or `@triton.heuristics`; see `analysis.kernel_source`) gets a `KernelFeatures`: its memory
operations, dots, reductions, atomics, loops, launch-grid use and other ops worth a
strategy's attention.

A kernel that calls (or passes as a combine function) another jitted function of the same
source also carries that helper's operations, each record naming the function it is in.

What the AST cannot know it does not guess: operand dtypes of `tl.dot` come from Triton's
TTIR (`dot_dtypes_from_ttir`), and a loop bound is "static" only when it is built from
literals, constexpr parameters, module constants and shape attributes.
"""

from tritonforge.analysis.features.assemble import features_of_file, features_of_source
from tritonforge.analysis.features.model import AtomicOp, DotOp, KernelFeatures, LoopInfo, MemoryOp, ReductionOp
from tritonforge.analysis.features.ttir import dot_dtypes_from_ttir

__all__ = ["AtomicOp", "DotOp", "KernelFeatures", "LoopInfo", "MemoryOp", "ReductionOp", "dot_dtypes_from_ttir",
           "features_of_file", "features_of_source"]
