#!/usr/bin/env python3
"""Compares toolgate's corpus findings (benches/corpus/lint_corpus.sh) with the other linters'
(benches/corpus/other_linters.py), per tool and per category.

Usage: compare.py CORPUS_DIR TOOLGATE_OUT_DIR OTHERS.json [--list]
Prints, for each linter, its findings per category and how many of the (file, tool, category)
triples toolgate also reports; with --list, every toolgate finding with its tool. A toolgate
finding about a whole list (TGE002, TGS003: one per file) counts for each tool it names; only
the first five are labelled, so for those two the overlap is a lower bound.
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

# One category per rule of every linter: what the finding is about, not how it is worded.
CATEGORY = {
    # toolgate
    "TGN003": "missing-description", "TGN004": "missing-param-description",
    "TGN005": "thin-description", "TGN006": "long-description",
    "TGN007": "naming", "TGN001": "naming", "TGN002": "naming", "TGN009": "naming",
    "TGN008": "hidden-characters", "TGN010": "overlapping-tools", "TGK006": "duplicate-name",
    "TGE001": "effect-annotation", "TGE002": "destructive-approval", "TGE005": "effect-annotation",
    "TGS001": "multi-action", "TGS002": "free-form-exec", "TGS003": "unstable-result",
    "TGS004": "exclusive-params", "TGS005": "defaults", "TGS006": "missing-constraint",
    "TGS007": "missing-constraint", "TGS008": "missing-constraint", "TGS009": "open-object",
    "TGS010": "open-object", "TGS011": "exclusive-params", "TGS012": "type-mismatch",
    "TGS013": "schema-validity", "TGP008": "pagination", "TGV001": "provider-compat",
    "TGV002": "provider-compat", "TGV003": "provider-compat", "TGV004": "provider-compat",
    "TGV005": "too-many-tools", "TGV006": "provider-compat",
    # mcplint
    "ambiguous-tool-overlap": "overlapping-tools", "description-repeats-name": "thin-description",
    "destructive-tool-without-warning": "destructive-approval",
    "excessive-description-length": "long-description",
    "missing-parameter-description": "missing-param-description",
    "missing-return-semantics": "unstable-result", "missing-tool-description": "missing-description",
    "missing-tool-distinction": "overlapping-tools",
    "schema-description-type-conflict": "type-mismatch",
    "state-changing-tool-marked-read-only": "effect-annotation",
    "tool-name-action-conflict": "effect-annotation", "undefined-domain-term": "thin-description",
    "undocumented-error-behaviour": "error-behaviour",
    "undocumented-required-constraint": "missing-constraint",
    "vague-tool-description": "thin-description",
    # mcpolish
    "MP001 require-tool-description": "missing-description",
    "MP002 require-param-description": "missing-param-description",
    "MP003 require-return-schema": "unstable-result", "MP004 require-required-array": "schema-style",
    "MP005 valid-json-schema": "schema-validity", "MP010 generic-tool-name": "naming",
    "MP011 redundant-prefix": "naming", "MP012 inconsistent-verb-pattern": "naming",
    "MP013 name-collision-cross-server": "overlapping-tools", "MP014 snake-vs-camel": "naming",
    "MP020 description-too-short": "thin-description",
    "MP021 description-too-long": "long-description", "MP022 missing-example": "examples",
    "MP023 no-trigger-condition": "thin-description", "MP024 jargon-density": "description-style",
    "MP025 useless-qualifier": "description-style", "MP030 param-type-mismatch": "type-mismatch",
    "MP033 duplicate-tool-description": "overlapping-tools",
    "MP040 hidden-prompt-injection": "hidden-characters",
    "MP041 instruction-in-description": "description-style",
    # lintlang
    "H1.1": "thin-description", "H1.2": "thin-description", "H1.3": "thin-description",
    "H1.4": "overlapping-tools", "H1.5": "thin-description", "H1.6": "thin-description",
    "H2": "missing-constraint", "H3": "missing-param-description",
}

AGENT_FRIEND = {
    "missing_description": "missing-description", "description_not_empty": "missing-description",
    "param_description_missing": "missing-param-description",
    "missing_param_description": "missing-param-description",
    "nested_param_description_missing": "missing-param-description",
    "long_description": "long-description", "tool_description_too_long": "long-description",
    "long_param_description": "long-description", "param_description_too_long": "long-description",
    "tool_description_too_short": "thin-description", "description_just_the_name": "thin-description",
    "tool_description_just_the_name": "thin-description",
    "param_description_too_short": "thin-description",
    "no_duplicate_names": "duplicate-name", "name_valid": "naming",
    "name_uses_camelcase": "naming", "name_uses_hyphen": "naming", "param_snake_case": "naming",
    "nested_param_snake_case": "naming", "param_name_single_char": "naming",
    "param_name_too_generic": "naming", "tool_name_too_generic": "naming",
    "tool_name_redundant_prefix": "naming", "param_name_ends_with_type": "naming",
    "param_name_ends_with_list": "naming", "param_name_implies_boolean": "naming",
    "param_name_is_reserved_word": "naming", "param_plural_name_not_array": "naming",
    "numeric_constraints_missing": "missing-constraint",
    "required_string_no_minlength": "missing-constraint",
    "optional_string_no_minlength": "missing-constraint",
    "required_array_no_minitems": "missing-constraint", "param_format_missing": "missing-constraint",
    "string_comma_separated": "missing-constraint", "enum_too_many_values": "missing-constraint",
    "default_in_description_not_schema": "defaults", "default_undocumented": "defaults",
    "boolean_default_missing": "defaults", "enum_default_missing": "defaults",
    "required_param_has_default": "defaults",
    "nested_objects_have_properties": "open-object",
    "array_items_object_no_properties": "open-object",
    "required_missing": "schema-style", "nested_required_missing": "schema-style",
    "anyof_null_should_be_optional": "schema-style", "param_nullable_field": "schema-style",
    "schema_has_title_field": "schema-style", "number_type_for_integer": "schema-style",
    "enum_boolean_string": "schema-style", "enum_values_inconsistent_case": "schema-style",
    "enum_undocumented": "schema-style", "param_min_equals_max": "schema-style",
    "too_many_params": "schema-style", "description_redundant_type": "description-style",
    "description_lists_enum_values": "description-style",
    "description_has_parenthetical_type": "description-style",
    "param_description_says_optional": "description-style",
    "param_description_says_ignored": "exclusive-params",
    "description_override_pattern": "hidden-characters",
    "description_model_instructions": "description-style",
}


def category(linter: str, rule: str) -> str:
    if linter == "agent-friend":
        return AGENT_FRIEND.get(rule.split(":", 1)[1], "description-style")
    return CATEGORY.get(rule, "other")


def record_lines(path: Path) -> list[int]:
    """The 1-based line on which each top-level record of a JSON array starts."""
    starts, depth, line, in_str, esc = [], 0, 1, False, False
    for ch in path.read_text():
        if ch == "\n":
            line += 1
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth == 2:
                starts.append(line)
        elif ch in "]}":
            depth -= 1
    return starts


def toolgate_findings(corpus: Path, out: Path) -> list[dict]:
    found = []
    for p in sorted(out.glob("*.json")):
        src = corpus / (p.stem + ".json")
        records = json.loads(src.read_text())
        starts = record_lines(src)
        def tool_at(loc):
            if not loc:
                return None
            idx = max((i for i, s in enumerate(starts) if s <= loc["line"]), default=None)
            return records[idx]["name"] if idx is not None else None

        for d in json.loads(p.read_text())["diagnostics"]:
            loc = d.get("location")
            tool = tool_at(loc)
            found.append(dict(linter="toolgate", file=src.name, tool=tool, rule=d["code"],
                              severity=d["severity"], message=d["message"],
                              line=loc["line"] if loc else None))
            # Findings about a whole list (TGE002, TGS003) label the other tools they name.
            if d["code"] in ("TGE002", "TGS003"):
                for label in d["labels"]:
                    other = tool_at(label.get("location"))
                    if other and other != tool:
                        found.append(dict(linter="toolgate", file=src.name, tool=other,
                                          rule=d["code"], severity=d["severity"],
                                          message="(named by the list finding above)",
                                          line=label["location"]["line"], labelled=True))
    return found


def main() -> None:
    corpus, tg_out, others_path = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    tg = toolgate_findings(corpus, tg_out)
    if "--list" in sys.argv:
        for f in (f for f in tg if not f.get("labelled")):
            print(f"{f['file']}:{f['line']} [{f['tool']}] {f['rule']} {f['severity']}: {f['message']}")
        return
    others = json.loads(others_path.read_text())
    for f in tg:
        f["category"] = category("toolgate", f["rule"])
    for f in others:
        f["category"] = category(f["linter"], f["rule"])
    tg_keys = {(f["file"], f["tool"], f["category"]) for f in tg}
    print("| linter | category | findings | tools | also reported by toolgate (tools) |")
    print("|---|---|---:|---:|---:|")
    for linter in ["agent-friend", "lintlang", "mcplint", "mcpolish", "toolgate"]:
        mine = [f for f in (tg if linter == "toolgate" else others)
                if f["linter"] == linter and not f.get("labelled")]
        cats = collections.defaultdict(list)
        for f in mine:
            cats[f["category"]].append(f)
        for cat, fs in sorted(cats.items(), key=lambda kv: -len(kv[1])):
            keys = {(f["file"], f["tool"], cat) for f in fs}
            both = len(keys & tg_keys) if linter != "toolgate" else len(keys)
            print(f"| {linter} | {cat} | {len(fs)} | {len(keys)} | {both} |")


if __name__ == "__main__":
    main()
