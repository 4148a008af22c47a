"""Strategies by name: the built-in one, a toy added in one file, and a run with the toy."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES, ROOT
from tritonforge.domain.candidate import source_key
from tritonforge.evaluate.evaluator import EvalOptions
from tritonforge.worker.timing import TimingConfig
from tritonforge.commands.optimize import OptimizeOptions, optimize
from tritonforge.search.loop import SearchConfig
from tritonforge.strategies.base import Candidate, Outcome, SearchState, Strategy
from tritonforge.strategies.launch import LaunchParamStrategy
from tritonforge.strategies.registry import available, create, register, unregister
from tritonforge.store import RunStore


@pytest.fixture(autouse=True)
def toy():
    """The toy's module registers it on import; forget it afterwards, so that runs elsewhere in
    the suite with the default strategies (every one registered) do not pick it up."""
    from tests.strategies import toy_strategy

    register("toy", toy_strategy.ToyStrategy)
    yield toy_strategy.ToyStrategy
    unregister("toy")


def state_for(source: str) -> SearchState:
    baseline = Candidate(source=source, origin="baseline")
    return SearchState(problem_path="problem.py", entry="add", baseline_source=source, best=baseline)


def test_the_built_in_and_the_toy_are_available_by_name(toy):
    ToyStrategy = toy
    assert {"launch_params", "toy"} <= set(available())
    assert available() == sorted(available())
    launch, toy = create(["launch_params", "toy"])
    assert isinstance(launch, LaunchParamStrategy) and isinstance(toy, ToyStrategy)
    assert all(isinstance(s, Strategy) for s in create(None))
    assert {type(s) for s in create(None)} >= {LaunchParamStrategy, ToyStrategy}
    assert create(["toy"])[0] is not create(["toy"])[0]  # a fresh instance per run


def test_an_unknown_name_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="unknown strategy 'nope'.*known: .*launch_params.*toy"):
        create(["nope"])


def test_a_taken_name_is_refused_for_another_class(toy):
    ToyStrategy = toy
    register("toy", ToyStrategy)  # the same class again: nothing changes
    with pytest.raises(ValueError, match="already registered"):
        register("toy", LaunchParamStrategy)
    with pytest.raises(ValueError, match="already registered"):
        register("launch_params", ToyStrategy)


def test_importing_the_registry_leaves_the_built_ins_unloaded():
    code = "import sys, tritonforge.strategies.registry; print('tritonforge.strategies.launch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT / "src")})
    assert out.stdout.strip() == "False"


def test_the_strategy_base_class_defaults():
    class Bare(Strategy):
        name = "bare"

        def propose(self, state, limit):
            return []

    with pytest.raises(TypeError):
        type("NoPropose", (Strategy,), {"name": "x"})()
    bare, source = Bare(), (EXAMPLES / "vector_add.py").read_text()
    state = state_for(source)
    assert bare.applies(source, "add") and bare.describe_space() is None
    assert bare.observe(Outcome(state.best, "correct"), state) is None
    assert state.source == source and state.gpu == {} and state.floors_ms == {} and state.best_cases == []


def test_the_toy_doubles_the_block_constant_of_the_entry(toy):
    ToyStrategy = toy
    source = (EXAMPLES / "vector_add.py").read_text()
    toy = ToyStrategy()
    assert toy.applies(source, "add") and not toy.applies("def add():\n    pass\n", "add")
    (c,) = toy.propose(state_for(source), 3)
    assert c.origin == "toy" and c.params == {"BLOCK": 128}
    assert [line for line in c.source.splitlines() if line not in source.splitlines()] == ["    BLOCK = 128"]
    state = state_for(source)
    state.history.append(Outcome(c, "correct"))
    assert toy.propose(state, 3) == []  # nothing left once tried


def test_a_run_with_the_toy_judges_and_records_its_candidate(tmp_path):
    options = OptimizeOptions(out=tmp_path / "run", evaluation=EvalOptions(device="cpu", timing=TimingConfig(cpu_reps=2)),
                              search=SearchConfig(budget=2, minutes=None, per_round=3, patience=3),
                              strategies=["toy"])  # as `optimize --strategy toy` passes it
    outcome = optimize(EXAMPLES / "vector_add.py", options)
    assert outcome.result.tried == 1
    with RunStore.open(tmp_path / "run" / "run.sqlite") as store:
        judged = {c.origin: (c, ev) for c, ev in store.judged()}
    assert set(judged) == {"baseline", "toy"}
    toy, ev = judged["toy"]
    assert "BLOCK = 128" in toy.source and toy.key == source_key(toy.source)
    assert ev["status"] == "correct"


def test_forgotten_strategies_leave_the_defaults():
    unregister("toy")
    assert "toy" not in available() and "launch_params" in available()


def test_optimize_help_lists_the_strategy_option():
    from typer.testing import CliRunner

    from tritonforge.cli import app

    out = CliRunner().invoke(app, ["optimize", "--help"], env={"COLUMNS": "200"}).output
    assert "--strategy" in out and "launch_params" in out


def test_an_unknown_strategy_on_the_command_line_is_one_line_exit_2():
    from typer.testing import CliRunner

    from tritonforge.cli import app

    result = CliRunner().invoke(app, ["optimize", str(EXAMPLES / "vector_add.py"), "--strategy", "nope"])
    assert result.exit_code == 2
    assert "unknown strategy 'nope'" in result.output
