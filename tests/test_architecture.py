"""The package's shape: folders in data-flow order, each importing only folders before it
(lazy imports inside functions included), shared modules importing no folder, no file over
600 lines."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "src" / "tritonforge"
# The order the data passes through the stages: a folder may import only those before it.
ORDER = ["problem", "analysis", "profiling", "diagnosis", "strategies", "llm", "worker", "evaluate", "search",
         "store", "executors", "report", "commands"]
SHARED = {"domain", "files", "triton_hooks"}  # types and helpers every stage may use
TOP = {"cli", "__main__", "__init__"}  # the command line wires everything


def imports() -> dict[str, set[str]]:
    """Folder (or top-level module) -> the tritonforge folders and modules it imports."""
    out: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        unit = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tritonforge."):
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name.startswith("tritonforge.")]
            for name in names:
                target = name.split(".")[1]
                if target != unit:
                    out.setdefault(unit, set()).add(target)
    return out


def test_every_folder_is_placed_in_the_data_flow():
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders - set(ORDER) <= SHARED, f"place new folders in ORDER: {folders - set(ORDER) - SHARED}"


def test_folders_import_only_the_stages_before_them():
    wrong = []
    for unit, targets in imports().items():
        if unit in TOP:
            continue
        for target in targets:
            if target in SHARED:
                continue
            if unit in SHARED:
                wrong.append(f"shared {unit} imports {target}")
            elif ORDER.index(target) > ORDER.index(unit):
                wrong.append(f"{unit} imports {target}, which comes after it")
    assert not wrong, wrong


def test_the_store_imports_no_plug_in_family():
    assert imports().get("store", set()) <= SHARED


def test_no_source_file_is_over_600_lines():
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 600}
    assert not long, long
