"""Where a problem file launches Triton kernels, and which launch values can be tuned.

Everything here reads source text with `ast`; nothing is imported or run, so it is safe on
candidate files and costs no GPU time.

What counts as tunable (`Tunable.free`), and why:

* A value that feeds a kernel's `tl.constexpr` tile size, `num_warps` or `num_stages` is
  tunable when it is an integer literal (or a constant expression such as `1 << 10`)
  somewhere in this file: in the launch call, in an assignment of the function that
  launches, in a call argument or default of a helper between entry and launch, at module
  level, or as the kernel's own default. One literal is ONE tunable, however many launches
  and grids use it (`BLOCK = 256` feeding `triton.cdiv(n, BLOCK)` and `BLOCK_SIZE=BLOCK`),
  so rewriting it keeps grid and kernel consistent.
* A grid that divides by its own copy of the number (`triton.cdiv(n, 256)` next to
  `BLOCK_SIZE=256`) is tied to it: both are rewritten together, and the `255` of
  `(n + 255) // 256` follows as value - 1. Two literal blocks that tie to the same grid
  number become one tunable (square tiles), since we cannot tell which one the grid means.
* `num_warps` / `num_stages` that a launch leaves out are tunable by inserting the keyword;
  their current values are Triton's defaults (4 warps, 3 stages).
* An autotuned kernel exposes its `configs=[triton.Config(...), ...]` list as one tunable
  whose value is a tuple of `ConfigSpec`s; the launch values the configs set are theirs.
* Values derived from runtime data (`triton.next_power_of_2(n_cols)`, `max(...)`, an
  entry argument) are reported with `free=False`. We deliberately offer no multiplier on
  them: whether a block must cover a whole row (single-pass softmax) is kernel semantics
  that cannot be checked statically, and a wrong guess fails only on some shapes.
* One exception is read from the kernel: a `tl.arange(0, BLOCK)` offset by nothing and
  masked by `< n_cols` is one tile over the row, so BLOCK keeps only values at or above
  the largest `n_cols` a captured launch received (`coverage.py`), unless the baseline
  itself runs below it.
* Integer constexprs that shape no tensor (no `tl.arange`, `tl.zeros` shape, ...) such as
  `GROUP_SIZE_M` or flags are reported, not free: they may carry meaning.

Ids are "kernel.PARAM" / "kernel.num_warps" / "kernel.autotune_configs", from the first
launch that uses the value, with "#2", "#3" for later distinct values of the same name.
They depend only on the file's structure, so they survive rewrites of the values.
"""


from tritonforge.analysis.launch_sites.model import (BLOCK_MAX, BLOCK_MIN, DEFAULT_STAGES, DEFAULT_WARPS, DOT_MIN,
                                                     DOT_ROLES, MAX_TENSOR_NUMEL, STAGES, TILE_ROLES, WARPS,
                                                     ConfigSpec, KernelFacts, LaunchSite, Span, Tunable, is_pow2)
from tritonforge.analysis.launch_sites.search_space import SearchSpace, entry_of, find_launch_sites

__all__ = ["BLOCK_MAX", "BLOCK_MIN", "DEFAULT_STAGES", "DEFAULT_WARPS", "DOT_MIN", "DOT_ROLES", "MAX_TENSOR_NUMEL",
           "STAGES", "TILE_ROLES", "WARPS", "ConfigSpec", "KernelFacts", "LaunchSite", "SearchSpace", "Span",
           "Tunable", "entry_of", "find_launch_sites", "is_pow2"]
