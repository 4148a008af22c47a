"""Load kernels as real JITFunctions or as interpreter kernels, whatever the session's
TRITON_INTERPRET says: Triton decides at decoration time, so each mode gets its own import."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tritonforge.problem.module import import_file

HERE = Path(__file__).parent
EXAMPLES = HERE.parents[1] / "examples"


def load(path: Path, interpret: bool) -> ModuleType:
    with pytest.MonkeyPatch.context() as mp:
        if interpret:
            mp.setenv("TRITON_INTERPRET", "1")
        else:
            mp.delenv("TRITON_INTERPRET", raising=False)
        return import_file(path, "interp" if interpret else "jit")


@pytest.fixture(scope="session")
def jit_kernels() -> ModuleType:
    module = load(HERE / "sample_kernels.py", interpret=False)
    from triton.runtime.jit import JITFunction
    assert isinstance(module.add_kernel, JITFunction)
    return module


@pytest.fixture(scope="session")
def tuned_kernels() -> ModuleType:
    try:
        return load(HERE / "sample_autotuned.py", interpret=False)
    except RuntimeError as e:  # Triton 3.3 needs a GPU driver to build an Autotuner
        pytest.skip(f"this Triton cannot define an autotuned kernel here: {e}")


@pytest.fixture(scope="session")
def interp_kernels() -> ModuleType:
    return load(HERE / "sample_kernels.py", interpret=True)


@pytest.fixture(scope="session")
def jit_example():
    return lambda name: load(EXAMPLES / f"{name}.py", interpret=False)
