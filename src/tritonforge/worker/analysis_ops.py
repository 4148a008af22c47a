"""Facts about a call without judging it: compile, analyze, launched, count_flops, ceilings.

`compile` and `analyze` run in a worker with the GPU hidden: the entry is called with CPU
tensors while its launches are recorded and skipped, and each kernel is compiled offline
for the target GPU. `launched` runs on the GPU; `count_flops` in Triton's interpreter.
"""

from __future__ import annotations

import json
from typing import Any, Callable

import torch

from tritonforge.domain.verdict import Status
from tritonforge.problem.spec import Case
from tritonforge.worker import compare as cmp
from tritonforge.worker.calls import classify, one_line, sync
from tritonforge.worker.candidate import CandidateCalls
from tritonforge.worker.faults import CandidateFault


class AnalysisOps(CandidateCalls):
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
            records = capture_launches(entry, args, execute=False, stand_ins=True)
        except Exception as e:
            # Host code this worker cannot run on CPU tensors is no fault of the candidate:
            # without facts, the GPU judges it (the tool must not lose candidates to itself).
            records, uncaptured = None, f"launches not captured on CPU ({one_line(e)}): judged on the GPU"
        tampered = self.integrity.violations()
        if tampered:
            raise CandidateFault(Status.REJECTED, f"the candidate replaced {tampered}", fatal=True)
        if _layout(args) != shapes:  # these arguments serve the next candidates too
            self.args_cache = {}
            raise CandidateFault(Status.REJECTED, "the entry changed its arguments' shapes or strides", fatal=True)
        if records is None:
            return {"status": "ok", "facts": [], "note": uncaptured}
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
        records = capture_launches(lambda *a: held.setdefault("out", entry(*a)), args, execute=False,
                                   stand_ins=self.device == "compile")
        written = [a for n, a in zip(pm.param_names, args) if n in pm.outputs]
        work = {"bytes": tensor_bytes(args, cmp.tensors(held.get("out")), written),
                "declared_bytes": _declared(pm.bytes, case), "declared_flops": _declared(pm.flops, case)}
        self.phase("compile")
        return {"launches": _compile_all(records, int(req.get("arch", 90))), "work": work}

    def op_capture(self, req: dict[str, Any]) -> dict[str, Any]:
        """The launches one call makes, recorded and skipped, with the host locals around each
        (what computed launch values are replayed from). On CPU tensors unless on a GPU."""
        from tritonforge.analysis.launch_capture import capture_launches

        pm = self.problem(req)
        entry = self.candidate_entry(pm, req.get("candidate"))
        on_gpu = self.device == "cuda"
        self.phase("make_inputs")
        args = pm.make_args(Case.from_json(req["case"]), 0, "cuda" if on_gpu else "cpu")
        self.phase("capture")
        try:
            # CUDA's device queries are stood in only where a GPU will run what is captured here:
            # in the interpreter the host code takes its CPU path, and so must the capture.
            records = capture_launches(entry, args, execute=False, stand_ins=self.device == "compile")
        except Exception as e:
            raise CandidateFault(Status.ERROR, f"while capturing its launches: {one_line(e)}") from None
        shapes = [list(a.shape) if isinstance(a, torch.Tensor) else None for a in args]
        return {"launches": [r.to_json() for r in records], "shapes": shapes}

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
            sync(self.device)
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


def _layout(args: tuple) -> list[Any]:
    return [(tuple(a.shape), a.stride(), a.dtype, a.data_ptr()) if isinstance(a, torch.Tensor) else repr(a)
            for a in args]
