"""Each optimized corpus problem against the device, at its largest case, in one process:
baseline and best timed alternately with `triton.testing.do_bench` (median, its own L2 flush),
the bytes they must move against a large device-to-device copy, and matmuls against
`torch.matmul` on the same inputs.

    python3 benchmarks/corpus_ratios.py RUNS_DIR OUT.json [NAME ...]
    python3 benchmarks/corpus_ratios.py --recorded OUT.json [NAME ...]

RUNS_DIR holds one optimize run directory per corpus problem (named after it); without
names, every problem with a run there. A name without a best.py is timed as its baseline only.
--recorded takes instead the newest best on record for every corpus problem, rebuilt from its
best.diff (the ones benchmarks/agreement.py re-judges), so one step measures the whole corpus
without optimizing it again.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import torch
import triton

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from tritonforge.problem.module import ProblemModule, import_file  # noqa: E402

CORPUS = ROOT / "benchmarks" / "corpus"


def bench(fn) -> float:
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")


def copy_bandwidth() -> float:
    src = torch.randn(1 << 28, device="cuda")  # 1 GiB
    dst = torch.empty_like(src)
    ms = bench(lambda: dst.copy_(src))
    return 2 * src.numel() * 4 / (ms * 1e-3)


def tensor_bytes(args: tuple, out) -> int:
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return sum(t.numel() * t.element_size() for t in (*args, *outs) if isinstance(t, torch.Tensor))


def measure(name: str, runs: Path, copy_bw: float) -> dict:
    """Every SHAPES case; "largest" names the one that moves the most bytes."""
    path = CORPUS / f"{name}.py"
    pm = ProblemModule(path)
    files = {"baseline": path, "best": runs / name / "best.py"}
    fns = {label: getattr(import_file(p, f"ratio_{label}"), pm.entry_name)
           for label, p in files.items() if p.exists()}
    result: dict = {"cases": {}}
    for case in pm.cases()[0]:
        result["cases"][case.label] = _case(pm, case, fns, copy_bw, matmul="matmul" in name)
        torch.cuda.empty_cache()
    result["largest"] = max(result["cases"], key=lambda k: result["cases"][k]["bytes"])
    return result


def _case(pm: ProblemModule, case, fns: dict, copy_bw: float, matmul: bool) -> dict:
    args = pm.make_args(case, 0, "cuda")
    want = (pm.reference or pm.entry)(*args)
    declared = pm.bytes(**case.params) if pm.bytes else None
    moved = float(declared) if declared is not None else tensor_bytes(args, want)
    result: dict = {"bytes": moved}
    times: dict[str, list[float]] = {label: [] for label in fns}
    for _ in range(3):  # alternate, so drift hits both alike
        for label, fn in fns.items():
            times[label].append(bench(lambda: fn(*args)))
    for label, fn in fns.items():
        ms = sorted(times[label])[1]
        result[label] = {"ms": ms, "bytes_per_s": moved / (ms * 1e-3), "fraction_of_copy": moved / (ms * 1e-3) / copy_bw,
                         "max_abs_err": _err(fn(*args), want)}
    if "best" in result:
        result["speedup"] = result["baseline"]["ms"] / result["best"]["ms"]
    if matmul:
        a, b = args[0], args[1]
        result["torch_matmul_ms"] = torch_ms = bench(lambda: torch.matmul(a, b))
        for label in fns:
            result[label]["fraction_of_torch"] = torch_ms / result[label]["ms"]
    return result


def _err(got, want) -> float:
    g = got[0] if isinstance(got, (tuple, list)) else got
    w = want[0] if isinstance(want, (tuple, list)) else want
    return (g.double() - w.double()).abs().max().item()


def recorded_runs(into: Path) -> dict[str, str]:
    """Fill `into` as a RUNS_DIR: for every corpus problem with a best on record, that best as
    best.py. Returns each problem's name and the run folder its best came from."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from agreement import RECORDED, best_file, newest_diffs

    found = {}
    for name, diff in newest_diffs(RECORDED).items():
        if (CORPUS / f"{name}.py").exists():
            best = best_file(CORPUS / f"{name}.py", diff, into)
            best.rename(best.with_name("best.py"))
            found[name] = str(diff.parent)
    return found


def main() -> None:
    if sys.argv[1] == "--recorded":
        with tempfile.TemporaryDirectory() as tmp:
            best_from = recorded_runs(Path(tmp))
            run(Path(tmp), Path(sys.argv[2]), sys.argv[3:] or sorted(best_from), best_from)
    else:
        runs = Path(sys.argv[1])
        names = sys.argv[3:] or sorted(p.stem for p in CORPUS.glob("*.py") if (runs / p.stem / "summary.json").exists())
        run(runs, Path(sys.argv[2]), names, {})


def run(runs: Path, out: Path, names: list[str], best_from: dict[str, str]) -> None:
    result: dict = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__}
    result["copy_bytes_per_s"] = copy_bw = copy_bandwidth()
    for name in names:
        try:
            result[name] = {**measure(name, runs, copy_bw), "best_from": best_from.get(name)}
        except Exception as e:  # one problem's failure must not cost the others' numbers
            result[name] = {"error": f"{type(e).__name__}: {e}"}
        torch.cuda.empty_cache()
        out.write_text(json.dumps(result, indent=2))
        print(name, json.dumps(result[name]), flush=True)


if __name__ == "__main__":
    main()
