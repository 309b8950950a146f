#!/usr/bin/env python3
"""Scores toolgate and the four MCP linters on PyPI against the same expert labels, per smell.

For every labelled set, `other_linters.py` writes the peers' findings (run it first, once per set,
in the Python environment that has them); this script lints the same files with toolgate
(`folds.py`'s way: one MCP `tools/list` answer per source file, one tool per line) and counts, per
smell, the tools each linter reports and how many of them the labels agree with.

A peer's rule counts for a smell through its category (`compare.py`'s `CATEGORY` / `AGENT_FRIEND`:
what the rule's documentation says it is about) and `SMELL_OF_CATEGORY` below, fixed from the
rule lists before any score was looked at; toolgate's rules count through the rule map given
(`--rule-map`), else their `Smell:` line. A linter "has a rule for" a smell when one of its rules
maps to it; `ahead` compares F1 (the harmonic mean of precision and recall) with each peer that
has one, pooled over all sets.

Usage:
  peers.py --set CORPUS_DIR LABELS.json OTHERS.json [--set ...] [--rule-map MAP.json]
           [--toolgate BIN] [--json OUT] [--preview]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare  # noqa: E402
import folds  # noqa: E402

PEERS = ["agent-friend", "lintlang", "mcplint", "mcpolish"]

# compare.py's categories as the labels' smells. A category that is about style, naming or schema
# validity maps to no smell: the labels do not judge those.
SMELL_OF_CATEGORY = {
    "missing-constraint": "missing-constraints",
    "unstable-result": "unstable-result",
    "exclusive-params": "mutually-exclusive-params",
    "overlapping-tools": "ambiguous-sibling",
    "missing-description": "vague-description",
    "missing-param-description": "vague-description",
    "thin-description": "vague-description",
    "destructive-approval": "destructive-without-signal",
    "pagination": "unbounded-output",
}


def ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def f1(p: float | None, r: float | None) -> float | None:
    if p is None or r is None:
        return None
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", nargs=3, action="append", metavar=("CORPUS_DIR", "LABELS", "OTHERS"),
                    required=True)
    ap.add_argument("--rule-map")
    ap.add_argument("--toolgate", default=None)
    ap.add_argument("--json")
    ap.add_argument("--preview", action="store_true", help="toolgate runs its preview rules too")
    a = ap.parse_args()
    extra = ("--preview",) if a.preview else ()

    toolgate = Path(a.toolgate) if a.toolgate else folds.REPO / "target/release/toolgate"
    if not toolgate.exists():
        print(f"{toolgate}: no such binary (build it, or pass --toolgate)", file=sys.stderr)
        return 2
    rule_map = None
    if a.rule_map:
        rule_map = {k: v for k, v in json.loads(Path(a.rule_map).read_text()).items()
                    if not k.startswith("_")}

    # set name -> tool id -> labelled smells; linter -> tool id -> reported smells
    truth: dict[str, dict[tuple[str, str], set[str]]] = {}
    said: dict[str, dict[tuple[str, str], set[str]]] = defaultdict(lambda: defaultdict(set))
    has_rule: dict[str, set[str]] = defaultdict(set)
    with tempfile.TemporaryDirectory() as tmp:
        for corpus, labels_path, others_path in a.set:
            name = Path(corpus).name if Path(corpus).name != "corpus" else Path(corpus).parent.name
            labels = {(l["source_file"], l["key"]): set(l["smells"]) - {"none"}
                      for l in json.loads(Path(labels_path).read_text())}
            truth[name] = {}
            keys_by_name: dict[tuple[str, str], list[str]] = defaultdict(list)
            descriptors: dict[str, dict] = {}
            fired_by_key: dict[tuple[str, str], set[str]] = {}
            for path in sorted(Path(corpus).glob("*.json")):
                records = json.loads(path.read_text())
                if not isinstance(records, list):
                    continue
                fired, ds = folds.lint_file(toolgate, records, Path(tmp), extra)
                descriptors.update(ds)
                for i, (record, key) in enumerate(zip(records, folds.keys_of(records))):
                    if (path.name, key) not in labels:
                        continue
                    truth[name][(path.name, key)] = labels[(path.name, key)]
                    keys_by_name[(path.name, record["name"])].append(key)
                    fired_by_key[(path.name, key)] = fired.get(i, set())
            smell_by_rule = rule_map if rule_map is not None else {
                r: folds.smell_of(d) for r, d in descriptors.items()}
            has_rule["toolgate"].update(s for s in smell_by_rule.values() if s)
            for tid, rules in fired_by_key.items():
                said["toolgate"][(name, *tid)] |= {smell_by_rule.get(r) for r in rules} - {None}
            for f in json.loads(Path(others_path).read_text()):
                smell = SMELL_OF_CATEGORY.get(compare.category(f["linter"], f["rule"]))
                if smell is None:
                    continue
                has_rule[f["linter"]].add(smell)
                # A finding names its tool; a name repeated in one file counts for each record.
                for key in keys_by_name.get((f["file"], f.get("tool")), []):
                    said[f["linter"]][(name, f["file"], key)].add(smell)

    smells = sorted({s for t in truth.values() for v in t.values() for s in v})
    linters = ["toolgate", *PEERS]

    def score(linter: str, members: list[tuple[str, str, str]], smell: str) -> dict:
        pos = {t for t in members if smell in truth[t[0]][t[1:]]}
        rep = {t for t in members if smell in said[linter].get(t, set())}
        tp = len(pos & rep)
        p, r = ratio(tp, len(rep)), ratio(tp, len(pos))
        return {"reported": len(rep), "right": tp, "labelled": len(pos), "precision": p,
                "recall": r, "f1": f1(p if p is not None else 0.0, r)}

    scopes = {s: [(s, *k) for k in truth[s]] for s in truth}
    scopes["all"] = [t for ms in scopes.values() for t in ms]
    report: dict = {}
    for scope, members in scopes.items():
        report[scope] = {l: {s: score(l, members, s) for s in smells if s in has_rule[l]}
                         for l in linters}
        print(f"\n### {scope} ({len(members)} labelled tools)\n")
        print("| smell | " + " | ".join(linters) + " |")
        print("|---|" + "---|" * len(linters))
        for s in smells:
            cells = []
            for l in linters:
                x = report[scope][l].get(s)
                cells.append("no rule" if x is None else
                             f"{fmt(x['precision'])} / {fmt(x['recall'])} ({x['reported']})")
            print(f"| {s} | " + " | ".join(cells) + " |")

    print("\nprecision / recall (tools reported); `no rule`: no rule of that linter maps to the smell")
    print("\nahead (pooled F1, toolgate vs each peer with a rule for the smell):")
    behind = 0
    for s in smells:
        mine = report["all"]["toolgate"].get(s)
        for l in PEERS:
            theirs = report["all"][l].get(s)
            if theirs is None:
                continue
            ok = mine is not None and (mine["f1"] or 0) > (theirs["f1"] or 0)
            behind += not ok
            print(f"  {s:28} vs {l:13} {fmt(mine and mine['f1'])} vs {fmt(theirs['f1'])}"
                  + ("" if ok else "  [not ahead]"))
    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=1) + "\n")
    print(f"\nnot ahead: {behind}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
