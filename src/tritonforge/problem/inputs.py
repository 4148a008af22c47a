"""Zero-config inputs: build a case's arguments from a spec such as "x=float16[4096,8192]".

A spec lists the entry's arguments by name: tensors as `dtype[dim, ...]`, scalars as
Python literals (`eps=1e-5`, `n=4096`, `causal=True`). Items are separated by spaces,
commas or semicolons outside brackets.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

_DTYPE_ALIASES = {
    "fp16": "float16", "half": "float16", "f16": "float16",
    "bf16": "bfloat16",
    "fp32": "float32", "float": "float32", "f32": "float32",
    "fp64": "float64", "double": "float64", "f64": "float64",
    "i8": "int8", "i16": "int16", "i32": "int32", "int": "int32", "i64": "int64", "long": "int64",
    "u8": "uint8",
}
_DTYPES = {"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"}
_TENSOR = re.compile(r"^(?P<dtype>[A-Za-z0-9_]+)\[(?P<dims>[0-9,\s]*)\]$")


class SpecError(ValueError):
    pass


@dataclass(frozen=True)
class TensorArg:
    dtype: str
    shape: tuple[int, ...]


@dataclass(frozen=True)
class InputSpec:
    text: str
    args: dict[str, TensorArg | Any]  # argument name -> tensor description or scalar value

    @staticmethod
    def parse(text: str) -> "InputSpec":
        args: dict[str, Any] = {}
        for item in _split_items(text):
            if "=" not in item:
                raise SpecError(f"input spec item '{item}' is not name=value")
            name, value = (s.strip() for s in item.split("=", 1))
            if not name.isidentifier():
                raise SpecError(f"input spec name '{name}' is not an identifier")
            if name in args:
                raise SpecError(f"input spec names '{name}' twice")
            args[name] = _parse_value(value)
        if not args:
            raise SpecError(f"input spec '{text}' is empty")
        return InputSpec(text=text, args=args)

    def make(self, seed: int, device: str, names: list[str]) -> tuple:
        """Random arguments, ordered as the entry's parameter `names`."""
        import torch

        missing = [n for n in names if n not in self.args]
        unknown = [n for n in self.args if n not in names]
        if unknown:
            raise SpecError(f"input spec names {unknown}, which the entry does not take ({names})")
        if missing:
            raise SpecError(f"input spec lacks {missing} (the entry takes {names})")
        gen = torch.Generator(device="cpu").manual_seed(seed)
        out = []
        for name in names:
            arg = self.args[name]
            out.append(_random_tensor(arg, gen, device) if isinstance(arg, TensorArg) else arg)
        return tuple(out)


def _split_items(text: str) -> list[str]:
    items, depth, cur = [], 0, []
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if depth == 0 and ch in ",; \t":
            if "".join(cur).strip():
                items.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if depth != 0:
        raise SpecError(f"input spec '{text}' has unbalanced brackets")
    if "".join(cur).strip():
        items.append("".join(cur).strip())
    return items


def _parse_value(value: str) -> Any:
    m = _TENSOR.match(value)
    if m:
        dtype = _DTYPE_ALIASES.get(m["dtype"], m["dtype"])
        if dtype not in _DTYPES:
            raise SpecError(f"unknown dtype '{m['dtype']}' in '{value}'")
        dims = tuple(int(d) for d in m["dims"].replace(" ", "").split(",") if d)
        if not dims or any(d <= 0 for d in dims):
            raise SpecError(f"tensor '{value}' needs positive dimensions")
        return TensorArg(dtype=dtype, shape=dims)
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError):
        raise SpecError(f"input spec value '{value}' is neither dtype[dims] nor a literal") from None


def _random_tensor(arg: TensorArg, gen: Any, device: str) -> Any:
    import torch

    dtype = getattr(torch, arg.dtype)
    if dtype.is_floating_point:
        t = torch.randn(arg.shape, generator=gen, dtype=torch.float32)
    elif dtype == torch.bool:
        t = torch.rand(arg.shape, generator=gen) < 0.5
    else:
        hi = 128 if dtype != torch.uint8 else 255
        t = torch.randint(-hi if dtype != torch.uint8 else 0, hi, arg.shape, generator=gen)
    return t.to(device=device, dtype=dtype)
