"""Launch values as functions of the file's literals, from what each launch received at run time.

Static resolution follows a launch value back to one literal. Real code computes many of them
(`min(triton.next_power_of_2(n), 1024)`, `configs[x.dtype]["BLOCK_M"]`, a helper's return, a
`@triton.heuristics` lambda): for those, the launches captured per case (their constexpr
values and the host locals around them) let `Replay` evaluate the expression, check that it
gives what the launch really received, and name the literals it read. A move then becomes an
edit of one of those literals, chosen by replaying the candidate edits (`solve`), so a value
that was a function of the shape stays one.
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass, field
from typing import Any

from tritonforge.analysis.launch_sites.replay import Frame, Replay
from tritonforge.analysis.launch_sites.replay_statements import Given
from tritonforge.analysis.launch_sites.replay_values import DEVICE_QUERIES, UNKNOWN, Dotted, literal_int, runtime_value

# Values tried for a literal when solving: powers of two cover block sizes, warps, stages,
# thresholds and caps alike.
_TRIALS = tuple(1 << p for p in range(0, 18))
# In the note of a value the source gives otherwise than its launch received it.
RECEIVED = "the launch received"


@dataclass
class CapturedLaunch:
    """One launch as it happened on one case: the values it received and the host locals."""

    kernel: str
    values: dict[str, Any]  # constexpr parameters, num_warps, num_stages
    args: dict[str, Any]  # every kernel argument, in `runtime_value` form (for heuristics)
    frames: dict[str, dict[str, Any]]  # function name -> its locals at the launch (runtime_value form)
    configs: list[dict[str, Any]] | None = None  # its autotuner's configs, as launch_capture wrote them
    line: int | None = None  # the file's line that made it (None: not recorded)
    col: int | None = None  # the column of the call on that line
    caller: str | None = None  # the function of the file that line is in
    grid_callable: bool = False  # its grid was a function of the meta-parameters
    calls: tuple[int, ...] = ()  # the lines of the file's frames on the stack, outermost first
    given: tuple[str, ...] | None = None  # the launch options it was passed (None: not recorded)

    @staticmethod
    def from_record(data: dict[str, Any]) -> "CapturedLaunch":
        """From `LaunchRecord.to_json()` (analysis.launch_capture)."""
        values: dict[str, Any] = {"num_warps": data.get("num_warps"), "num_stages": data.get("num_stages")}
        args: dict[str, Any] = {}
        for a in data.get("args", []):
            if a["kind"] == "tensor":
                args[a["name"]] = runtime_value({"__tensor__": {"shape": a.get("shape") or [],
                                                                "dtype": f"torch.{a.get('dtype')}",
                                                                "strides": a.get("strides") or []}})
            else:
                args[a["name"]] = a.get("value")
            if a["kind"] == "constexpr":
                values[a["name"]] = a.get("value")
        frames = {fn: {k: runtime_value(v) for k, v in local.items()}
                  for fn, local in (data.get("frames") or {}).items()}
        return CapturedLaunch(data["kernel_name"], values, args, frames, data.get("autotune_configs"), data.get("line"),
                              data.get("col"), data.get("caller"), bool(data.get("grid_callable")),
                              tuple(data.get("calls") or ()),
                              None if data.get("given") is None else tuple(data["given"]))


@dataclass
class Runtime:
    """The launches of one file per case, and the case whose values `Tunable.current` reports."""

    cases: dict[str, list[CapturedLaunch]]
    dominant: str  # the case that weighs most (the longest); moves aim at its values
    source_key: str = ""  # the file the launches were captured from: only its values are checked
    passed: int | None = None  # how many arguments every case passes the entry (None: not known)
    lines: dict[str, tuple[int, ...]] = field(default_factory=dict)  # kernel -> its sites' lines (at_sites)
    paths: dict[str, tuple[tuple[int, ...], ...]] = field(default_factory=dict)  # kernel -> its sites' call lines

    @staticmethod
    def from_records(records: dict[str, list[dict[str, Any]]], dominant: str | None = None,
                     source_key: str = "", passed: int | None = None) -> "Runtime":
        cases = {label: [CapturedLaunch.from_record(r) for r in recs] for label, recs in records.items()}
        return Runtime(cases, dominant if dominant in cases else (list(cases)[-1] if cases else ""), source_key,
                       passed)

    def at_sites(self, sites: list[tuple[str, int, tuple[int, ...]]]) -> "Runtime":
        """This runtime with launches matched to the file's launch sites, (kernel, line, the
        lines of the calls from the entry to it) in discovery order, by the line that made them:
        a site in a branch no case takes, or after a loop of launches, gets its own launches,
        not the next in call order; sites sharing a line (a launcher helper called from two
        lines of the entry) by the calls on the stack too. A kernel some launch of which came
        from no site's line (a launcher called through a partial, a capture without lines)
        stays matched in call order."""
        lines: dict[str, list[int]] = {}
        paths: dict[str, list[tuple[int, ...]]] = {}
        for kernel, line, calls in sites:
            lines.setdefault(kernel, []).append(line)
            paths.setdefault(kernel, []).append(calls)
        made = [launch for launches in self.cases.values() for launch in launches]
        kept = {k: tuple(v) for k, v in lines.items()
                if all(launch.line in v for launch in made if launch.kernel == k)}
        return dataclasses.replace(self, lines=kept, paths={k: tuple(paths[k]) for k in kept})

    def frames_at(self, case: str, launch: CapturedLaunch) -> dict[str, dict[str, Any]]:
        """The host locals at `launch`, and those of functions no longer on the stack as the
        earlier launches of the case last saw them (an autograd `forward`, for its `backward`)."""
        earlier: dict[str, dict[str, Any]] = {}
        for made in self.cases.get(case, []):
            if made is launch:
                break
            earlier.update(made.frames)
        return {**earlier, **launch.frames}

    def made_at(self, caller: str, call: ast.Call) -> dict[str, bool]:
        """The kernels launched by `call`, in `caller`, on any case, each with whether every
        such launch had a grid of the meta-parameters."""
        out: dict[str, bool] = {}
        for launches in self.cases.values():
            for launch in launches:
                if (launch.caller, launch.line, launch.col) == (caller, call.lineno, call.col_offset):
                    out[launch.kernel] = out.get(launch.kernel, True) and launch.grid_callable
        return out

    def launch(self, case: str, kernel: str, occurrence: int) -> CapturedLaunch | None:
        """The launch of the `occurrence`-th site of `kernel` on `case`: by line where
        `at_sites` could match them, else the `occurrence`-th launch in call order."""
        same = [launch for launch in self.cases.get(case, []) if launch.kernel == kernel]
        lines = self.lines.get(kernel, ())
        if occurrence < len(lines):
            line = lines[occurrence]
            same = [launch for launch in same if launch.line == line]
            paths = self.paths.get(kernel, ())
            if lines.count(line) > 1 and len(paths) == len(lines) and all(launch.calls for launch in same):
                path = paths[occurrence]
                same = [launch for launch in same if _on_path(path, launch.calls[:-1])]
                occurrence = [p for ln, p in zip(lines[:occurrence], paths) if ln == line].count(path)
            else:
                occurrence = lines[:occurrence].count(line)
        return same[occurrence] if occurrence < len(same) else None


def _on_path(calls: tuple[int, ...], stack: tuple[int, ...]) -> bool:
    """Whether a site's call lines appear, in order, among a launch's stack lines (frames of the
    file the reading does not follow, a decorator's wrapper, may come between)."""
    rest = iter(stack)
    return all(line in rest for line in calls)


@dataclass
class ReplayedValue:
    """A launch value the host code computes, as replay sees it on every case."""

    expr: ast.expr  # evaluated in `fn` just before the launch line (or a heuristics lambda's body)
    fn: ast.FunctionDef | ast.Lambda | None
    line: int
    kernel: str
    occurrence: int
    per_case: dict[str, Any] = field(default_factory=dict)
    knobs: tuple[ast.Constant, ...] = ()  # the literals it reads, first read first
    heuristic: bool = False  # a @triton.heuristics lambda: `args` is the launch's arguments
    defaulted: frozenset[str] = frozenset()  # parameters of `fn` its caller leaves at their defaults
    given: Given = field(default_factory=dict)  # what the callers from the entry pass (function_frame)
    aim: str | None = None  # the case its moves aim at (None: the dominant one)
    case_knobs: dict[str, tuple[ast.Constant, ...]] = field(default_factory=dict)  # the literals each case reads
    # A knob that stands for a column of a loop's work items: all of them, edited together.
    columns: dict[int, tuple[ast.Constant, ...]] = field(default_factory=dict)
    # Each case's lower bound from a host guard (`if N > BLOCK_SIZE: raise`): no edit goes below.
    floors: dict[str, int] = field(default_factory=dict)

    def case(self, runtime: "Runtime") -> str:
        if self.aim:
            return self.aim
        if self.per_case and runtime.dominant not in self.per_case:  # its kernel runs on other cases
            return list(self.per_case)[-1]
        return runtime.dominant


def replay_value(tree: ast.Module, runtime: Runtime, value: ReplayedValue, param: str,
                 edits: dict[int, int] | None = None, verify: bool = True) -> tuple[dict[str, Any], str]:
    """Evaluate `value` on every case; fill its per-case values and knobs. The note says why
    not, when a case cannot be evaluated or (with `verify`, for the file the launches were
    captured from) disagrees with what its launch received."""
    out: dict[str, Any] = {}
    by_case: dict[str, tuple[ast.Constant, ...]] = {}
    launching = [c for c in runtime.cases if runtime.launch(c, value.kernel, value.occurrence) is not None]
    # A launch site that picks its kernel per case (`kernel, block = _OPS[act]`): each kernel's
    # value is read on the cases that launch it.
    for case in launching if launching and value.kernel else runtime.cases:
        got, reads = _evaluate(tree, runtime, value, case, edits, value.columns if edits is None else None)
        by_case[case] = tuple(dict.fromkeys(reads))
        launch = runtime.launch(case, value.kernel, value.occurrence)
        if got is UNKNOWN or launch is None:
            return {}, f"not computable from this file and the captured values ({case})"
        if verify and edits is None and param in launch.values and launch.values[param] != got:
            shown = got.name if isinstance(got, Dotted) else got  # `tl.float32`, as written
            if not isinstance(shown, (int, float, str, bool, tuple, type(None))):
                return {}, f"replaying the source gives no plain value ({case})"  # a function, a record
            return {}, f"replaying the source gives {shown}, {RECEIVED} {launch.values[param]} ({case})"
        out[case] = got
    if edits is None:
        knobs = dict.fromkeys(c for reads in by_case.values() for c in reads)  # ast nodes hash by identity
        value.per_case, value.knobs, value.case_knobs = out, tuple(knobs), by_case
    return out, ""


def _evaluate(tree: ast.Module, runtime: Runtime, value: ReplayedValue, case: str,
              edits: dict[int, int] | None, columns: dict | None = None) -> tuple[Any, list[ast.Constant]]:
    launch = runtime.launch(case, value.kernel, value.occurrence)
    if launch is None:
        return UNKNOWN, []
    replay = Replay(tree, runtime.frames_at(case, launch), edits)
    if columns is not None:  # filled once the evaluation below has run (a dict is passed by reference)
        replay.columns = columns
    if value.heuristic:
        frame = Frame(value.fn, values={"args": dict(launch.args)})
        # The lambda's parameter may have any name: bind it to the launch's arguments.
        params = [p.arg for p in value.fn.args.args] if isinstance(value.fn, ast.Lambda) else []
        if params:
            frame.values[params[0]] = dict(launch.args)
    elif isinstance(value.fn, ast.FunctionDef):
        frame = replay.function_frame(value.fn, value.line, defaulted=value.defaulted, given=value.given)
    else:
        frame = replay.module_frame()
    return replay.value_of(value.expr, frame)


class Unreachable(ValueError):
    """No edit of one literal per value gives the values asked for."""


def solve(tree: ast.Module, runtime: Runtime, values: dict[str, ReplayedValue], targets: dict[str, Any],
          fixed: dict[int, int] | None = None, locked: frozenset[int] = frozenset()) -> dict[int, int]:
    """Literal edits (id(ast.Constant) -> new value) under which each value in `values` takes
    its target on the dominant case; values without a target keep their current one.
    `fixed` edits are made anyway (literal tunables); `locked` literals are never chosen.

    Greedy, one literal per value to change, targets first; raises Unreachable.
    """
    want = {tid: targets.get(tid, v.per_case.get(v.case(runtime))) for tid, v in values.items()}
    edits: dict[int, int] = dict(fixed or {})
    locked = locked | _off_by_one(tree)
    device = _device_branches(tree)
    for tid in [t for t in values if t in targets] + [t for t in values if t not in targets]:
        if _value(tree, runtime, values[tid], edits) == want[tid]:
            continue
        edit = _one_edit(tree, runtime, values, tid, want, edits, locked, device)
        if edit is None:
            raise Unreachable(f"{tid}: no single literal edit gives {want[tid]} on {runtime.dominant}")
        edits[edit[0]] = edit[1]
    wrong = [tid for tid, v in values.items() if _value(tree, runtime, v, edits) != want[tid]]
    if wrong:
        raise Unreachable(f"{', '.join(wrong)}: cannot keep together with the other values")
    return edits


def _off_by_one(tree: ast.Module) -> frozenset[int]:
    """The 1 of `n - 1` and `n + 1`: rounding, never a setting (`1 << (n - 1).bit_length()`
    reaches 64 from 128 by `n - 64` on one size, which means nothing to the reader)."""
    return frozenset(id(side) for node in ast.walk(tree) if isinstance(node, ast.BinOp)
                     and isinstance(node.op, (ast.Add, ast.Sub)) for side in (node.left, node.right)
                     if isinstance(side, ast.Constant) and side.value == 1 and type(side.value) is int)


def _device_branches(tree: ast.Module) -> frozenset[int]:
    """Literals of a branch chosen by asking for the GPU (`NUM_SMS = 4` under `if not
    torch.cuda.is_available()`): a stand-in for hardware this process may not have, edited
    only where no other literal reaches the value."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.IfExp)) and any(
                isinstance(n, ast.Attribute) and ast.unparse(n) in DEVICE_QUERIES for n in ast.walk(node.test)):
            branches = [node.body, node.orelse] if isinstance(node, ast.IfExp) else [*node.body, *node.orelse]
            out.update(id(c) for b in branches for c in ast.walk(b) if isinstance(c, ast.Constant))
    return frozenset(out)


def _one_edit(tree: ast.Module, runtime: Runtime, values: dict[str, ReplayedValue], tid: str,
              want: dict[str, Any], edits: dict[int, int], locked: frozenset[int],
              device: frozenset[int] = frozenset()) -> tuple[int, int] | None:
    """The edit of one of `tid`'s literals that reaches its target and disturbs the fewest
    values already settled, then one that keeps a value that differed from case to case doing
    so (`max(BLOCK // 256, 1)` -> `BLOCK // 128`, not `max(..., 8)`); literals written as the
    value itself first."""
    target = want[tid]
    best: tuple[tuple, tuple[int, int]] | None = None
    varied = _distinct(tree, runtime, values[tid], edits) > 1
    now, reads = _evaluate(tree, runtime, values[tid], values[tid].case(runtime), edits)
    for knob in reads:
        if id(knob) in edits or id(knob) in locked:
            continue
        current = literal_int(knob) or 0
        nearest = sorted(_TRIALS, key=lambda t: abs(t.bit_length() - current.bit_length()))
        trials = ([target] if isinstance(target, int) else []) + [t for t in nearest if t != target]
        for trial in trials:
            if trial == current:
                continue
            trial_edits = {**edits, id(knob): trial}
            if _value(tree, runtime, values[tid], trial_edits) != target:
                continue
            if not _above_floors(tree, runtime, values[tid], trial_edits):
                continue  # the entry's guard would raise on some case
            disturbed = sum(1 for other, v in values.items() if other != tid
                            and _value(tree, runtime, v, trial_edits) != _value(tree, runtime, v, edits))
            collapsed = varied and _distinct(tree, runtime, values[tid], trial_edits) == 1
            # The literal that is the value itself (`256` of `BLOCK, warps = 256, 4`) before one
            # that merely reaches it (a branch's threshold sending the case elsewhere).
            rank = (disturbed, collapsed, id(knob) in device, current != now, trial != target,
                    abs((trial.bit_length()) - (current.bit_length())))
            if best is None or rank < best[0]:
                best = (rank, (id(knob), trial))
    return best[1] if best else None


def _above_floors(tree: ast.Module, runtime: Runtime, value: ReplayedValue, edits: dict[int, int]) -> bool:
    """Whether `value` stays at or above its host guard's bound on every case (`floors`)."""
    for case, floor in value.floors.items():
        got = _evaluate(tree, runtime, value, case, edits)[0]
        if isinstance(got, int) and got < floor:
            return False
    return True


def _distinct(tree: ast.Module, runtime: Runtime, value: ReplayedValue, edits: dict[int, int]) -> int:
    """How many different values `value` takes over the cases under `edits`."""
    return len({repr(_evaluate(tree, runtime, value, case, edits)[0]) for case in value.per_case or runtime.cases})


def _value(tree: ast.Module, runtime: Runtime, value: ReplayedValue, edits: dict[int, int]) -> Any:
    return _evaluate(tree, runtime, value, value.case(runtime), edits)[0]
