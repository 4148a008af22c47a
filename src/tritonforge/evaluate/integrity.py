"""Notice when user code replaces what the evaluator relies on.

The worker takes a snapshot of these attributes before importing any problem or
candidate; a candidate whose import or call leaves any of them changed is refused.
"""

from __future__ import annotations

import importlib
from typing import Any

# (module, dotted attribute) pairs whose identity must not change.
WATCHED: list[tuple[str, str]] = [
    ("time", "perf_counter"), ("time", "perf_counter_ns"), ("time", "time"), ("time", "monotonic"),
    ("torch", "cuda.Event"), ("torch", "cuda.Event.record"), ("torch", "cuda.Event.elapsed_time"),
    ("torch", "cuda.Event.synchronize"), ("torch", "cuda.synchronize"), ("torch", "cuda.current_stream"),
    ("torch", "cuda.Stream"), ("torch", "allclose"), ("torch", "equal"), ("torch", "isfinite"),
    ("torch", "Tensor.to"), ("torch", "Tensor.clone"), ("torch", "Tensor.__eq__"), ("torch", "Tensor.sub"),
    ("torch", "Tensor.abs"), ("torch", "Tensor.untyped_storage"), ("torch", "Tensor.data_ptr"),
    ("triton.runtime.jit", "JITFunction.run"), ("triton.testing", "do_bench"),
    ("tritonforge.evaluate.timing", "measure"), ("tritonforge.evaluate.timing", "_measure_cuda"),
    ("tritonforge.evaluate.timing", "_Event"), ("tritonforge.evaluate.timing", "_synchronize"),
    ("tritonforge.evaluate.timing", "_elapsed"), ("tritonforge.evaluate.timing", "_perf_counter"),
    ("tritonforge.evaluate.compare", "compare"), ("tritonforge.evaluate.compare", "_compare_tensors"),
    ("tritonforge.evaluate.compare", "aliasing"), ("tritonforge.evaluate.compare", "mutated"),
    ("tritonforge.evaluate.compare", "snapshot"), ("tritonforge.evaluate.compare", "same_bits"),
    ("tritonforge.evaluate.compare", "_loose"), ("tritonforge.evaluate.timing", "_measure_cpu"),
    ("tritonforge.evaluate.timing", "_picked"), ("tritonforge.evaluate.timing", "_secret"),
    ("tritonforge.evaluate.torch_ops", "TorchOps"), ("tritonforge.evaluate.torch_ops", "GLUE"),
    ("tritonforge.evaluate.launches", "LaunchCounter.reset"), ("tritonforge.evaluate.launches", "current_stream"),
    # The worker runs as __main__; where it does not, these are skipped.
    ("__main__", "Worker.call_candidate"), ("__main__", "Worker.op_check"), ("__main__", "Worker.op_time"),
    ("__main__", "Worker.guarded"), ("__main__", "Worker.verify_timed"), ("__main__", "Worker.candidate_entry"),
]


def _resolve(module: str, dotted: str) -> Any:
    obj: Any = importlib.import_module(module)
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


class Integrity:
    def __init__(self, watched: list[tuple[str, str]] = WATCHED) -> None:
        self.expected: dict[str, Any] = {}
        for module, dotted in watched:
            try:
                self.expected[f"{module}.{dotted}"] = (module, dotted, _resolve(module, dotted))
            except (ImportError, AttributeError):
                continue  # not in this version of the library

    def violations(self) -> list[str]:
        bad = []
        for name, (module, dotted, value) in self.expected.items():
            try:
                now = _resolve(module, dotted)
            except (ImportError, AttributeError):
                bad.append(name)
                continue
            if now is not value:
                bad.append(name)
        return bad
