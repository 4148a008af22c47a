"""Operand dtypes of `tl.dot`, read from Triton's TTIR (the AST cannot know them)."""

from __future__ import annotations

import re

_MLIR_TYPES = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "f64": "fp64", "i8": "int8", "i32": "int32",
               "f8E4M3FN": "fp8e4nv", "f8E5M2": "fp8e5", "f8E4M3FNUZ": "fp8e4b8", "f8E5M2FNUZ": "fp8e5b16",
               "f8E4M3B11FNUZ": "fp8e4b15"}
_DOT_LINE = re.compile(r"\"?\b(?:tt\.dot|ttng\.warp_group_dot)\"?[\s(]")
# The head of a shaped type, e.g. tensor<64x32xf16, ...> or !ttg.memdesc<64x32xf16, ...>.
_SHAPED_TYPE = re.compile(r"(?:tensor|memdesc)<(?:\d+x)+([A-Za-z0-9_]+)")



def dot_dtypes_from_ttir(ttir: str) -> list[tuple[str, str, str]]:
    """(a, b, accumulator) element types of each `tt.dot` in TTIR, in Triton's names ("fp16", "fp32"...).

    TTGIR works too (`ttng.warp_group_dot` included). `tt.dot_scaled` is not a `tt.dot`.
    """
    found = []
    for line in ttir.splitlines():
        if not _DOT_LINE.search(line):
            continue
        types = _SHAPED_TYPE.findall(line)
        if len(types) >= 3:
            found.append(tuple(_MLIR_TYPES.get(t, t) for t in (types[0], types[1], types[-1])))
    return found
