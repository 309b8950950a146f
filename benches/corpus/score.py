#!/usr/bin/env python3
"""Scores toolgate's findings over the corpus against the hand-labelled development set.

Runs `toolgate lint --from FORMAT FILE --format sarif` over every corpus file, maps each rule to the
smell its documentation names (the `Smell:` line of the rule's explanation, read from the SARIF
log's `tool.driver.rules`), attributes each result to the tool record whose JSON text holds the
result's primary location, and compares the tools each smell is reported on with the labels of
tests/fixtures/lint-dev/labels.json. A finding about a whole list (anchored outside every tool
record) counts for no tool.

Usage: score.py [CORPUS_DIR] [LABELS.json] [--toolgate BIN] [--list dev|held-out|all]
  CORPUS_DIR  default: $TOOLGATE_CORPUS, else ../shared/corpus (beside the repository)
  LABELS      default: tests/fixtures/lint-dev/labels.json
  --toolgate  default: $TOOLGATE, else target/release/toolgate (built if missing)
  --mapping   a JSON object {rule id: smell} used instead of the `Smell:` lines (to score a
              build whose rules predate them)
  --half      which half's figures to print (default: both)
  --list      print the false positives and false negatives of that half (default: none, so
              that the held-out half is only ever seen as figures)

Prints precision and recall per smell for the development half and the held-out half.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# The format each source ships its list in (as benches/corpus/lint_corpus.sh).
def format_of(stem: str) -> str:
    if stem.startswith("anthropic-") or stem == "cline-sdk":
        return "anthropic"
    if stem in ("openai-codex", "continue", "langchain-community", "openhands", "swe-agent"):
        return "openai"
    return "mcp"


def tool_ids(records: list[dict], stem: str) -> list[str]:
    """The ids labels.json uses: `stem/name`, with `[bundle]` when a name repeats in a file."""
    names = [r["name"] for r in records]
    out = []
    for r in records:
        tid = f"{stem}/{r['name']}"
        if names.count(r["name"]) > 1:
            tid += f"[{(r.get('extra') or {}).get('bundle')}]"
        out.append(tid)
    return out


def record_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) character offsets of each element of the top-level JSON array."""
    spans, depth, start, in_str, esc = [], 0, None, False, False
    for i, c in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
            continue
        if c == '"':
            in_str = True
        elif c in "[{":
            if depth == 1 and c == "{":
                start = i
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth == 1 and c == "}" and start is not None:
                spans.append((start, i + 1))
                start = None
    return spans


def offset_of(text: str, line: int, column: int) -> int:
    """Character offset of a 1-based line and 1-based character column (SARIF regions)."""
    lines = text.split("\n")
    return sum(len(l) + 1 for l in lines[: line - 1]) + column - 1


SMELL_LINE = re.compile(r"^Smell: ([^(.\n]+)", re.M)


def smell_of(descriptor: dict) -> str | None:
    """The smell a rule's explanation names on its `Smell:` line (`none` or no line: no smell)."""
    text = (descriptor.get("fullDescription") or {}).get("text", "")
    m = SMELL_LINE.search(text)
    if not m:
        return None
    name = m.group(1).strip().lower().replace(" ", "-")
    return None if name in ("none", "-", "") else name


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "corpus", nargs="?",
        default=os.environ.get("TOOLGATE_CORPUS") or str(REPO.parent / "shared" / "corpus"),
    )
    ap.add_argument("labels", nargs="?", default=str(REPO / "tests/fixtures/lint-dev/labels.json"))
    ap.add_argument("--toolgate", default=os.environ.get("TOOLGATE"))
    ap.add_argument("--list", choices=["dev", "held-out", "all"])
    ap.add_argument("--mapping")
    ap.add_argument("--half", choices=["dev", "held-out", "both"], default="both")
    a = ap.parse_args()

    toolgate = Path(a.toolgate) if a.toolgate else REPO / "target/release/toolgate"
    if not toolgate.exists():
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
    labels = json.loads(Path(a.labels).read_text())
    smells: list[str] = labels["smells"]
    tools: dict = labels["tools"]

    override = json.loads(Path(a.mapping).read_text()) if a.mapping else None
    predicted: dict[str, dict[str, list[str]]] = {}  # tool -> smell -> [rule: message]
    mapping: dict[str, str | None] = {}
    corpus = Path(a.corpus)
    for path in sorted(corpus.glob("*.json")):
        stem = path.stem
        text = path.read_text()
        records = json.loads(text)
        ids = tool_ids(records, stem)
        spans = record_spans(text)
        assert len(spans) == len(ids), f"{path}: {len(spans)} spans for {len(ids)} records"
        out = subprocess.run(
            [str(toolgate), "lint", "--from", format_of(stem), "--format", "sarif", str(path)],
            capture_output=True, text=True,
        )
        if out.returncode not in (0, 1):
            print(f"{path}: toolgate exited {out.returncode}\n{out.stderr}", file=sys.stderr)
            return 2
        run = json.loads(out.stdout)["runs"][0]
        for d in run["tool"]["driver"]["rules"]:
            mapping[d["id"]] = override.get(d["id"]) if override is not None else smell_of(d)
        for r in run.get("results", []):
            smell = mapping.get(r["ruleId"])
            if smell is None:
                continue
            loc = r["locations"][0]["physicalLocation"]["region"]
            at = offset_of(text, loc["startLine"], loc["startColumn"])
            for tid, (s, e) in zip(ids, spans):
                if s <= at < e:
                    msg = r["message"]["text"].split("\nhelp:")[0]
                    predicted.setdefault(tid, {}).setdefault(smell, []).append(f"{r['ruleId']}: {msg}")
                    break

    unknown = sorted({s for s in mapping.values() if s and s not in smells})
    if unknown:
        print(f"rules name smells that are not labelled: {unknown}", file=sys.stderr)
        return 2
    print("rules per smell (from each rule's `Smell:` line):")
    for s in smells:
        print(f"  {s:30} {', '.join(sorted(r for r, m in mapping.items() if m == s)) or '-'}")
    print()

    for half in ("dev", "held-out") if a.half == "both" else (a.half,):
        members = [t for t, v in tools.items() if v["half"] == half]
        print(f"{half} half ({len(members)} tools)")
        print(f"| smell | labelled | reported | right | precision | recall |")
        print(f"|---|---:|---:|---:|---:|---:|")
        details = []
        for s in smells:
            truth = {t for t in members if s in tools[t]["smells"]}
            said = {t for t in members if s in predicted.get(t, {})}
            tp = truth & said
            p = f"{len(tp) / len(said):.2f}" if said else "-"
            r = f"{len(tp) / len(truth):.2f}" if truth else "-"
            print(f"| {s} | {len(truth)} | {len(said)} | {len(tp)} | {p} | {r} |")
            if a.list in (half, "all"):
                for t in sorted(said - truth):
                    details.append(f"FP {s} {t}\n     {predicted[t][s][0][:300]}")
                for t in sorted(truth - said):
                    details.append(f"FN {s} {t}\n     label: {tools[t]['smells'][s]}")
        print()
        if details:
            print("\n".join(details))
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
