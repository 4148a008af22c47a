"""The "second_opinion" request: time the baseline and a candidate with Triton's own
`do_bench` (median, its own L2 flush, the same inputs every repetition), alternating, in a
process that judged nothing before. Independent of the evaluator's timing protocol on
purpose: a claimed speedup this cannot confirm is flagged."""

from __future__ import annotations

import statistics
from typing import Any

from tritonforge.problem.spec import Case
from tritonforge.worker.calls import classify, sync
from tritonforge.worker.candidate import CandidateCalls

ROUNDS = 3  # baseline and candidate alternate, so that drift hits both alike


class SecondOpinion(CandidateCalls):
    def op_second_opinion(self, req: dict[str, Any]) -> dict[str, Any]:
        import triton.testing

        pm = self.problem(req)
        fns = {"baseline": pm.entry, "candidate": self.candidate_entry(pm, req["candidate"])}
        self.phase("make_inputs")
        args = pm.make_args(Case.from_json(req["case"]), int(req.get("seed", 0)), self.device)
        self.phase("candidate")
        times: dict[str, list[float]] = {label: [] for label in fns}
        try:
            for _ in range(ROUNDS):
                for label, fn in fns.items():
                    times[label].append(triton.testing.do_bench(lambda: fn(*args), warmup=int(req.get("warmup", 25)),
                                                                rep=int(req.get("rep", 100)), return_mode="median"))
            sync(self.device)
        except Exception as e:
            raise classify(e) from None
        return {label: statistics.median(ms) for label, ms in times.items()} | {"rounds": times}
