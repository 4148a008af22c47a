"""Live progress of an optimize run: a bar over the budget and one line per verdict."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class SearchProgress:
    """An observer for `tritonforge.search.loop.Search`."""

    def __init__(self, console: Console, budget: int) -> None:
        self.console = console
        self.progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[best]}"), TimeElapsedColumn(), console=console,
                                 transient=True)
        self.task = self.progress.add_task("baseline", total=budget, best="")
        self.best = 1.0
        self.round = 0

    def __enter__(self) -> "SearchProgress":
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self.progress.stop()

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "baseline":
            self.progress.update(self.task, description="checking and timing the baseline")
        elif kind == "round":
            self.round = data["round"]
            self.progress.update(self.task, description=f"round {self.round}: {data['proposed']} candidates")
        elif kind == "candidate":
            self.progress.update(self.task, description=f"round {self.round}: {data['description'] or data['key']}")
        elif kind == "judged":
            self._judged(data)
        elif kind == "resume":
            self.console.print(f"resuming: {data['pending']} candidates were proposed but not judged")
        elif kind == "profiled":
            what = ", ".join(data["main"]) or data.get("reason") or "no clear bottleneck"
            self.console.print(f"  profiled {data['key']}: {what}", highlight=False)
        elif kind == "final":
            self.progress.update(self.task, description="timing the best against the baseline")
        elif kind == "second_opinion":
            self.progress.update(self.task, description="second opinion: do_bench in a fresh process")

    def _judged(self, data: dict[str, Any]) -> None:
        self.progress.advance(self.task)
        up = data.get("speedup")
        mark = "[bold green]new best[/]" if data.get("best") else ""
        if data.get("best"):
            self.best = up
            self.progress.update(self.task, best=f"best {up:.2f}x")
        shown = f"{up:.3f}x" if up else data["status"]
        note = f"[dim]{data['head_to_head']}[/]" if data.get("head_to_head") else \
            "" if up else f"[dim]{(data.get('message') or '')[:90]}[/]"
        line = " ".join(x for x in (shown, mark, note.strip()) if x)
        self.console.print(f"  {data['description'] or data['key']}: {line}", highlight=False)
