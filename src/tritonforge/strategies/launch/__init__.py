"""Launch-parameter search: block sizes, num_warps, num_stages and autotune config lists.

Parts usable on their own: `rewrite` / `apply_assignment` write values into a file,
`check_assignment` rejects values that cannot compile or fit, and `LaunchParamStrategy`
(registered as "launch_params") searches the space from the best candidate.
"""

from tritonforge.strategies.launch.feasibility import FeasibleHook, HardwareLimits, check_assignment
from tritonforge.strategies.launch.moves import DOT_PRESETS
from tritonforge.strategies.launch.rewrite import apply_assignment, rewrite
from tritonforge.strategies.launch.strategy import LaunchParamStrategy
from tritonforge.strategies.launch.values import Assignment

__all__ = ["DOT_PRESETS", "Assignment", "FeasibleHook", "HardwareLimits", "LaunchParamStrategy",
           "apply_assignment", "check_assignment", "rewrite"]
