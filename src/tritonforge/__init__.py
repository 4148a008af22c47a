"""TritonForge: profiling-guided, verified optimization of Triton GPU kernels."""

__version__ = "0.1.0"
