"""Host code that can only run with a GPU, named when it fails in Triton's interpreter.

Real entries guard their launches with CUDA questions (`assert x.is_cuda`,
`torch.cuda.current_device()`); on the CPU tensors of the interpreter these fail with
messages that do not say why. The problem is fine; the machine is not the one it needs.
(Calls that only place a launch, `with torch.cuda.device(x.device):`, do nothing in the
interpreter's worker: analysis/host_state.py `cuda_placements_harmless`.)
"""

from __future__ import annotations

import linecache
import traceback

_CUDA_WORDS = ("expected a cuda device", "exchangedevice", "torch not compiled with cuda", "no cuda gpus",
               "found no nvidia driver", "cuda driver")


def needs_gpu_note(e: BaseException) -> str:
    """"" unless `e` looks like GPU-only host code failing on CPU; then a note saying so."""
    import torch

    if torch.cuda.is_available():
        return ""
    text = str(e).lower()
    line = _failing_user_line(e)
    if any(w in text for w in _CUDA_WORDS) or "cuda" in line.lower():
        where = f" (`{line.strip()}`)" if line else ""
        return (f"; this host code needs a CUDA GPU{where}: Triton's interpreter runs entries on CPU tensors, "
                "so check and optimize this problem where a GPU is visible")
    return ""


def _failing_user_line(e: BaseException) -> str:
    """The source line of the innermost frame outside torch, triton and tritonforge."""
    found = ""
    for frame in traceback.extract_tb(e.__traceback__):
        name = frame.filename.replace("\\", "/")
        if any(part in name for part in ("/torch/", "/triton/", "/tritonforge/")):
            continue
        found = frame.line or linecache.getline(frame.filename, frame.lineno or 0)
    return found
