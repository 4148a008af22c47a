"""The launch parameters of a run, as the summary and report show them: per launch site,
each parameter's value, where it comes from, whether the search may move it and, if
not, why. Built from a search-space record (plain data, as the run store keeps it)."""

from __future__ import annotations

from typing import Any


def launch_parameters(record: dict[str, Any] | None, basis: str) -> dict[str, Any]:
    """The summary's "launch_parameters" section from a launch strategy's search-space record.
    `basis` says what the record is, e.g. "round 3's search space, on the baseline"."""
    record = record or {}
    params = {t["id"]: t for t in record.get("tunables", []) + record.get("fixed", [])}
    free_labels = _labels([t for t in record.get("tunables", [])])
    moves = record.get("moves", [])
    sites = []
    for s in record.get("sites", []):
        rows = [_parameter(name, params[tid], moves, free_labels.get(tid, set()))
                for name, tid in {**s.get("bindings", {}), **s.get("branches", {})}.items() if tid in params]
        sites.append({"kernel": s["kernel"], "line": s["line"], "function": s["function"], "grid": s["grid"],
                      "autotuned": s.get("autotuned", False), "parameters": rows})
    return {"basis": basis, "sites": sites, "unreached": record.get("unreached", {})}


def _parameter(name: str, t: dict[str, Any], moves: list[dict[str, Any]], labels: set[str]) -> dict[str, Any]:
    row = {"parameter": name, "id": t["id"], "kind": t["kind"], "value": t["current"], "free": t["free"]}
    # For a value the search may not move, the analysis' one line says where it comes from,
    # which is also why: the search rewrites only what it can trace to the file's text.
    why_not = _all_pruned(moves, labels) if t["free"] else t["why"]
    row.update({"from": t["why"], "why_not_moved": why_not})
    return row


def _labels(free: list[dict[str, Any]]) -> dict[str, set[str]]:
    """The names a move description may use for each free tunable: its parameter name
    unless two free tunables share it, its id always."""
    names = [t["id"].split(".", 1)[-1].split("#")[0] for t in free]
    return {t["id"]: {t["id"]} | ({n} if names.count(n) == 1 else set()) for t, n in zip(free, names)}


def _all_pruned(moves: list[dict[str, Any]], labels: set[str]) -> str | None:
    """Why a free value stayed where it was: every move of it was pruned, or none was made."""
    mine = [m for m in moves if labels & _moved_labels(m["description"])]
    if any(m["status"] != "pruned" for m in mine):
        return None
    if not mine:
        return "no move of it was considered in the last round"
    # Why its own moves were ruled out, before those of moves it was part of (whose reason may
    # be another value's: num_stages in a loop-less kernel).
    alone = [m for m in mine if _moved_labels(m["description"]) <= labels] or mine
    reasons = list(dict.fromkeys(m["reason"] for m in alone))
    return "every move was ruled out: " + "; ".join(reasons)


def _moved_labels(description: str) -> set[str]:
    """"BLOCK 64->128, num_warps 4->8" -> {"BLOCK", "num_warps"}; "k.configs: pin ..." -> {"k.configs"}."""
    return {part.strip().split(" ")[0].rstrip(":") for part in description.split(", ") if part.strip()}


def no_launch_found(section: dict[str, Any] | None) -> str:
    """Why no launch site was found: the kernels launched at run time, and why each is not one."""
    unreached = (section or {}).get("unreached", {})
    if not unreached:
        return "No Triton launch was found from the entry."
    return "No launch site in the problem file: " + "; ".join(f"{k} is {why}" for k, why in unreached.items()) + "."


def not_moved(section: dict[str, Any] | None) -> list[str]:
    """One line per parameter the search left alone: "kernel.PARAM = value (why)"."""
    out = []
    for site in (section or {}).get("sites", []):
        for p in site["parameters"]:
            if p["why_not_moved"]:
                out.append(f"{site['kernel']}.{p['parameter']} = {_value(p['value'])} ({p['why_not_moved']})")
    return list(dict.fromkeys(out))


def markdown_table(section: dict[str, Any] | None) -> list[str]:
    """The report's "Launch parameters" section."""
    sites = (section or {}).get("sites", [])
    lines = ["## Launch parameters", ""]
    if not sites:
        return lines + [no_launch_found(section), ""]
    lines += [f"From {section['basis']}. Free values are the ones the search may move (\"ruled out\": every "
              "move of it was).", "",
              "| launch | parameter | value | free | where it comes from / why not moved |",
              "|---|---|---:|---|---|"]
    for s in sites:
        where = f"`{s['kernel']}` (line {s['line']}, in {s['function']})"
        for p in s["parameters"]:
            why = " / ".join(dict.fromkeys(x for x in (p["from"], p["why_not_moved"]) if x))
            # Free, yet every move of it ruled out: not "yes" beside a reason it stayed.
            free = "no" if not p["free"] else "ruled out" if p["why_not_moved"] else "yes"
            lines.append(f"| {where} | {p['parameter']} | {_value(p['value'])} | {free} | {table_cell(why)} |")
    return lines + [""]


def _value(v: Any) -> str:
    if v is None:
        return "set at run time"
    if isinstance(v, list):
        return f"{len(v)} autotune configs"
    return str(v)


def table_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
