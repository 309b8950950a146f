#!/usr/bin/env python3
"""Runs the four MCP tool-list linters on PyPI over the corpus and writes their findings as one
normalised JSON list: {linter, file, tool, rule, severity, message}.

Needs a Python environment with mcplint-cli 0.2.0, agent-friend 0.209.0, lintlang 0.8.3 and
mcpolish 0.1.1 (see docs/lint-corpus.md). How each one reads the corpus records
({name, description, input_schema, annotations, output_schema?, ...}):

- agent-friend (validate + optimize) and lintlang (scan) read the records as they are: both
  detect the Anthropic shape themselves (agent-friend reports `detected_format: anthropic`).
- mcplint only scans a live server or a saved snapshot, so each record becomes an MCP
  `mcp.types.Tool` and then a snapshot through mcplint's own `tool_from_mcp`, which is what
  `mcplint snapshot --server ...` writes; then `mcplint scan --snapshot`.
- mcpolish only discovers tools in Python source, so each record becomes a `ToolDecl` with
  mcpolish's own `_params_from_schema` (as its discoverer does for an explicit `inputSchema=`
  literal) and the default rule set runs through `run_rules`, with the bundled registry snapshot
  the CLI uses by default.

Usage: other_linters.py CORPUS_DIR OUT.json
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

BIN = Path(sys.executable).parent


def run(cmd: list[str]) -> str:
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.stdout


def agent_friend(path: Path) -> list[dict]:
    out = []
    v = json.loads(run([str(BIN / "agent-friend"), "validate", str(path), "--json"]))
    for i in v.get("issues", []):
        out.append(dict(tool=i.get("tool"), rule="validate:" + i["check"],
                        severity=i["severity"], message=i["message"]))
    o = json.loads(run([str(BIN / "agent-friend"), "optimize", str(path), "--json"]))
    for s in o.get("suggestions", []):
        out.append(dict(tool=s.get("tool"), rule="optimize:" + s["rule"],
                        severity="suggestion", message=s["message"]))
    return out


def lintlang(path: Path) -> list[dict]:
    doc = json.loads(run([str(BIN / "lintlang"), "scan", str(path), "--format", "json",
                          "--show-all", "--no-suggestions"]))
    out = []
    for f in doc:
        for x in f.get("structural_findings", []):
            loc = x.get("location") or ""
            tool = loc.split(":", 1)[1].split(".", 1)[0] if loc.startswith("tool:") else None
            out.append(dict(tool=tool, rule=x["code"], severity=x["severity"],
                            message=x["description"]))
    return out


def mcplint(path: Path, records: list[dict]) -> list[dict]:
    from mcp.types import Tool
    from mcplint.mcp_client.session import SNAPSHOT_SCHEMA_VERSION, tool_from_mcp
    from mcplint.models.common import ArtifactMetadata
    from mcplint.models.snapshot import MCPServerSnapshot

    server = path.stem
    tools = []
    for r in records:
        t = Tool(name=r["name"], title=r.get("title"), description=r.get("description"),
                 inputSchema=r.get("input_schema") or {"type": "object"},
                 outputSchema=r.get("output_schema"), annotations=r.get("annotations"))
        tools.append(tool_from_mcp(server, t))
    snap = MCPServerSnapshot(metadata=ArtifactMetadata.create(SNAPSHOT_SCHEMA_VERSION),
                             server_name=server, server_version=None, transport="stdio",
                             command=None, tools=tools)
    with tempfile.TemporaryDirectory() as d:
        sp = Path(d) / "snapshot.json"
        rp = Path(d) / "report.json"
        sp.write_text(snap.model_dump_json(indent=2))
        subprocess.run([str(BIN / "mcplint"), "scan", "--snapshot", str(sp), "--format", "json",
                        "--fail-on", "never", "--config", str(Path(d) / "none.yaml"),
                        "--output", str(rp)], capture_output=True, text=True, cwd=d)
        report = json.loads(rp.read_text())
    out = []
    for f in report["findings"]:
        out.append(dict(tool=f["location"]["tool_name"], rule=f["rule_id"], severity=f["severity"],
                        message=f["message"]))
    return out


def mcpolish(path: Path, records: list[dict]) -> list[dict]:
    from mcpolish.discover.python_ast import _params_from_schema
    from mcpolish.registry.snapshot import load_bundled
    from mcpolish.rules.base import RuleContext
    from mcpolish.rules.registry import filter_rules, run_rules
    from mcpolish.config.loader import MCPolishConfig
    from mcpolish.types import ToolDecl, ToolRegistry

    decls = []
    for i, r in enumerate(records):
        schema = r.get("input_schema") or {}
        decls.append(ToolDecl(name=r["name"], description=r.get("description") or "",
                              input_schema=schema, output_schema=r.get("output_schema"),
                              params=tuple(_params_from_schema(schema)), file=str(path),
                              line=i + 1, schema_is_explicit=True))
    reg = ToolRegistry(server_name=path.stem, tools=tuple(decls), source_files=(str(path),))
    cfg = MCPolishConfig()
    ctx = RuleContext(config=cfg.rules, snapshot=load_bundled(), llm=None)
    diags = run_rules(reg, ctx, filter_rules(llm_enabled=False))
    return [dict(tool=d.tool_name, rule=f"{d.rule_id} {d.rule_name}", severity=d.severity.value,
                 message=d.message) for d in diags]


def main() -> None:
    corpus, out = Path(sys.argv[1]), Path(sys.argv[2])
    findings = []
    for path in sorted(corpus.glob("*.json")):
        records = json.loads(path.read_text())
        for name, fn in [("agent-friend", lambda: agent_friend(path)),
                         ("lintlang", lambda: lintlang(path)),
                         ("mcplint", lambda: mcplint(path, records)),
                         ("mcpolish", lambda: mcpolish(path, records))]:
            for f in fn():
                findings.append(dict(linter=name, file=path.name, **f))
    out.write_text(json.dumps(findings, indent=1) + "\n")
    print(f"{len(findings)} findings written to {out}")


if __name__ == "__main__":
    main()
