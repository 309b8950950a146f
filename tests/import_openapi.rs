//! `toolgate import --from openapi`: public OpenAPI documents (the OpenAPI Initiative's examples,
//! tests/fixtures/openapi, CC BY 4.0) become one HTTP tool per operation; what cannot be
//! expressed is listed; the imported specs lint without errors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::{Command, Output};

fn toolgate(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(dir)
        .env("XDG_STATE_HOME", dir.join(".state-home"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Imports one document into a new project; returns (tools, inexpressible lines, the project).
fn import(doc: &str, server: Option<&str>) -> (usize, Vec<String>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("toolgate.yaml"),
        "specs: [\"tool-specs/**/*.yaml\"]\nworkspace: .\ntargets: [openai-strict, anthropic, gemini, mcp]\n",
    )
    .unwrap();
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/openapi")
        .join(doc);
    let file = file.to_string_lossy().into_owned();
    let mut args = vec!["import", "--from", "openapi", file.as_str()];
    if let Some(s) = server {
        args.extend(["--server", s]);
    }
    let o = toolgate(dir.path(), &args);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{doc}: {out}{err}");
    let inexpressible: Vec<String> = out
        .lines()
        .filter(|l| l.starts_with("inexpressible: "))
        .map(str::to_owned)
        .collect();
    let tools = err.lines().filter(|l| l.starts_with("wrote ")).count();
    (tools, inexpressible, dir)
}

/// Lint's verdict: the summary line, which must report no errors.
fn lint_verdict(dir: &Path) -> String {
    let o = toolgate(dir, &["lint"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let last = out.lines().last().unwrap_or_default().to_owned();
    assert!(
        last.starts_with("0 errors") || last.starts_with("No findings"),
        "{out}"
    );
    last
}

#[test]
fn petstore_3_0_yaml() {
    let (tools, inexpressible, dir) = import("v3.0-petstore.yaml", None);
    assert_eq!((tools, inexpressible.len()), (3, 0), "{inexpressible:?}");
    let spec = std::fs::read_to_string(
        dir.path()
            .join("tool-specs/swagger_petstore/show_pet_by_id.yaml"),
    )
    .unwrap();
    assert!(
        spec.contains("url: http://petstore.swagger.io/v1/pets/{petId}"),
        "{spec}"
    );
    assert!(spec.contains("effect: network_read"), "{spec}");
    let create = std::fs::read_to_string(
        dir.path()
            .join("tool-specs/swagger_petstore/create_pets.yaml"),
    )
    .unwrap();
    assert!(create.contains("effect: network_write"), "{create}");
    lint_verdict(dir.path());
}

#[test]
fn petstore_expanded_3_0_json() {
    let (tools, inexpressible, dir) = import("v3.0-petstore-expanded.json", None);
    assert_eq!((tools, inexpressible.len()), (4, 0), "{inexpressible:?}");
    let delete = std::fs::read_to_string(
        dir.path()
            .join("tool-specs/swagger_petstore/delete_pet.yaml"),
    )
    .unwrap();
    assert!(delete.contains("effect: destructive"), "{delete}");
    // The body's object properties join the parameters, with their constraints.
    let add = std::fs::read_to_string(dir.path().join("tool-specs/swagger_petstore/add_pet.yaml"))
        .unwrap();
    assert!(add.contains("fields:"), "{add}");
    lint_verdict(dir.path());
}

#[test]
fn uspto_3_0_with_a_form_body_listed() {
    let (tools, inexpressible, dir) = import("v3.0-uspto.yaml", None);
    assert_eq!(tools, 2);
    assert_eq!(
        inexpressible,
        [
            "inexpressible: POST /{dataset}/{version}/records: its request body is not JSON (application/x-www-form-urlencoded)"
        ]
    );
    // The server's variables take their defaults.
    let spec = std::fs::read_to_string(
        dir.path()
            .join("tool-specs/uspto_data_set_api/list_data_sets.yaml"),
    )
    .unwrap();
    assert!(
        spec.contains("url: https://developer.uspto.gov/ds-api/"),
        "{spec}"
    );
    lint_verdict(dir.path());
}

#[test]
fn tictactoe_3_1_needs_a_server_and_lists_its_webhook() {
    let dir = tempfile::tempdir().unwrap();
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openapi/v3.1-tictactoe.yaml");
    let o = toolgate(
        dir.path(),
        &["import", "--from", "openapi", &file.to_string_lossy()],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).1.contains("give the API's base URL with --server"),
        "{:?}",
        text(&o)
    );
    let (tools, inexpressible, dir) = import(
        "v3.1-tictactoe.yaml",
        Some("https://tictactoe.example.com/v1"),
    );
    assert_eq!(tools, 3);
    assert_eq!(
        inexpressible,
        [
            "inexpressible: webhook markStatus: a webhook is a request the API sends, not one a tool makes"
        ]
    );
    let put =
        std::fs::read_to_string(dir.path().join("tool-specs/tic_tac_toe/put_square.yaml")).unwrap();
    assert!(
        put.contains("env: TIC_TAC_TOE_TOKEN"),
        "bearer security is a secret header: {put}"
    );
    assert!(put.contains("maximum: 3"), "path constraints kept: {put}");
    lint_verdict(dir.path());
}

#[test]
fn webhooks_only_3_1() {
    let (tools, inexpressible, _dir) = import(
        "v3.1-webhook-example.yaml",
        Some("https://pets.example.com"),
    );
    assert_eq!((tools, inexpressible.len()), (0, 1), "{inexpressible:?}");
}
