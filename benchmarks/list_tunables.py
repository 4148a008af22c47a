"""Every tunable of every problem file in the given folders, as the tool sees it with the
file's launches captured (Triton's interpreter, CPU tensors under the CUDA stand-ins): one line
per tunable, for a before/after diff of a change to launch analysis.

    TRITON_INTERPRET=1 python3 benchmarks/list_tunables.py tests/fixtures/problems/styles benchmarks/corpus examples > after.txt
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tritonforge.analysis.launch_capture import capture_launches  # noqa: E402
from tritonforge.analysis.launch_sites import SearchSpace  # noqa: E402
from tritonforge.analysis.launch_sites.runtime import Runtime  # noqa: E402
from tritonforge.domain.candidate import source_key  # noqa: E402
from tritonforge.problem.module import ProblemModule  # noqa: E402


def tunables(path: Path) -> list[str]:
    pm = ProblemModule(path)
    records = {case.label: [r.to_json() for r in capture_launches(pm.entry, pm.make_args(case, 0, "cpu"),
                                                                 execute=False, stand_ins=True)]
               for case in pm.cases()[1]}
    text = path.read_text()
    space = SearchSpace.from_source(text, pm.describe().entry, Runtime.from_records(records, None, source_key(text)))
    return [f"{t.id} = {t.current!r} free={t.free} legal={t.legal[:3]}.. | {t.why}" for t in space.tunables]


def main() -> None:
    for folder in sys.argv[1:]:
        for path in sorted(Path(folder).glob("*.py")):
            if path.name.startswith("_"):
                continue
            try:
                lines = tunables(path)
            except Exception as e:  # a file the tool refuses: say so, go on
                lines = [f"ERROR {type(e).__name__}: {str(e)[:200]}"]
            for line in lines:
                print(f"{path.name}: {line}", flush=True)


if __name__ == "__main__":
    main()
