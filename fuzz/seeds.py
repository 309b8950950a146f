#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (fuzz/seeds/<target>/) from the repository's
real inputs: every spec and project file, the CEL expressions in them, the command lines of
their examples and of the shell reader's tests, the examples' arguments, and MCP messages that
call the fuzz project's tools with them. Run from anywhere; needs PyYAML. The output is
committed, so that CI's smoke run needs nothing but cargo. Each seed is named by its hash.
"""

import hashlib
import json
import pathlib
import re
import shutil

import yaml

FUZZ = pathlib.Path(__file__).resolve().parent
REPO = FUZZ.parent
SEEDS = FUZZ / "seeds"
# Keys whose string values are CEL expressions.
CEL_KEYS = {"expr", "allow", "deny", "ask", "when", "each", "key", "stdin", "reads", "writes",
            "resources", "idempotency_key", "condition", "if"}
# Seeds past this are left out: the smoke run's -max_len is 64 KiB anyway.
MAX_SEED = 64 * 1024


def yaml_files():
    skip = {"target", "fuzz", ".git", "node_modules"}
    for p in sorted(REPO.rglob("*.y*ml")):
        if not skip.intersection(p.relative_to(REPO).parts) and p.suffix in (".yaml", ".yml"):
            yield p


def walk(node, key=None):
    """(key, value) of every scalar, with the key it sits under (list items keep their list's)."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from walk(v, k)
    elif isinstance(node, list):
        for v in node:
            yield from walk(v, key)
    else:
        yield key, node


def examples_args(doc):
    perms = doc.get("permissions") if isinstance(doc, dict) else None
    for ex in (perms or {}).get("examples", []) or []:
        if isinstance(ex, dict) and isinstance(ex.get("args"), dict):
            yield ex["args"]


def rust_strings(text):
    """The string literals of a Rust file, unescaped enough for seeds."""
    out = [m.group(1) for m in re.finditer(r'r#"(.*?)"#', text, re.S)]
    for m in re.finditer(r'(?<![r#])"((?:[^"\\\n]|\\.)*)"', text):
        s = m.group(1)
        s = (s.replace("\\\\", "\0").replace("\\n", "\n").replace("\\t", "\t")
             .replace("\\r", "\r").replace('\\"', '"').replace("\\'", "'").replace("\0", "\\"))
        out.append(s)
    return out


def write(target, items):
    folder = SEEDS / target
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    seen = set()
    for item in items:
        data = item.encode() if isinstance(item, str) else item
        if not data or len(data) > MAX_SEED:
            continue
        name = hashlib.sha1(data).hexdigest()[:16]
        if name in seen:
            continue
        seen.add(name)
        (folder / name).write_bytes(data)
    print(f"{target}: {len(seen)} seeds")


def main():
    specs, cel, shell, args = [], [], [], []
    for p in yaml_files():
        text = p.read_text(errors="replace")
        specs.append(text)
        try:
            docs = list(yaml.safe_load_all(text))
        except yaml.YAMLError:
            continue
        for doc in docs:
            for k, v in walk(doc):
                if k in CEL_KEYS and isinstance(v, str):
                    cel.append(v)
                if k == "command" and isinstance(v, str):
                    shell.append(v)
            if isinstance(doc, dict):
                args.extend(examples_args(doc))
    # A spec with the project file after a NUL (the target's second form).
    project = (FUZZ / "project" / "toolgate.yaml").read_text()
    specs.append((FUZZ / "project" / "fuzz_args.yaml").read_text() + "\0" + project)
    for f in sorted((REPO / "src" / "cel").rglob("*.rs")):
        strings = rust_strings(f.read_text())
        if "shell" in f.parts or f.name == "shell.rs":
            shell.extend(s for s in strings if s.strip())
    cel.extend(s for s in shell if "(" in s and "args." in s)
    write("spec_load", specs)
    write("cel_compile", cel)
    write("shell_read", shell)

    fuzz_args = [a for a in args if "command" in a] + [
        {"command": "ls src", "path": "src/main.rs", "paths": ["a", "b"], "count": 3,
         "ratio": 0.5, "mode": "safe", "force": True,
         "edits": [{"old_text": "a", "new_text": "b"}], "labels": {"k": "v"},
         "hash": "0" * 64},
        {"command": "cat .env"},
        {"command": "ls $(rm x)", "path": "../x"},
        {"command": "ls", "unknown": 1},
    ]
    write("validate_args", [json.dumps(a) for a in fuzz_args])

    def call(i, name, arguments):
        return json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                           "params": {"name": name, "arguments": arguments}})

    msgs = [
        '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"x"}}',
        '{"jsonrpc":"2.0","id":1,"method":"resources/list"}',
        '{"jsonrpc":"2.0","id":1,"method":"resources/templates/list"}',
        '{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"toolgate-artifact:abc"}}',
        '{"jsonrpc":"2.0","id":1,"method":"prompts/list"}',
        '{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}',
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}',
        '{"jsonrpc":"2.0","id":1,"method":"nope"}',
        '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]',
        call(2, "read_file", {"path": "src/main.rs"}),
        call(2, "read_file", {"path": ".env"}),
        call(2, "list_dir", {"path": "."}),
        call(2, "grep", {"pattern": "main", "path": "."}),
        call(2, "glob", {"pattern": "**/*.rs"}),
        call(2, "search_files", {"query": "hello"}),
        call(2, "read_artifact", {"id": "a1"}),
        call(2, "bash", {"command": "ls"}),
        '{"jsonrpc":"2.0","id":"fuzz-init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"x","version":"1"}}}\n'
        '{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
        '{"jsonrpc":"2.0","id":3,"method":"tools/list"}',
    ]
    msgs += [call(i, "fuzz_args", a) for i, a in enumerate(fuzz_args, start=10)]
    write("mcp_request", msgs)


if __name__ == "__main__":
    main()
