"""The ways a request to a worker can end without a plain answer.

Both sides use them: the worker raises `CandidateFault` while serving and sends it as
{"status", "message", "fatal"}; `WorkerClient` raises one of these for every reply that is
not a plain answer, so callers decide whose fault it was in one place.
"""

from __future__ import annotations

from typing import Any

from tritonforge.domain.verdict import Status


class WorkerFault(Exception):
    """A request that got no plain answer; `phase` is the last stage the worker announced."""

    def __init__(self, message: str, phase: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.phase = phase


class ProcessFailed(WorkerFault):
    """The process crashed or gave no answer in time; it is gone (a fresh one takes over)."""

    def __init__(self, failure: str, error: str, phase: str | None = None) -> None:
        super().__init__(f"{failure}: {error}", phase)
        self.failure = failure  # "crash" or "timeout"
        self.error = error  # first lines of what the worker printed, or why it was killed


class ProblemFault(WorkerFault):
    """The problem's own code failed (import, make_inputs, reference...)."""


class InternalFault(WorkerFault):
    """The worker itself failed while serving the request."""


class CandidateFault(WorkerFault):
    """The candidate failed: `status` is its verdict; `fatal` when its process must not be reused."""

    def __init__(self, status: Status, message: str, fatal: bool = False, phase: str | None = None) -> None:
        super().__init__(message, phase)
        self.status, self.fatal = status, fatal

    def __str__(self) -> str:
        return f"{self.status.value}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status.value, "message": self.message, "fatal": self.fatal}


def fault_of(result: dict[str, Any], phase: str | None = None) -> WorkerFault | None:
    """The fault a worker's answer reports, or None for a plain answer."""
    if "problem_error" in result:
        return ProblemFault(result["problem_error"], phase)
    if "internal_error" in result:
        return InternalFault(result["internal_error"], phase)
    if "fatal" in result and "status" in result:
        return CandidateFault(Status(result["status"]), result.get("message", ""), bool(result["fatal"]), phase)
    return None
