//! Nothing cut is lost, over MCP: `toolgate serve` driven by a real client (rmcp's, over the
//! child's stdin and stdout) against the real binary, on `tests/fixtures/mcp_artifacts`.
//!
//! - a 20 KB output cut at 16 KiB — of a command tool and of a builtin — is linked as a
//!   `toolgate-artifact:` resource; `resources/read` returns exactly the whole output, and a
//!   part with a range; the projection names that way and, in a toolset without
//!   read_artifact, no other;
//! - `resources/list` lists the connection's artifacts, `resources/templates/list` the template;
//! - another connection (another session) cannot read them, though they are in the same
//!   store: it is answered as for an id nothing has, and lists none;
//! - in a toolset with read_artifact, the projection names it too, and paging through it over
//!   MCP gives back the whole output.
//!
//! The Python SDK reads the same resources in tests/mcp_python.rs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use pretty_assertions::assert_eq;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

/// A bound on every wait for something that must happen. Not a timing assertion.
const WAIT_LIMIT: Duration = Duration::from_secs(60);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// What `print_lines {count: 100, width: 200}` prints: 20,000 bytes.
fn printed() -> String {
    (1..=100)
        .map(|i| format!("line {i:03} {}\n", "x".repeat(190)))
        .collect()
}

struct Project {
    ws: tempfile::TempDir,
    state: tempfile::TempDir,
}

impl Project {
    fn new() -> Self {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join("src")).unwrap();
        Project {
            ws,
            state: tempfile::tempdir().unwrap(),
        }
    }

    /// 250 files whose list_dir lines are 80 bytes each: 20,000 bytes.
    fn many_files(&self) -> String {
        let mut listing = String::new();
        for i in 0..250 {
            let name = format!("module_{i:03}_{}.txt", "n".repeat(54));
            std::fs::write(self.ws.path().join("src").join(&name), "").unwrap();
            listing.push_str(&format!("{name} (0 bytes)\n"));
        }
        listing
    }

    async fn serve(&self, toolset: &str) -> Client {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolgate"));
        cmd.arg("serve")
            .arg("--config")
            .arg(repo().join("tests/fixtures/mcp_artifacts/toolgate.yaml"))
            .arg("--workspace")
            .arg(self.ws.path())
            .arg("--state-dir")
            .arg(self.state.path())
            .args(["--toolset", toolset])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("mcp-artifacts-test", "0"),
        );
        let service = tokio::time::timeout(WAIT_LIMIT, info.serve((stdout, stdin)))
            .await
            .unwrap()
            .unwrap();
        Client {
            service,
            _child: child,
        }
    }
}

struct Client {
    service: RunningService<RoleClient, ClientConfig>,
    _child: tokio::process::Child,
}

/// The projection text of a result and the URIs of its resource links.
fn text_and_links(r: &CallToolResult) -> (String, Vec<String>) {
    let text = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    let links = r
        .content
        .iter()
        .filter_map(|c| c.as_resource_link().map(|l| l.uri.clone()))
        .collect();
    (text, links)
}

impl Client {
    async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        let Value::Object(args) = args else {
            panic!("arguments must be an object")
        };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args);
        tokio::time::timeout(WAIT_LIMIT, self.service.peer().call_tool(params))
            .await
            .unwrap()
            .unwrap()
    }

    /// The text of a resource, or the error's code and message.
    async fn read(&self, uri: &str) -> Result<(String, Value), (i32, String)> {
        let r = tokio::time::timeout(
            WAIT_LIMIT,
            self.service
                .peer()
                .read_resource(ReadResourceRequestParams::new(uri)),
        )
        .await
        .unwrap();
        match r {
            Ok(r) => match r.contents.as_slice() {
                [
                    ResourceContents::TextResourceContents {
                        text, meta, uri: u, ..
                    },
                ] => {
                    assert_eq!(u, uri);
                    let meta = meta.clone().unwrap_or_default();
                    Ok((text.clone(), meta["io.toolgate/artifact"].clone()))
                }
                other => panic!("one text content expected: {other:?}"),
            },
            Err(rmcp::service::ServiceError::McpError(e)) => Err((e.code.0, e.message.into())),
            Err(e) => panic!("{e}"),
        }
    }
}

/// One cut output: the result links one artifact, and reading it whole over MCP gives back
/// exactly what the tool produced.
async fn check_cut(client: &Client, tool: &str, args: Value, expected: &str, part: &str) -> String {
    let r = client.call(tool, args).await;
    let (text, links) = text_and_links(&r);
    assert_eq!(r.is_error, Some(false), "{text}");
    let [uri] = links.as_slice() else {
        panic!("one resource link expected: {links:?}\n{text}")
    };
    let id = uri.strip_prefix("toolgate-artifact:").unwrap();
    assert_eq!(
        id,
        format!("blake3:{}", blake3::hash(expected.as_bytes()).to_hex())
    );
    assert!(
        text.contains(&format!(
            "Full {part}: artifact {id} (20000 bytes, {} lines).\nThe MCP client can read it as the resource {uri} (linked in this result;",
            expected.lines().count()
        )),
        "{text}"
    );
    assert!(!text.contains("read_artifact"), "{text}");
    let (whole, meta) = client.read(uri).await.unwrap();
    assert_eq!(whole, expected);
    assert_eq!(meta["truncated"], false);
    uri.clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cut_output_is_read_as_mcp_resources_of_the_connection_only() {
    let p = Project::new();
    let listing = p.many_files();
    let client = p.serve("bare").await;
    let expected = printed();
    let stdout = check_cut(
        &client,
        "print_lines",
        json!({"count": 100, "width": 200}),
        &expected,
        "stdout",
    )
    .await;
    let listed = check_cut(
        &client,
        "list_dir",
        json!({"path": "src", "max_entries": 1000}),
        &listing,
        "output",
    )
    .await;

    // A part: lines 99 to the end, and the footer saying where it lies.
    let (part, meta) = client
        .read(&format!("{stdout}?start_line=99"))
        .await
        .unwrap();
    let id = stdout.strip_prefix("toolgate-artifact:").unwrap();
    assert_eq!(
        part,
        format!(
            "{}[{id}: lines 99-100 of 100]\n",
            expected
                .lines()
                .skip(98)
                .map(|l| format!("{l}\n"))
                .collect::<String>()
        )
    );
    assert_eq!(
        meta,
        json!({"start": 99, "end": 100, "unit": "lines", "total_bytes": 20000, "total_lines": 100, "truncated": false, "next": null})
    );
    let (bytes, meta) = client
        .read(&format!("{listed}?offset=19990&length=100"))
        .await
        .unwrap();
    assert_eq!(
        bytes,
        format!(
            "{}[{}: bytes 19990-19999 of 20000]\n",
            &listing[19_990..],
            listed.strip_prefix("toolgate-artifact:").unwrap()
        )
    );
    assert_eq!(meta["truncated"], false);

    // What the connection can list.
    let resources = client.service.peer().list_all_resources().await.unwrap();
    let mut uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    uris.sort_unstable();
    let mut want = vec![stdout.as_str(), listed.as_str()];
    want.sort_unstable();
    assert_eq!(uris, want);
    let stdout_resource = resources.iter().find(|r| r.uri == stdout).unwrap();
    assert_eq!(
        (
            stdout_resource.name.as_str(),
            stdout_resource.size,
            stdout_resource.mime_type.as_deref()
        ),
        ("print_lines stdout", Some(20_000), Some("text/plain"))
    );
    let templates = client
        .service
        .peer()
        .list_all_resource_templates()
        .await
        .unwrap();
    assert_eq!(
        templates
            .iter()
            .map(|t| t.uri_template.as_str())
            .collect::<Vec<_>>(),
        ["toolgate-artifact:{artifact_id}{?start_line,end_line,offset,length}"]
    );

    // Bad URIs are invalid params; an artifact this connection's results never named is not
    // found, though it is in the store.
    let (code, message) = client.read(&format!("{stdout}?lines=3")).await.unwrap_err();
    assert_eq!(code, -32602, "{message}");
    // Another connection (another session) knowing the id: answered as if it did not exist,
    // in the same words as an id nothing has, and its list shows none of them.
    let other = p.serve("bare").await;
    let (code, message) = other.read(&stdout).await.unwrap_err();
    assert_eq!(code, -32002, "{message}");
    assert!(
        message.contains("no artifact") && message.contains("of this session"),
        "{message}"
    );
    let missing = format!("blake3:{}", "0".repeat(64));
    let (code, none) = other
        .read(&format!("toolgate-artifact:{missing}"))
        .await
        .unwrap_err();
    assert_eq!(code, -32002, "{none}");
    assert_eq!(message.replace(id, "ID"), none.replace(&missing, "ID"));
    let theirs = other.service.peer().list_all_resources().await.unwrap();
    assert!(theirs.is_empty(), "{theirs:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_read_artifact_served_the_model_pages_through_it() {
    let p = Project::new();
    let client = p.serve("reading").await;
    let expected = printed();
    let r = client
        .call("print_lines", json!({"count": 100, "width": 200}))
        .await;
    let (text, links) = text_and_links(&r);
    let id = links[0]
        .strip_prefix("toolgate-artifact:")
        .unwrap()
        .to_owned();
    assert!(
        text.contains(&format!(
            "Read it in parts with read_artifact, e.g. {{\"artifact_id\": \"{id}\", \"start_line\": 1}} (start_line/end_line, or offset/length for bytes).\nThe MCP client can also read it as the resource toolgate-artifact:{id}"
        )),
        "{text}"
    );
    let mut read = String::new();
    let mut start = 1;
    loop {
        let page = client
            .call(
                "read_artifact",
                json!({"artifact_id": id, "start_line": start}),
            )
            .await;
        let s = page.structured_content.unwrap();
        read.push_str(s["text"].as_str().unwrap());
        if s["truncated"] == false {
            break;
        }
        start = s["end"].as_u64().unwrap() + 1;
    }
    assert_eq!(read, expected);
}
