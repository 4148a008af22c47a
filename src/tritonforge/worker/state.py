"""What a worker process keeps between requests, and how it talks to its parent.

Loaded problems, per-case facts seen before any candidate was imported (repeatable
inputs, a deterministic reference, the torch operations of the problem's own entry), the
launch counter and the integrity snapshot. The request handlers (checks, timed, analysis
ops, candidate) build on it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TextIO

import torch

from tritonforge.problem.module import ProblemModule
from tritonforge.problem.spec import Case, ProblemError
from tritonforge.worker.calls import same
from tritonforge.worker.handoff import Outbox
from tritonforge.worker.integrity import Integrity
from tritonforge.worker.launches import LaunchCounter
from tritonforge.worker.torch_ops import TorchOps


class WorkerState:
    def __init__(self, out: TextIO, device: str, role: str = "judge") -> None:
        self.out = out
        self.device = device
        self.role = role  # "judge": imports candidates; "referee": never does (see referee.py)
        self.problems: dict[tuple, ProblemModule] = {}
        self.args_cache: dict[tuple, tuple] = {}
        self.entry_ops: dict[tuple, set[str]] = {}  # (problem, case) -> torch ops its entry runs
        self.deterministic: set[tuple] = set()  # (problem, case) whose reference was seen repeatable
        self.repeatable: set[tuple] = set()  # (problem, case) whose make_inputs gave the same inputs twice
        # A GPU can interleave programs differently on each call; the interpreter cannot.
        self.repeats = 2 if device == "cuda" else 1
        self.violations: list[str] = []  # what guarded (timed) calls did wrong
        self.candidate_ops: set[str] = set()
        self.launches = LaunchCounter()  # wraps JITFunction.run: before the snapshot below
        with TorchOps(self.launches, None):  # its first use imports torch._dynamo, which patches torch
            torch.empty(1)
        if device == "cuda":  # CUDA's lazy init rebinds parts of torch.cuda: let it happen first
            torch.cuda.init()
            torch.cuda.current_stream().synchronize()
        # Outputs handed to the referee, alive until the next request; their files go in the
        # worker's own directory (its cwd at start), which its parent removes with it.
        self.outbox = Outbox(Path.cwd())
        self.integrity = Integrity()

    def send(self, obj: dict[str, Any]) -> None:
        self.out.write(json.dumps(obj, default=_json_default) + "\n")
        self.out.flush()

    def phase(self, name: str) -> None:
        self.send({"phase": name})

    def problem(self, req: dict[str, Any]) -> ProblemModule:
        key = (req["problem"], req.get("entry"), tuple(req.get("specs") or []))
        if key not in self.problems:
            self.phase("load_problem")
            pm = self.problems[key] = ProblemModule(req["problem"], req.get("entry"), req.get("specs"))
            # The baseline is timed here: its functions must stay the problem's own.
            self.integrity.hold(f"the problem {pm.path.name}", pm, ["entry", "reference", "make_inputs"])
        return self.problems[key]

    def check_repeatable_inputs(self, pm: ProblemModule, case: Case, seed: int, args: tuple, key: tuple) -> None:
        """The same seed must give the same inputs: the referee makes its own from the seed, and
        timed outputs are checked on regenerated ones."""
        if key in self.repeatable:
            return
        again = pm.make_args(case, seed, self.device)
        if any(not same(a, b) for a, b in zip(args, again)):
            raise ProblemError(pm.path, f"make_inputs(seed={seed}, {case.label}) gives different inputs for the "
                                        "same seed; draw them from a torch.Generator seeded with `seed`")
        self.repeatable.add(key)

    def timed_stream(self) -> int | None:
        """The stream the evaluator checks and times on (the default one), on a GPU."""
        return torch.cuda.default_stream().cuda_stream if self.device == "cuda" else None


def _json_default(o: Any) -> Any:
    if hasattr(o, "item"):
        return o.item()
    return str(o)
