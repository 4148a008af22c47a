"""Statistics over timing samples: medians, spreads and a bootstrap interval for speedups."""

from __future__ import annotations

import numpy as np

from tritonforge.domain.verdict import Speedup, Timing


def summarize(samples_ms: list[float]) -> Timing:
    a = np.asarray(samples_ms, dtype=float)
    p20, med, p80 = np.percentile(a, [20, 50, 80])
    return Timing(median_ms=float(med), p20_ms=float(p20), p80_ms=float(p80), n=int(a.size))


def speedup(baseline_ms: list[float], candidate_ms: list[float], *, resamples: int = 2000,
            confidence: float = 0.95, seed: int = 0) -> Speedup:
    """Ratio of medians, with a paired bootstrap interval.

    Samples were taken alternately (baseline, candidate, baseline, ...), so the pairs are
    resampled together: drift that hits both members of a pair cancels in the interval.
    """
    b = np.asarray(baseline_ms, dtype=float)
    c = np.asarray(candidate_ms, dtype=float)
    n = min(b.size, c.size)
    b, c = b[:n], c[:n]
    value = float(np.median(b) / np.median(c))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n))
    ratios = np.median(b[idx], axis=1) / np.median(c[idx], axis=1)
    lo, hi = np.percentile(ratios, [50 * (1 - confidence), 50 * (1 + confidence)])
    return Speedup(value=value, ci_low=float(min(lo, value)), ci_high=float(max(hi, value)))
