"""Let Triton 3.6's interpreter run loops with runtime bounds under numpy 2.

Triton (< 3.7) converts a scalar kernel argument to a Python int with `int(array)`, and
its scalars are 1-element arrays, which numpy 2 refuses ("only 0-dimensional arrays can be
converted to Python scalars"), so `for k in range(0, K, BLOCK)` fails. The H200 image pairs
Triton 3.6 with numpy 2.5, and counting FLOPs there needs the interpreter. This wraps the
interpreter's own patch so that its `__index__` takes the single element instead.
"""

from __future__ import annotations

from typing import Any


def needed() -> bool:
    import numpy
    import triton

    major, minor = (int(x) for x in triton.__version__.split(".")[:2])
    return (major, minor) < (3, 7) and int(numpy.__version__.split(".")[0]) >= 2


def install() -> bool:
    """Install the fix where it is needed and possible; True when installed."""
    if not needed():
        return False
    try:
        from triton.runtime import interpreter
    except ImportError:
        return False
    original = getattr(interpreter, "_patch_lang_tensor", None)
    if original is None or getattr(original, "_tf_compat", False):
        return False

    def index(self: Any) -> int:
        return int(self.handle.data.reshape(-1)[0])

    def patch_lang_tensor(tensor: Any, scope: Any) -> None:
        real = scope.set_attr

        def set_attr(obj: Any, name: str, value: Any) -> None:
            real(obj, name, index if name == "__index__" else value)

        scope.set_attr = set_attr
        try:
            original(tensor, scope)
        finally:
            del scope.set_attr

    patch_lang_tensor._tf_compat = True  # type: ignore[attr-defined]
    interpreter._patch_lang_tensor = patch_lang_tensor
    return True
