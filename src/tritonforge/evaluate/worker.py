"""The worker process: imports problems and candidates, runs them, reports in JSON lines.

Started by `tritonforge.evaluate.pool.Worker` as `python -m tritonforge.evaluate.worker`.
Requests arrive one JSON object per line on stdin; the reply is one JSON object per line
on a private copy of stdout. Before each stage it writes {"phase": ...}, so that when a
candidate kills the process the parent knows whose fault it was. Whatever user code
prints goes to stderr, which the parent keeps in a log.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Callable, TextIO

# Timing references are bound here, before any user code can be imported.
from tritonforge.evaluate import timing  # noqa: E402  (import order is the point)
from tritonforge.evaluate import compare as cmp
from tritonforge.evaluate.integrity import Integrity
from tritonforge.evaluate.launches import LaunchCounter
from tritonforge.evaluate.source_scan import introspection
from tritonforge.evaluate.torch_ops import TorchOps, computing
from tritonforge.domain.verdict import Status
from tritonforge.problem.module import ProblemModule, import_file, out_of_memory, signature_of, syntax_error
from tritonforge.problem.spec import Case, ProblemError

import torch


# Timed calls of a candidate whose results are checked, picked at random after the fact: a
# candidate that cheats in more than half of its timed calls (the share that could move a
# median) escapes with probability below 2**-6.
TIMED_CHECKS = 6


class CandidateFault(Exception):
    def __init__(self, status: Status, message: str, fatal: bool = False) -> None:
        super().__init__(message)
        self.status, self.message, self.fatal = status, message, fatal


class Worker:
    def __init__(self, out: TextIO, device: str) -> None:
        self.out = out
        self.device = device
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
        self.integrity = Integrity()

    # --- protocol -----------------------------------------------------------------
    def send(self, obj: dict[str, Any]) -> None:
        self.out.write(json.dumps(obj, default=_json_default) + "\n")
        self.out.flush()

    def phase(self, name: str) -> None:
        self.send({"phase": name})

    def serve(self, requests: TextIO) -> None:
        for line in requests:
            if not line.strip():
                continue
            req = json.loads(line)
            try:
                reply = getattr(self, "op_" + req["op"])(req)
            except ProblemError as e:
                reply = {"problem_error": e.what}
            except CandidateFault as e:
                reply = {"status": e.status.value, "message": e.message, "fatal": e.fatal}
            except BaseException as e:  # the worker must answer, whatever happened
                reply = {"internal_error": "".join(traceback.format_exception_only(type(e), e)).strip(),
                         "fatal": True}
            self.send({"done": reply})

    # --- requests -----------------------------------------------------------------
    def problem(self, req: dict[str, Any]) -> ProblemModule:
        key = (req["problem"], req.get("entry"), tuple(req.get("specs") or []))
        if key not in self.problems:
            self.phase("load_problem")
            self.problems[key] = ProblemModule(req["problem"], req.get("entry"), req.get("specs"))
        return self.problems[key]

    def op_describe(self, req: dict[str, Any]) -> dict[str, Any]:
        return {"problem": self.problem(req).describe().to_json()}

    def op_env(self, req: dict[str, Any]) -> dict[str, Any]:
        return environment(self.device)

    def op_prepare(self, req: dict[str, Any]) -> dict[str, Any]:
        """The problem's own checks on every case, before any candidate is imported here.

        Repeatable inputs and a deterministic reference, seen in a process no candidate has
        touched: a reference that fails later, with a candidate loaded, is then its fault.
        """
        pm = self.problem(req)
        reference = pm.reference or pm.entry
        for raw in req["cases"]:
            case = Case.from_json(raw)
            key = (req["problem"], case.label)
            self.phase("make_inputs")
            args = pm.make_args(case, req["seed"], self.device)
            self.check_repeatable_inputs(pm, case, req["seed"], args, key)
            self.phase("reference")
            pristine = cmp.snapshot(args)
            _poison(self.call_reference(pm, reference, args, case, key, pristine))
        return {"prepared": len(req["cases"])}

    def op_check(self, req: dict[str, Any]) -> dict[str, Any]:
        pm = self.problem(req)
        case = Case.from_json(req["case"])
        candidate = self.candidate_entry(pm, req.get("candidate"))
        reference = pm.reference or pm.entry
        key = (req["problem"], case.label)
        result = {"status": Status.CORRECT.value, "message": "", "max_abs_err": 0.0, "max_rel_err": 0.0}
        fingerprints = []
        for draw, seed in enumerate(req["seeds"]):
            self.phase("make_inputs")
            args = pm.make_args(case, seed, self.device)
            self.candidate_ops = set()  # the torch operations this draw's calls ran
            fingerprints.append(check_inputs(pm, args, seed))
            if draw == 0:
                self.check_repeatable_inputs(pm, case, seed, args, key)
            before = cmp.snapshot(args)
            ref_args = tuple(cmp.snapshot(args))
            watch = bool(req.get("candidate"))  # the problem's own entry may compute with torch
            self.phase("candidate")
            outs = [(self.call_candidate(candidate, args, watch), args)]
            for _ in range(self.repeats - 1):  # a racy kernel is right only some of the time
                again = tuple(cmp.snapshot(before))
                outs.append((self.call_candidate(candidate, again, watch), again))
            self.phase("checks")
            if watch:
                self.refuse_torch_compute(pm, key, before)
            problem = cmp.aliasing(outs[0][0], [a for a in args if isinstance(a, torch.Tensor)], "input")
            if problem:
                raise CandidateFault(Status.REJECTED, problem)
            problem = cmp.mutated(args, before, pm.param_names, set(pm.outputs))
            if problem:
                raise CandidateFault(Status.WRONG, problem)
            self.phase("reference")
            try:
                want = self.call_reference(pm, reference, ref_args, case, key, before)
            except ProblemError as e:
                if not (req.get("candidate") and key in self.deterministic):
                    raise
                # The reference passed its checks here before this candidate was imported.
                raise CandidateFault(Status.ERROR, f"the reference failed once the candidate was loaded: "
                                                   f"{e.what}", fatal=True) from None
            self.phase("checks")
            want = with_outputs(want, ref_args, pm)
            for call, (out, call_args) in enumerate(outs):
                got = with_outputs(out, call_args, pm)
                problem = cmp.aliasing(got, cmp.tensors(want), "the reference's output")
                if problem:
                    raise CandidateFault(Status.REJECTED, problem)
                c = cmp.compare(got, want, pm.tolerance)
                result["max_abs_err"] = max(result["max_abs_err"], c.max_abs_err)
                result["max_rel_err"] = max(result["max_rel_err"], c.max_rel_err)
                result["draws"] = draw + 1
                if not c.ok:
                    which = f", call {call + 1} of {len(outs)} on the same inputs" if call else ""
                    _poison(want)
                    result.update(status=Status.WRONG.value, message=f"draw {draw + 1} (seed {seed}{which}): {c.message}")
                    return result
            _poison(want)  # so a later call cannot find the right answer in freed memory
        if len(fingerprints) > 1 and len(set(fingerprints)) == 1 and fingerprints[0]:
            raise ProblemError(pm.path, f"make_inputs returns the same inputs for every seed ({case.label})")
        return result

    def check_repeatable_inputs(self, pm: ProblemModule, case: Case, seed: int, args: tuple, key: tuple) -> None:
        """The same seed must give the same inputs: timed outputs are checked on regenerated ones."""
        if key in self.repeatable:
            return
        again = pm.make_args(case, seed, self.device)
        if any(not _same(a, b) for a, b in zip(args, again)):
            raise ProblemError(pm.path, f"make_inputs(seed={seed}, {case.label}) gives different inputs for the "
                                        "same seed; draw them from a torch.Generator seeded with `seed`")
        self.repeatable.add(key)

    def call_reference(self, pm: ProblemModule, reference: Callable, ref_args: tuple, case: Case, key: tuple,
                       pristine: list[Any]) -> Any:
        """The reference's answer; the first time per case, also that a second call agrees."""
        what = "reference" if pm.reference else f"entry '{pm.entry_name}'"
        try:
            want = reference(*ref_args)
            _sync(self.device)
            if key in self.deterministic:
                return want
            second = tuple(cmp.snapshot(pristine))
            again = with_outputs(reference(*second), second, pm)
            _sync(self.device)
        except Exception as e:
            raise ProblemError(pm.path, f"{what} raised {_one_line(e)} on {case.label}") from None
        c = cmp.compare(again, with_outputs(want, ref_args, pm), pm.tolerance)
        if not c.ok:
            raise ProblemError(pm.path, f"{what} is not deterministic on {case.label}: two calls on the same "
                                        f"inputs differ ({c.message})")
        self.deterministic.add(key)
        return want

    def refuse_torch_compute(self, pm: ProblemModule, key: tuple, pristine: list[Any]) -> None:
        """Refuse a candidate that ran torch operations beyond glue and its problem's own entry's."""
        if not computing(self.candidate_ops):
            return
        computed = computing(self.candidate_ops, self.ops_of_entry(pm, key, pristine))
        if computed:
            raise CandidateFault(Status.REJECTED, f"the entry computes with torch ({', '.join(computed[:4])}), "
                                                  "not only with Triton kernels")

    def ops_of_entry(self, pm: ProblemModule, key: tuple, pristine: list[Any]) -> set[str]:
        """The torch operations the problem's own entry runs: a candidate may run them too."""
        if key not in self.entry_ops:
            self.phase("entry")
            ops = TorchOps(self.launches, self.timed_stream())
            with ops:
                out = pm.entry(*cmp.snapshot(pristine))
            _sync(self.device)
            _poison(out)  # a later candidate must not find this answer in freed memory
            self.entry_ops[key] = ops.ops
        return self.entry_ops[key]

    def op_time(self, req: dict[str, Any]) -> dict[str, Any]:
        pm = self.problem(req)
        case = Case.from_json(req["case"])
        candidate = self.candidate_entry(pm, req.get("candidate"))
        # The comparison defaults to the problem's own entry; the loop may pit a candidate
        # against the best so far instead.
        against = self.candidate_entry(pm, req["against"]) if req.get("against") else pm.entry
        fns: dict[str, Callable[..., object]] = {"baseline": against}
        if req.get("candidate"):
            fns["candidate"] = self.guarded(candidate, pm)
        if req.get("with_reference") and pm.reference is not None:
            fns["reference"] = pm.reference
        seed = int(req["seed"])

        def inputs(rep: int) -> list[tuple]:
            # Fresh inputs each repetition; each function gets its own copy, as an entry may
            # write its outputs into its arguments.
            args = pm.make_args(case, seed + 1 + rep, self.device)
            return [args] + [tuple(cmp.snapshot(args)) for _ in range(len(fns) - 1)]

        self.phase("timing")
        config = timing.TimingConfig(**req.get("config", {}))
        verify = (list(fns).index("candidate"), TIMED_CHECKS) if "candidate" in fns else None
        self.violations = []
        self.launches.reset()
        try:
            m = timing.measure(list(fns.values()), self.device, config, inputs, keep=verify)
        except ProblemError as e:
            if not req.get("candidate"):
                raise
            # make_inputs worked for this case while it was checked: what changed is the
            # candidate, holding memory, say.
            status = Status.OOM if "out of memory" in e.what else Status.ERROR
            raise CandidateFault(status, f"while timed, {e.what}", fatal=True) from None
        except Exception as e:
            raise classify(e) from None
        if self.violations:
            raise CandidateFault(Status.REJECTED, f"while timed, {self.violations[0]}", fatal=True)
        self.phase("checks")
        for (_, rep), got in sorted(m.kept.items(), key=lambda kv: kv[0][1]):
            self.verify_timed(pm, case, seed + 1 + rep, rep, got)
        return dict(zip(fns, m.samples))

    def guarded(self, fn: Callable, pm: ProblemModule) -> Callable[..., object]:
        """`fn`, noting any call that launches no Triton kernel or launches on a side stream.

        It returns what the call produced (with the arguments it writes, for problems that
        declare OUTPUTS), for the timed calls picked for checking.
        """
        launches = self.launches
        stream = self.timed_stream()

        def call(*args: Any) -> object:
            before = launches.count
            out = fn(*args)
            if launches.supported and launches.count == before:
                self.violations.append("a call launched no Triton kernel")
            if launches.off_stream(stream):
                self.violations.append("a kernel was launched on another stream than the timed one")
            return with_outputs(out, args, pm)

        return call

    def verify_timed(self, pm: ProblemModule, case: Case, seed: int, rep: int, got: Any) -> None:
        """A timed call's output against the reference on the same (regenerated) inputs."""
        args = pm.make_args(case, seed, self.device)  # make_inputs is seeded: the same inputs again
        reference = pm.reference or pm.entry
        want = with_outputs(reference(*args), args, pm)
        _sync(self.device)
        c = cmp.compare(got, want, pm.tolerance)
        _poison(want)
        if not c.ok:
            raise CandidateFault(Status.REJECTED, f"timed call {rep + 1} returned a wrong result ({c.message}); "
                                                  "it behaves differently when timed", fatal=True)

    def op_compile(self, req: dict[str, Any]) -> dict[str, Any]:
        """Compile a candidate's kernels for the target GPU without running them (no GPU needed)."""
        from tritonforge.analysis.launch_capture import capture_launches

        pm = self.problem(req)
        entry = self.candidate_entry(pm, req["candidate"])
        case = Case.from_json(req["case"])
        key = (req["problem"], json.dumps(req["case"], sort_keys=True))
        if key not in self.args_cache:  # one set of (large, CPU) arguments serves every candidate
            self.phase("make_inputs")
            self.args_cache = {key: pm.make_args(case, 0, "cpu")}
        self.phase("compile")
        args = self.args_cache[key]
        shapes = _layout(args)
        try:
            records = capture_launches(entry, args, execute=False)
        except Exception as e:
            raise CandidateFault(Status.ERROR, f"while capturing its launches: {_one_line(e)}") from None
        tampered = self.integrity.violations()
        if tampered:
            raise CandidateFault(Status.REJECTED, f"the candidate replaced {tampered}", fatal=True)
        if _layout(args) != shapes:  # these arguments serve the next candidates too
            self.args_cache = {}
            raise CandidateFault(Status.REJECTED, "the entry changed its arguments' shapes or strides", fatal=True)
        if not records:
            raise CandidateFault(Status.REJECTED, "the entry launched no Triton kernel")
        launches = _compile_all(records, int(req.get("arch", 90)))
        failed = next((item for item in launches if "error" in item), None)
        if failed:
            raise CandidateFault(Status.COMPILE_ERROR, f"{failed['launch']['kernel_name']}: {failed['error']}")
        return {"status": "ok", "facts": [item["facts"] for item in launches]}

    def op_analyze(self, req: dict[str, Any]) -> dict[str, Any]:
        """Launches, compile facts and bytes of one call, without running a kernel.

        Runs in a worker with the GPU hidden: the entry is called with CPU tensors while its
        launches are recorded and skipped, so outputs are allocated but never computed.
        """
        from tritonforge.analysis.launch_capture import capture_launches
        from tritonforge.analysis.roofline import tensor_bytes

        pm = self.problem(req)
        entry = self.candidate_entry(pm, req.get("candidate"))
        case = Case.from_json(req["case"])
        self.phase("make_inputs")
        args = pm.make_args(case, 0, "cpu")
        self.phase("capture")
        held: dict[str, Any] = {}
        records = capture_launches(lambda *a: held.setdefault("out", entry(*a)), args, execute=False)
        written = [a for n, a in zip(pm.param_names, args) if n in pm.outputs]
        work = {"bytes": tensor_bytes(args, cmp.tensors(held.get("out")), written),
                "declared_bytes": _declared(pm.bytes, case), "declared_flops": _declared(pm.flops, case)}
        self.phase("compile")
        return {"launches": _compile_all(records, int(req.get("arch", 90))), "work": work}

    def op_launched(self, req: dict[str, Any]) -> dict[str, Any]:
        """On a GPU: the facts of the kernels one call actually launched."""
        from tritonforge.analysis.compiled import facts_from_compiled
        from tritonforge.analysis.launch_capture import capture_launches

        pm = self.problem(req)
        entry = self.candidate_entry(pm, req.get("candidate"))
        args = pm.make_args(Case.from_json(req["case"]), 0, self.device)
        self.phase("candidate")
        try:
            records = capture_launches(entry, args, execute=True)
            _sync(self.device)
        except Exception as e:
            raise classify(e) from None
        return {"launches": [{"launch": r.to_json(),
                              "facts": facts_from_compiled(r.compiled).to_json() if r.compiled else None}
                             for r in records]}

    def op_count_flops(self, req: dict[str, Any]) -> dict[str, Any]:
        """FLOPs of one call, counted on sampled programs in Triton's interpreter."""
        from tritonforge.analysis.opcount import count_flops

        pm = self.problem(req)
        entry = self.candidate_entry(pm, req.get("candidate"))
        self.phase("make_inputs")
        args = pm.make_args(Case.from_json(req["case"]), 0, "cpu")
        self.phase("count")
        return {"flops": count_flops(entry, args).to_json()}

    def op_ceilings(self, req: dict[str, Any]) -> dict[str, Any]:
        from tritonforge.profiling.ceilings import measure_on_gpu

        return {"ceilings": measure_on_gpu().to_json()}

    # --- candidates ---------------------------------------------------------------
    def candidate_entry(self, pm: ProblemModule, path: str | None) -> Callable:
        if path is None:
            return pm.entry
        self.phase("load_candidate")
        where = syntax_error(Path(path))
        if where:
            raise CandidateFault(Status.LOAD_ERROR, f"{path} {where}")
        reach = introspection(Path(path).read_text(errors="replace"))
        if reach:
            raise CandidateFault(Status.REJECTED, f"{path} {reach}: a candidate may not reach into the evaluator")
        try:
            module = import_file(Path(path), "candidate")
        except BaseException as e:
            raise CandidateFault(Status.LOAD_ERROR, f"importing {path} raised {_one_line(e)}", fatal=True) from None
        tampered = self.integrity.violations()
        if tampered:
            raise CandidateFault(Status.REJECTED, f"importing the candidate replaced {tampered}", fatal=True)
        entry = getattr(module, pm.entry_name, None)
        if not callable(entry):
            raise CandidateFault(Status.INCOMPATIBLE, f"{path} has no function '{pm.entry_name}'")
        want, got = signature_of(pm.entry), signature_of(entry)
        if [(p.name, p.kind) for p in want] != [(p.name, p.kind) for p in got]:
            raise CandidateFault(
                Status.INCOMPATIBLE,
                f"{pm.entry_name}({_params(got)}) differs from the problem's {pm.entry_name}({_params(want)})",
            )
        return entry

    def timed_stream(self) -> int | None:
        """The stream the evaluator checks and times on (the default one), on a GPU."""
        return torch.cuda.default_stream().cuda_stream if self.device == "cuda" else None

    def call_candidate(self, fn: Callable, args: tuple, watch: bool = False) -> Any:
        """Call a candidate once; `watch`: note the torch operations it runs (self.candidate_ops)."""
        self.launches.reset()
        stream = self.timed_stream()
        ops = TorchOps(self.launches, stream)
        try:
            if watch:
                with ops:
                    out = fn(*args)
            else:
                out = fn(*args)
            _sync(self.device)
        except Exception as e:
            raise classify(e) from None
        tampered = self.integrity.violations()
        if tampered:
            raise CandidateFault(Status.REJECTED, f"the candidate replaced {tampered}", fatal=True)
        if self.launches.supported and self.launches.count == 0:
            raise CandidateFault(Status.REJECTED, "the entry launched no Triton kernel")
        if ops.foreign_stream or self.launches.off_stream(stream):
            raise CandidateFault(Status.REJECTED, "the entry ran work on another CUDA stream than the "
                                                  "current one, where the evaluator's events cannot see it")
        subclass = next((type(t).__name__ for t in cmp.tensors(out) if type(t) is not torch.Tensor), None)
        if subclass:
            raise CandidateFault(Status.REJECTED, f"the entry returned a {subclass}, not a plain torch.Tensor")
        if watch:
            self.candidate_ops |= ops.ops
        return out


# --- helpers --------------------------------------------------------------------------
def _compile_all(records: list, arch: int) -> list[dict[str, Any]]:
    """Each captured launch with its offline compile facts, or the reason it did not compile."""
    from tritonforge.analysis.compiled import CompileFailure, compile_offline

    out = []
    for record in records:
        item: dict[str, Any] = {"launch": record.to_json()}
        try:
            item["facts"] = compile_offline(record, arch=arch).to_json()
        except CompileFailure as e:
            item["error"] = f"{e.kind}: {e}"
        out.append(item)
    return out


def _declared(hook: Callable | None, case: Case) -> float | None:
    """A problem's FLOPS/BYTES hook for a case, when it has one (spec cases have no shape kwargs)."""
    if hook is None or case.spec is not None:
        return None
    return float(hook(**case.params))


def with_outputs(returned: Any, args: tuple, pm: ProblemModule) -> Any:
    """What a call produced: its return value plus the arguments it is declared to write."""
    if not pm.outputs:
        return returned
    written = {n: a for n, a in zip(pm.param_names, args) if n in pm.outputs}
    return {"returned": returned, "written": written}


def check_inputs(pm: ProblemModule, args: tuple, seed: int) -> tuple:
    """Refuse inputs that would hide bugs: constant floating-point tensors."""
    if len(args) != len(pm.param_names):
        raise ProblemError(pm.path, f"make_inputs returned {len(args)} values; {pm.entry_name} takes "
                                    f"{len(pm.param_names)} ({', '.join(pm.param_names)})")
    prints = []
    for name, a in zip(pm.param_names, args):
        if isinstance(a, torch.Tensor) and a.is_floating_point() and a.numel() > 1:
            if name in pm.outputs:
                continue
            flat = a.detach().reshape(-1)
            if bool((flat == flat[0]).all()):
                raise ProblemError(pm.path, f"make_inputs(seed={seed}) returned a constant tensor for '{name}';"
                                            " inputs must be random")
            prints.append(float(flat[:4096].double().sum()))
    return tuple(prints)


def classify(e: BaseException) -> CandidateFault:
    text = _one_line(e)
    name = type(e).__name__
    if out_of_memory(e):
        return CandidateFault(Status.OOM, text, fatal=True)
    if name in ("CompilationError", "CompileTimeAssertionFailure", "OutOfResources", "PTXASError") or \
            type(e).__module__.startswith("triton.compiler"):
        return CandidateFault(Status.COMPILE_ERROR, text, fatal=True)
    lowered = text.lower()
    if any(s in lowered for s in ("cuda error", "illegal memory", "device-side assert", "cuda_error",
                                  "unspecified launch failure", "illegal instruction")):
        return CandidateFault(Status.CRASH, text, fatal=True)
    return CandidateFault(Status.ERROR, text, fatal=True)


def environment(device: str) -> dict[str, Any]:
    import platform

    import triton

    env = {"device": device, "python": platform.python_version(), "torch": torch.__version__,
           "triton": triton.__version__, "numpy": __import__("numpy").__version__}
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        env.update(gpu=props.name, sm_count=props.multi_processor_count,
                   capability=f"{props.major}.{props.minor}", memory_gb=round(props.total_memory / 2**30, 1),
                   cuda=torch.version.cuda, driver=_driver_version())
    else:
        env.update(gpu=None, interpreter=True)
    return env


def _driver_version() -> str | None:
    import subprocess

    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None
    except (OSError, subprocess.SubprocessError):
        return None


def _sync(device: str) -> None:
    if device != "cpu":
        timing._synchronize()


def _layout(args: tuple) -> list[Any]:
    return [(tuple(a.shape), a.stride(), a.dtype, a.data_ptr()) if isinstance(a, torch.Tensor) else repr(a)
            for a in args]


def _same(a: Any, b: Any) -> bool:
    """Equal arguments: tensors bit for bit (NaN matching NaN), other values by ==."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
                and a.dtype == b.dtype and cmp.same_bits(a, b))
    try:
        return bool(a == b)
    except Exception:  # objects without a usable ==: nothing to compare
        return True


def _poison(obj: Any) -> None:
    for t in cmp.tensors(obj):
        if t.is_floating_point():
            t.fill_(float("nan"))


def _params(params: list) -> str:
    return ", ".join(p.name for p in params)


def _one_line(e: BaseException) -> str:
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    # Triton's compile errors put the useful line last.
    text = lines[-1] if lines and type(e).__name__ == "CompilationError" else (lines[0] if lines else "")
    return f"{type(e).__name__}: {text.strip()}" if text else type(e).__name__


def _json_default(o: Any) -> Any:
    if hasattr(o, "item"):
        return o.item()
    return str(o)


def main() -> None:
    import faulthandler

    faulthandler.enable()  # a segfault then leaves a Python traceback in the log
    device = sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else "cpu"
    if os.environ.get("TRITON_INTERPRET") == "1":
        from tritonforge.evaluate import interpreter_compat

        interpreter_compat.install()
    # The protocol gets a private copy of stdout; fd 1 then points at stderr, so that
    # whatever user code prints cannot corrupt a reply.
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    Worker(out, device).serve(sys.stdin)


if __name__ == "__main__":
    main()
