"""`toolgate lsp` driven by a real LSP client (pytest-lsp) over stdio.

The binary is $TOOLGATE_BIN (tests/lsp_client.rs passes Cargo's). Each test gets a fresh project in
a temporary folder: toolgate.yaml, the spec the client opens, and a second spec only on disk.
"""

import json
import os
import subprocess
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

TOOLGATE = os.environ.get("TOOLGATE_BIN", "toolgate")

PROJECT = 'specs: ["tool-specs/*.yaml"]\n'

# Open: `parameters` is not closed (no `additionalProperties: false`).
NOTES = """\
name: read_note
description: Read one note from the notes folder by its file name and return its text.
effect: read_only
parameters:
  type: object
  properties:
    name: {type: string, maxLength: 100, description: "The note's file name, e.g. todo.md."}
  required: [name]
timeout: 5s
output: {max_bytes: 16KiB}
exec: {builtin: read_file}
"""

# Only on disk: another tool, whose name the edit below takes.
SEARCH = NOTES.replace("read_note", "search_notes").replace(
    "Read one note from the notes folder by its file name and return its text.",
    "Search the notes folder for a word and return the matching lines with their file names.",
)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[TOOLGATE, "lsp"]))
async def client(lsp_client: LanguageClient, tmp_path):
    (tmp_path / "toolgate.yaml").write_text(PROJECT)
    (tmp_path / "tool-specs").mkdir()
    (tmp_path / "tool-specs" / "notes.yaml").write_text(NOTES)
    (tmp_path / "tool-specs" / "search.yaml").write_text(SEARCH)
    lsp_client.project = tmp_path
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="notes")],
        )
    )
    yield
    await lsp_client.shutdown_session()


def notes_uri(client):
    return (client.project / "tool-specs" / "notes.yaml").as_uri()


async def open_notes(client, text=NOTES):
    uri = notes_uri(client)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text)
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return uri


async def change(client, uri, version, text):
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[uri]


def lint_json(project):
    """What `toolgate lint --format json` reports for tool-specs/notes.yaml."""
    out = subprocess.run(
        [TOOLGATE, "lint", "--format", "json"], cwd=project, capture_output=True, text=True
    )
    assert out.returncode in (0, 1), out.stderr
    found = []
    for d in json.loads(out.stdout)["diagnostics"]:
        loc = d["location"]
        if loc and loc["file"] == "tool-specs/notes.yaml":
            # JSON positions are 1-based characters; LSP's 0-based (ASCII text: the same units).
            found.append(
                (d["code"], loc["line"] - 1, loc["column"] - 1, loc["end_line"] - 1, loc["end_column"] - 1)
            )
    return sorted(found)


def as_tuples(diagnostics):
    return sorted(
        (d.code, d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character)
        for d in diagnostics
    )


def position_of(text, needle, offset=0):
    before = text[: text.index(needle) + offset]
    return types.Position(line=before.count("\n"), character=len(before.split("\n")[-1]))


async def test_diagnostics_on_open_match_lint_and_follow_edits(client: LanguageClient):
    uri = await open_notes(client)
    diagnostics = client.diagnostics[uri]
    assert as_tuples(diagnostics) == lint_json(client.project)
    assert "TGS009" in {d.code for d in diagnostics}, diagnostics
    assert all(d.source == "toolgate" for d in diagnostics)

    assert "TGN010" not in {d.code for d in diagnostics}, diagnostics

    # An edit, never saved: the schema is closed (TGS009 goes), and the tool takes the name of
    # the spec that is only on disk (a project-wide finding, TGN010 overlapping-tools, comes).
    edited = NOTES.replace("  required: [name]\n", "  required: [name]\n  additionalProperties: false\n")
    edited = edited.replace("name: read_note", "name: search_notes")
    after = await change(client, uri, 2, edited)
    assert "TGS009" not in {d.code for d in after}, after
    overlap = [d for d in after if d.code == "TGN010"]
    assert len(overlap) == 1, after
    assert "overlaps with `search_notes`: they have the same name" in overlap[0].message


async def test_hover_on_keys_values_and_rule_codes(client: LanguageClient):
    text = "# toolgate: ignore-file[TGN005] -- short names are fine here\n" + NOTES
    uri = await open_notes(client, text)

    async def hover(needle, offset=1):
        result = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=position_of(text, needle, offset),
            )
        )
        return result.contents.value if result else None

    assert (await hover("effect:")).startswith("**effect**: What running it can change.")
    assert "- `local_write`: Changes files inside the workspace." in await hover("effect:")
    assert (await hover("read_only")).startswith("`read_only`: Reads local state")
    assert (await hover("max_bytes")).startswith("**max_bytes**: Most bytes the model sees.")
    assert (await hover("TGN005")).startswith("# TGN005 ")
    assert await hover("notes folder") is None


async def test_completion_of_keys_and_values(client: LanguageClient):
    text = NOTES.replace("effect: read_only\n", "effect: \nidem\n")
    uri = await open_notes(client, text)

    async def labels(needle, offset):
        result = await client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=position_of(text, needle, offset),
            )
        )
        items = result.items if hasattr(result, "items") else result
        return [i.label for i in items]

    values = await labels("effect: ", len("effect: "))
    assert values[:3] == ["pure", "read_only", "local_write"], values
    assert await labels("idem\n", len("idem")) == ["idempotency"]
    output = await labels("{max_bytes", len("{max_"))
    assert output == ["max_bytes", "max_lines"], output


async def test_code_action_suppresses_with_a_reason(client: LanguageClient):
    uri = await open_notes(client)
    finding = next(d for d in client.diagnostics[uri] if d.code == "TGS009")
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=finding.range,
            context=types.CodeActionContext(diagnostics=[finding]),
        )
    )
    suppress = next(a for a in actions if a.title.startswith("Suppress TGS009"))
    assert suppress.kind == types.CodeActionKind.QuickFix
    edits = suppress.edit.changes[uri]
    text = apply(NOTES, edits)
    assert "# toolgate: ignore[TGS009] -- " in text, text

    codes = {d.code for d in await change(client, uri, 2, text)}
    assert "TGS009" not in codes, codes
    # The suppression is used and has a reason: no unused-suppression finding either.
    assert "TGP009" not in codes, codes


async def test_code_action_applies_the_safe_fix(client: LanguageClient):
    uri = await open_notes(client)
    finding = next(d for d in client.diagnostics[uri] if d.code == "TGS009")
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=finding.range,
            context=types.CodeActionContext(diagnostics=[finding]),
        )
    )
    fix = next(a for a in actions if a.title.startswith("Fix: "))
    assert fix.title == "Fix: add `additionalProperties: false`", fix.title
    assert fix.is_preferred
    text = apply(NOTES, fix.edit.changes[uri])
    assert "additionalProperties: false" in text, text
    # The fixed text keeps the rest as written and lints clean of the finding.
    assert text.replace("  additionalProperties: false\n", "") == NOTES, text
    codes = {d.code for d in await change(client, uri, 2, text)}
    assert "TGS009" not in codes, codes


def apply(text, edits):
    """Applies LSP text edits (ASCII text: characters are UTF-16 units)."""
    lines = text.split("\n")

    def offset(pos):
        return sum(len(line) + 1 for line in lines[: pos.line]) + pos.character

    for e in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end) :]
    return text


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
