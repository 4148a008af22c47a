"""The persistent_grid recipe: a kernel's body run in a loop over its original program ids,
on a grid of as many programs as the SMs hold. Row and block kernels of many tiny programs
take persistent.py's loop; tiled `tl.dot` kernels persistent_tiles.py's, over their tiles."""

from __future__ import annotations

from tritonforge.analysis.kernel_source import Kernel, KernelSource
from tritonforge.strategies.editing import Edit, apply_edits
from tritonforge.strategies.recipes.base import Recipe, Rewrite
from tritonforge.strategies.recipes.host import each_kernel
from tritonforge.strategies.recipes.persistent import PER_SM, host_names, row_edits, tl_calls, torch_alias
from tritonforge.strategies.recipes.persistent_tiles import PER_SM as TILES_PER_SM
from tritonforge.strategies.recipes.persistent_tiles import tile_edits


class PersistentGrid(Recipe):
    name = "persistent_grid"
    rounding = ""  # each id runs the same code as before, in its own iteration
    points_to = frozenset({"wave_quantization", "memory_bound_far_from_peak", "latency_bound_little_in_flight"})

    def rewrite(self, source: str, entry: str) -> Rewrite | str:
        ks = KernelSource(source)
        tl, torch = ks.alias("triton.language"), torch_alias(ks.tree)
        if tl is None or torch is None:
            return "torch and triton.language are not both imported under a name"
        taken = host_names(ks)
        tiled: list[str] = []

        def loop(kernel: Kernel) -> list[Edit] | str:
            if tl_calls(ks, kernel.fn, "dot"):
                tiled.append(kernel.name)
                return tile_edits(ks, kernel, tl, torch, taken)
            return row_edits(ks, kernel, tl, torch, taken)

        found = each_kernel(ks, loop)
        if isinstance(found, str):
            return found
        edits, done = found
        rows, tiles = [k for k in done if k not in tiled], [k for k in done if k in tiled]
        notes = ([f"{', '.join(rows)}: persistent grid, up to {PER_SM} programs per SM (as many as its warps let "
                  f"one hold) looping over the original program ids"] if rows else []) + \
                ([f"{', '.join(tiles)}: persistent grid, {TILES_PER_SM} program per SM looping over the tiles "
                  f"(grouped where the launch's order was not)"] if tiles else [])
        return Rewrite(apply_edits(source, edits), "; ".join(notes))
