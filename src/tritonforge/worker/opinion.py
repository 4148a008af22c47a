"""The "second_opinion" request: time the baseline and a candidate with Triton's own
`do_bench` (median, its own L2 flush, the same inputs every repetition), alternating, in a
process that judged nothing before. Independent of the evaluator's timing protocol on
purpose: a claimed speedup this cannot confirm is flagged.

do_bench calls the entry from Python between its flush and its end event. Where the host
needs longer to launch one call (allocations, several launches) than the GPU needs for the
flush, the GPU waits for the host inside the timed window, and do_bench times the host.
The evaluator counts GPU time only (its timer queues a lead), so where both entries can be
captured in a CUDA graph, do_bench times the graph's replay (one launch of the host's, the
same kernels on the GPU) and the plain calls are reported beside it."""

from __future__ import annotations

import statistics
from typing import Any, Callable

from tritonforge.problem.spec import Case
from tritonforge.worker.calls import classify, one_line, sync
from tritonforge.worker.candidate import CandidateCalls
from tritonforge.worker.timing import TimingConfig

ROUNDS = 3  # baseline and candidate alternate, so that drift hits both alike
REPLAY = "cuda graph replay"
PLAIN = "plain calls"


class SecondOpinion(CandidateCalls):
    def op_second_opinion(self, req: dict[str, Any]) -> dict[str, Any]:
        import triton.testing

        pm = self.problem(req)
        fns = {"baseline": pm.entry, "candidate": self.candidate_entry(pm, req["candidate"])}
        self.phase("make_inputs")
        args = pm.make_args(Case.from_json(req["case"]), int(req.get("seed", 0)), self.device)
        self.phase("candidate")

        # Warmed as long as the evaluator heats before each burst (TimingConfig.heat_ms), not
        # do_bench's 25 ms: a kernel at the power limit slows after its first ~45 ms, and the
        # two would otherwise time it at different clocks (s4, s7: the matmul's 4096^3 case +4.5-5.2%).
        warmup = int(req.get("warmup", TimingConfig.heat_ms))

        def bench(fn: Callable[[], Any]) -> float:
            return triton.testing.do_bench(fn, warmup=warmup, rep=int(req.get("rep", 100)), return_mode="median")

        try:
            plain = alternate({label: (lambda fn=fn: fn(*args)) for label, fn in fns.items()}, bench)
            sync(self.device)
        except Exception as e:
            raise classify(e) from None
        # The plain calls first: a capture that fails can leave the GPU unusable for more.
        replayed: dict[str, list[float]] = {}
        why_not = "not on a GPU" if self.device != "cuda" else ""
        if not why_not:
            graphs = {label: graphed(fn, args) for label, fn in fns.items()}
            why_not = next((g for g in graphs.values() if isinstance(g, str)), "")
        if not why_not:
            try:
                replayed = alternate(graphs, bench)
                sync(self.device)
            except Exception as e:  # noqa: BLE001 - the plain calls stand
                why_not = f"replaying the captured entry raised {one_line(e)}"
        times = replayed if replayed and not why_not else plain
        return {label: statistics.median(ms) for label, ms in times.items()} | {
            "timed": PLAIN if times is plain else REPLAY, "no_graph": why_not, "rounds": times,
            "plain": {label: statistics.median(ms) for label, ms in plain.items()}}


def alternate(fns: dict[str, Callable[[], Any]], bench: Callable[[Callable[[], Any]], float]) -> dict[str, list[float]]:
    """`bench` of each function, in turn, ROUNDS times."""
    times: dict[str, list[float]] = {label: [] for label in fns}
    for _ in range(ROUNDS):
        for label, fn in fns.items():
            times[label].append(bench(fn))
    return times


def graphed(fn: Callable, args: tuple) -> Callable[[], None] | str:
    """`fn(*args)` captured once in a CUDA graph, as its replay; or why it could not be (an
    entry that synchronizes or reads a value back cannot be captured)."""
    import torch

    try:
        side = torch.cuda.Stream()  # warm-up off the default stream, as capture requires
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):  # compiles, autotunes and allocates before the capture
                fn(*args)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, capture_error_mode="thread_local"):
            fn(*args)
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - any failure leaves the plain calls as the opinion
        try:
            torch.cuda.synchronize()
        except Exception:  # noqa: BLE001
            pass
        return f"the entry could not be captured in a CUDA graph: {one_line(e)}"
    return graph.replay
