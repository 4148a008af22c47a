"""Bottleneck diagnosis: turn counters, compile facts and the roofline into ranked findings.

    from tritonforge.diagnosis import DiagnosisInput, diagnose, main_bottleneck
    findings = diagnose(DiagnosisInput(metrics=kernel_metrics, compile={"registers": 64, "spills": 0}))
    top = main_bottleneck(findings)

The rules are data (`rules.RULES`); `diagnose` evaluates each against one set of
signals (`signals.signals`) and ranks what fired by score.
"""

from __future__ import annotations

from typing import Sequence

from tritonforge.diagnosis.model import DiagnosisInput, Finding
from tritonforge.diagnosis.rules import RULES, Rule
from tritonforge.diagnosis.signals import Signals, signals

__all__ = ["DiagnosisInput", "Finding", "Rule", "RULES", "Signals", "diagnose", "main_bottleneck", "signals"]

# Below this, a finding is a remark, not the thing holding the kernel back.
MIN_BOTTLENECK_SCORE = 0.2


def diagnose(inp: DiagnosisInput, rules: Sequence[Rule] = RULES) -> list[Finding]:
    """Every rule that fires on `inp`, highest score first (ties keep the rules' order)."""
    s = signals(inp)
    found = [f for rule in rules if (f := rule.apply(s)) is not None]
    return sorted(found, key=lambda f: -f.score)


def main_bottleneck(findings: Sequence[Finding], min_score: float = MIN_BOTTLENECK_SCORE) -> Finding | None:
    """The finding most worth acting on, or None when nothing scores above `min_score`."""
    best = max(findings, key=lambda f: f.score, default=None)
    return best if best is not None and best.score >= min_score else None
