"""A stand-in search loop for the SIGKILL test: resumes, then writes until it is killed.

Every record is derived from the candidate's index `i`, so the test can recompute what
each stored row must be. After each committed evaluation it prints "R <key>" so the test
knows what was durable before the kill.
"""

from __future__ import annotations

import sys

from tritonforge.store import RunStore
from tritonforge.strategies.base import Candidate, source_key

BATCH = 3  # candidates added per round before they are evaluated


def source(i: int) -> str:
    # Varying lengths so rows straddle pages differently.
    return f"# candidate {i}\n" + "x = 1\n" * (i % 11 * 40)


def candidate(i: int) -> Candidate:
    return Candidate(source=source(i), origin="kill-test", params={"i": i},
                     parent=source_key(source(i - 1)) if i else None, description=f"candidate {i}")


def verdict(i: int) -> dict:
    status = "correct" if i % 4 else "wrong"
    return {"candidate": f"c{i}", "status": status, "correct": status == "correct",
            "faster": i % 3 == 0, "speedup": None, "message": f"m{i}", "timing": "GPU",
            "environment": {}, "cases": []}


def evaluate(store: RunStore, c: Candidate) -> None:
    i = c.params["i"]
    store.record_evaluation(c.key, verdict(i), speedup=1.0 + i / 100, faster=i % 3 == 0,
                            environment={"gpu": "test", "i": i}, started=float(i),
                            finished=float(i) + 0.5, make_best=i % 4 == 1)
    print("R", c.key, flush=True)


def main(path: str) -> None:
    store = RunStore.open(path)
    store.log_event("resumed", {"pending": len(store.pending())})
    for c in store.pending():  # what a kill left unjudged
        evaluate(store, c)
    i = len(store.judged())
    while True:
        batch = [candidate(j) for j in range(i, i + BATCH)]
        for c in batch:
            store.add_candidate(c, round=c.params["i"] // BATCH)
        for c in batch:
            evaluate(store, c)
        i += BATCH


if __name__ == "__main__":
    main(sys.argv[1])
