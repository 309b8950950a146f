#!/usr/bin/env python3
"""Scores toolgate's findings per project, the way an outsider scores a linter on lists it never saw.

Every labelled set is a folder of tool lists (one JSON array of records per source file, each with
`name`, `description`, `input_schema`, `annotations`, `output_schema`?, `source.repo`) and a labels
file (a JSON array of `{source_file, key, smells}`; `key` is the tool's name, `name#2` for its second
occurrence in one file). Each source file is linted as an MCP `tools/list` answer with one tool per
line (`toolgate lint --from mcp --format sarif`), and a finding counts for the tool on its line.
Rules map to smells by a rule map (`--rule-map`, a JSON object {rule id: smell}) or, without one,
by the `Smell:` line of each rule's explanation in the SARIF log.

A project is a source repository (`source.repo` of its records). Each project is one fold: the
report gives every project's precision and recall per smell, then per smell the worst project
(lowest recall among projects with a labelled positive, lowest precision among projects where the
smell was reported). Then, for every rule, the projects its right findings come from: a rule whose
right findings all come from one project reads a cue only that project uses, and scores nothing
once that project is left out (`single-project`).

Usage:
  folds.py --set CORPUS_DIR LABELS.json [--set CORPUS_DIR LABELS.json ...]
           [--rule-map MAP.json] [--toolgate BIN] [--smells a,b,...] [--json OUT] [--preview]
  --toolgate  default: $TOOLGATE, else target/release/toolgate (built if missing)
  --json      also write the figures as JSON (per project, per smell, worst, per rule)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SMELL_LINE = re.compile(r"^Smell: ([^(.\n]+)", re.M)


def mcp_tool(record: dict) -> dict:
    """A corpus record as an MCP tool definition."""
    tool = {
        "name": record["name"],
        "description": record.get("description") or "",
        "inputSchema": record.get("input_schema") or {"type": "object"},
        "annotations": record.get("annotations"),
        "outputSchema": record.get("output_schema"),
    }
    return {k: v for k, v in tool.items() if v is not None}


def keys_of(records: list[dict]) -> list[str]:
    """The label keys of a file's records: the name, `name#N` for its N-th repeat."""
    seen: Counter = Counter()
    out = []
    for r in records:
        seen[r["name"]] += 1
        out.append(r["name"] if seen[r["name"]] == 1 else f"{r['name']}#{seen[r['name']]}")
    return out


def smell_of(descriptor: dict) -> str | None:
    """The smell a rule's explanation names on its `Smell:` line (`none` or no line: no smell)."""
    text = (descriptor.get("fullDescription") or {}).get("text", "")
    m = SMELL_LINE.search(text)
    if not m:
        return None
    name = m.group(1).strip().lower().replace(" ", "-")
    return None if name in ("none", "-", "") else name


def lint_file(toolgate: Path, records: list[dict], tmp: Path,
              extra: tuple[str, ...] = ()) -> tuple[dict, dict]:
    """(line index -> rule ids fired there, rule id -> SARIF descriptor) for one source file;
    `extra`: more `toolgate lint` arguments (`--preview`)."""
    path = tmp / "tools.json"
    lines = [json.dumps(mcp_tool(r)) for r in records]
    path.write_text('{"tools": [\n' + ",\n".join(lines) + "\n]}\n")
    out = subprocess.run(
        [str(toolgate), "lint", "--from", "mcp", "--format", "sarif", "--fail-on", "error", *extra, str(path)],
        capture_output=True, text=True, timeout=120,
    )
    if out.returncode not in (0, 1):
        raise RuntimeError(f"toolgate exited {out.returncode}: {out.stderr.strip()[:400]}")
    fired: dict[int, set[str]] = defaultdict(set)
    descriptors = {}
    for run in json.loads(out.stdout).get("runs", []):
        for d in run.get("tool", {}).get("driver", {}).get("rules", []):
            descriptors[d["id"]] = d
        for res in run.get("results", []):
            for loc in res.get("locations", [])[:1]:
                line = loc.get("physicalLocation", {}).get("region", {}).get("startLine")
                if line and 2 <= line < 2 + len(records):
                    fired[line - 2].add(res["ruleId"])
    return fired, descriptors


def ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", nargs=2, action="append", metavar=("CORPUS_DIR", "LABELS"), required=True)
    ap.add_argument("--rule-map")
    ap.add_argument("--toolgate", default=os.environ.get("TOOLGATE"))
    ap.add_argument("--smells")
    ap.add_argument("--json")
    ap.add_argument("--preview", action="store_true", help="run the preview rules too")
    a = ap.parse_args()
    extra = ("--preview",) if a.preview else ()

    toolgate = Path(a.toolgate) if a.toolgate else REPO / "target/release/toolgate"
    if not toolgate.exists():
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
    rule_map = None
    if a.rule_map:
        rule_map = {k: v for k, v in json.loads(Path(a.rule_map).read_text()).items() if not k.startswith("_")}

    # (project, tool id) -> labelled smells, and -> rule ids fired
    truth: dict[tuple[str, str], set[str]] = {}
    fired_on: dict[tuple[str, str], set[str]] = {}
    descriptors: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for corpus, labels_path in a.set:
            labels = {(l["source_file"], l["key"]): set(l["smells"]) - {"none"}
                      for l in json.loads(Path(labels_path).read_text())}
            for path in sorted(Path(corpus).glob("*.json")):
                records = json.loads(path.read_text())
                if not isinstance(records, list):
                    continue
                try:
                    fired, ds = lint_file(toolgate, records, Path(tmp), extra)
                except RuntimeError as e:
                    print(f"{path}: {e}", file=sys.stderr)
                    return 2
                descriptors.update(ds)
                for i, (record, key) in enumerate(zip(records, keys_of(records))):
                    if (path.name, key) not in labels:
                        continue
                    project = (record.get("source") or {}).get("repo") or path.stem
                    tid = (project, f"{path.name}/{key}")
                    truth[tid] = labels[(path.name, key)]
                    fired_on[tid] = fired.get(i, set())

    smell_by_rule = rule_map if rule_map is not None else {r: smell_of(d) for r, d in descriptors.items()}
    labelled = sorted({s for v in truth.values() for s in v})
    smells = a.smells.split(",") if a.smells else labelled
    predicted = {t: {smell_by_rule.get(r) for r in rs} - {None} for t, rs in fired_on.items()}
    projects = sorted({p for p, _ in truth})

    def score(members: list, smell: str) -> dict:
        pos = {t for t in members if smell in truth[t]}
        said = {t for t in members if smell in predicted[t]}
        tp = len(pos & said)
        return {"labelled": len(pos), "reported": len(said), "right": tp,
                "precision": ratio(tp, len(said)), "recall": ratio(tp, len(pos))}

    report: dict = {"projects": {}, "pooled": {}, "worst": {}, "rules": {}}
    for project in projects:
        members = [t for t in truth if t[0] == project]
        report["projects"][project] = {"tools": len(members), **{s: score(members, s) for s in smells}}
    everyone = list(truth)
    report["pooled"] = {s: score(everyone, s) for s in smells}

    print(f"{len(everyone)} labelled tools, {len(projects)} projects; each project is one fold\n")
    print("| project | tools | " + " | ".join(smells) + " |")
    print("|---|---:|" + "---|" * len(smells))
    for project in projects:
        row = report["projects"][project]
        cells = [f"{fmt(row[s]['precision'])} / {fmt(row[s]['recall'])}" for s in smells]
        print(f"| {project} | {row['tools']} | " + " | ".join(cells) + " |")
    cells = [f"{fmt(report['pooled'][s]['precision'])} / {fmt(report['pooled'][s]['recall'])}" for s in smells]
    print("| **all** | " + str(len(everyone)) + " | " + " | ".join(cells) + " |")
    print("\nprecision / recall; `-`: nothing reported (precision) or nothing labelled (recall)\n")

    print("worst project per smell:")
    for s in smells:
        rows = [(p, report["projects"][p][s]) for p in projects]
        by_recall = [(r["recall"], p) for p, r in rows if r["recall"] is not None]
        by_precision = [(r["precision"], p) for p, r in rows if r["precision"] is not None]
        worst_r = min(by_recall) if by_recall else None
        worst_p = min(by_precision) if by_precision else None
        report["worst"][s] = {"recall": worst_r and {"project": worst_r[1], "value": worst_r[0]},
                              "precision": worst_p and {"project": worst_p[1], "value": worst_p[0]}}
        wr = f"recall {worst_r[0]:.2f} ({worst_r[1]})" if worst_r else "recall -"
        wp = f"precision {worst_p[0]:.2f} ({worst_p[1]})" if worst_p else "precision -"
        print(f"  {s:28} {wp:52} {wr}")

    print("\nrules: the projects their right findings come from")
    for rule in sorted(smell_by_rule):
        smell = smell_by_rule[rule]
        if smell not in smells:
            continue
        right = Counter(t[0] for t, rs in fired_on.items() if rule in rs and smell in truth[t])
        wrong = sum(1 for t, rs in fired_on.items() if rule in rs and smell not in truth[t])
        verdict = "no right finding" if not right else ("single-project" if len(right) == 1 else "")
        report["rules"][rule] = {"smell": smell, "right_by_project": dict(right), "wrong": wrong,
                                 "verdict": verdict or "several projects"}
        spread = ", ".join(f"{p} {n}" for p, n in right.most_common()) or "-"
        print(f"  {rule} ({smell}): right {sum(right.values())}, wrong {wrong}; {spread}"
              + (f"  [{verdict}]" if verdict else ""))

    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
