//! `toolgate import --from openapi FILE`: one narrow HTTP tool per operation of an OpenAPI
//! document (3.0 or 3.1, YAML or JSON).
//!
//! The document is read by the spec loader's YAML parser (JSON is YAML) and parsed by `oas3`
//! for its structure: paths, operations, parameters, bodies, responses, servers. Schemas are
//! taken as JSON with their local `$ref`s inlined and 3.0's forms brought to JSON Schema 2020-12
//! (`nullable`, boolean `exclusiveMinimum`/`exclusiveMaximum`). Each operation becomes a spec:
//! its name from `operationId` (snake_case), path, query, header and JSON-body parameters folded
//! into one parameter schema with their constraints, the effect from the method (GET/HEAD →
//! `network_read`, DELETE → `destructive`, other writes → `network_write`), the first 2xx JSON
//! response as `result`, bearer and API-key-header security as secret headers. `x-toolgate-name`,
//! `x-toolgate-effect` and `x-toolgate-skip` on an operation override. The server's host is the
//! tool's egress. What cannot be expressed (cookies, non-JSON bodies, API keys in the query,
//! clashing names, no operation) is listed with the reason, never dropped silently.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use heck::ToSnakeCase;
use serde_json::{Map, Value, json};

use crate::cli::import::limits::{ImportLimits, LimitName, Walk, over, read_bounded};
use crate::cli::import::output::{comment_text, reserved, write_all, yaml_text};

mod schema;

use schema::{Converter, Defs, Failure, attach};

/// Longest tool name.
const MAX_NAME: usize = 64;
/// Longest description.
const MAX_DESCRIPTION: usize = 1_000;

/// One tool written, or one operation that could not be.
#[derive(Debug, Default)]
pub struct Imported {
    /// Tool name and spec text.
    pub tools: Vec<(String, String)>,
    /// `METHOD /path` (or the webhook's name) and why it cannot be a tool.
    pub inexpressible: Vec<(String, String)>,
    /// The server URL the tools call.
    pub server: String,
    /// Tools written whose schemas, inlined, pass the nodes limit: (tool, nodes).
    pub large_inlined: Vec<(String, u64)>,
}

/// Reads a document (YAML or JSON) within the limits: its size and its depth.
pub fn read_document(path: &Path, limits: &ImportLimits) -> Result<(String, Value), String> {
    let text = read_bounded(path, limits)?;
    let mut budget = serde_saphyr::Budget::default();
    // The document's own nesting: a schema's depth plus the levels above it
    // (`components`, `schemas`, a name; or `paths`, a path, a method, …, `schema`).
    budget.max_depth = limits.depth.saturating_add(16);
    // The document's own nodes are bounded by its bytes (aliases by the parser's own cap);
    // `nodes` bounds what the conversion visits.
    budget.max_nodes = usize::try_from(limits.document_bytes).unwrap_or(usize::MAX);
    budget.max_total_scalar_bytes = usize::try_from(limits.document_bytes).unwrap_or(usize::MAX);
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    let doc = serde_saphyr::from_str_with_options::<Value>(&text, options).map_err(|e| {
        format!(
            "{} is not YAML or JSON within the limits: {e}",
            path.display()
        )
    })?;
    Ok((text, doc))
}

/// `file:line:column` of the node at a JSON pointer, when the document's text can be read
/// with positions (the spec loader's parser, which takes documents up to its own size
/// limit); else the file and the pointer.
pub fn locate(file: &Path, text: &str, pointer: &str) -> String {
    let source = crate::source::SourceFile::new(file, text);
    let at =
        crate::spec::yaml::parse::<crate::spec::yaml::Node>(text, |l, c| source.offset_of(l, c))
            .ok()
            .and_then(|root| {
                // The nearest enclosing node that exists.
                let mut p = pointer;
                loop {
                    if let Some(n) = root.at_pointer(p) {
                        return Some(source.line_column(n.range.start));
                    }
                    p = &p[..p.rfind('/')?];
                }
            });
    match at {
        Some(lc) => format!("{}:{}:{} (`{pointer}`)", file.display(), lc.line, lc.column),
        None => format!("{} at `{pointer}`", file.display()),
    }
}

/// Converts a document into specs within the limits.
pub fn convert(
    doc: &Value,
    server_override: Option<&str>,
    limits: &ImportLimits,
) -> Result<Imported, Failure> {
    let version = doc.get("openapi").and_then(Value::as_str).unwrap_or("");
    if !(version.starts_with("3.0") || version.starts_with("3.1")) {
        return Err(Failure::Inexpressible(format!(
            "`openapi: {version}`: only OpenAPI 3.0 and 3.1 documents are read (convert Swagger 2.0 first)"
        )));
    }
    let spec: oas3::Spec = serde_json::from_value(doc.clone())
        .map_err(|e| format!("the document does not parse as OpenAPI: {e}"))?;
    let server = match server_override {
        Some(s) => s.trim_end_matches('/').to_owned(),
        None => server_url(&spec).map_err(Failure::Inexpressible)?,
    };
    if !(server.starts_with("https://") || server.starts_with("http://")) {
        return Err(Failure::Inexpressible(format!(
            "the server `{server}` is not an absolute http(s) URL; give the API's base URL with --server"
        )));
    }
    let operations = spec.operations().count();
    if operations > limits.tools {
        return Err(Failure::Limit {
            message: over(
                &format!("the document has {operations} operations"),
                LimitName::Tools,
                limits.tools as u64,
            ),
            pointer: "/paths".into(),
        });
    }
    let mut conv = Converter::new(doc, Walk::new(limits));
    let mut output_bytes = 0u64;
    let mut out = Imported {
        server: server.clone(),
        ..Imported::default()
    };
    let mut names = BTreeSet::new();
    for (path, method, op) in spec.operations() {
        let label = format!("{} {path}", method.as_str());
        let raw_op = doc
            .pointer(&format!(
                "/paths/{}/{}",
                escape_pointer(&path),
                method.as_str().to_ascii_lowercase()
            ))
            .cloned()
            .unwrap_or(Value::Null);
        if raw_op.get("x-toolgate-skip").and_then(Value::as_bool) == Some(true) {
            out.inexpressible
                .push((label, "skipped by `x-toolgate-skip`".into()));
            continue;
        }
        match operation(&mut conv, doc, &server, &path, method.as_str(), op, &raw_op) {
            Ok((name, text, inlined)) => {
                if inlined > limits.nodes {
                    out.large_inlined.push((name.clone(), inlined));
                }
                output_bytes += text.len() as u64;
                if output_bytes > limits.output_bytes {
                    return Err(Failure::Limit {
                        message: over(
                            &format!("the specs up to `{name}` are {output_bytes} bytes"),
                            LimitName::Output,
                            limits.output_bytes,
                        ),
                        pointer: format!("/paths/{}", escape_pointer(&path)),
                    });
                }
                if !names.insert(name.clone()) {
                    out.inexpressible.push((
                        label,
                        format!("its name `{name}` is taken by another operation; give it `x-toolgate-name`"),
                    ));
                } else {
                    out.tools.push((name, text));
                }
            }
            Err(Failure::Inexpressible(why)) => out.inexpressible.push((label, why)),
            Err(limit) => return Err(limit),
        }
    }
    if let Some(hooks) = doc.get("webhooks").and_then(Value::as_object) {
        for name in hooks.keys() {
            out.inexpressible.push((
                format!("webhook {name}"),
                "a webhook is a request the API sends, not one a tool makes".into(),
            ));
        }
    }
    Ok(out)
}

/// The first server's URL with its variables at their defaults.
fn server_url(spec: &oas3::Spec) -> Result<String, String> {
    let s = spec
        .servers
        .first()
        .ok_or("the document names no server; give the API's base URL with --server".to_owned())?;
    let mut url = s.url.clone();
    for (k, v) in &s.variables {
        url = url.replace(&format!("{{{k}}}"), &v.default);
    }
    Ok(url.trim_end_matches('/').to_owned())
}

fn escape_pointer(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// A name toolgate and the providers accept.
fn tool_name(op_id: Option<&str>, method: &str, path: &str) -> String {
    let base = match op_id {
        Some(id) if !id.is_empty() => id.to_snake_case(),
        _ => format!("{method} {path}").to_snake_case(),
    };
    let mut s: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert_str(0, "op_");
    }
    s.truncate(MAX_NAME);
    if reserved(&s) {
        s.truncate(MAX_NAME - 1);
        s.push('_');
    }
    s
}

/// A local `$ref`'s target, or the value itself.
fn deref<'a>(v: &'a Value, doc: &'a Value) -> &'a Value {
    match v.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix('#')
            .and_then(|p| doc.pointer(p))
            .unwrap_or(v),
        None => v,
    }
}

fn is_json(media: &str) -> bool {
    let m = media.split(';').next().unwrap_or("").trim();
    m == "application/json" || m.ends_with("+json")
}

/// A property name the providers accept.
fn good_property(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
}

/// One operation as a spec, or why not.
fn operation(
    conv: &mut Converter<'_, '_>,
    doc: &Value,
    server: &str,
    path: &str,
    method: &str,
    op: &oas3::spec::Operation,
    raw_op: &Value,
) -> Result<(String, String, u64), Failure> {
    let op_ptr = format!(
        "/paths/{}/{}",
        escape_pointer(path),
        method.to_ascii_lowercase()
    );
    let mut param_defs = Defs::default();
    let name = match raw_op.get("x-toolgate-name").and_then(Value::as_str) {
        Some(n) => tool_name(Some(n), method, path),
        None => tool_name(op.operation_id.as_deref(), method, path),
    };
    let mut props = Map::new();
    let mut required: Vec<String> = Vec::new();
    let mut query = Vec::new();
    let mut headers = Map::new();
    // Path-item parameters, then the operation's (which override by name and place).
    let mut raw_params: Vec<Value> = Vec::new();
    if let Some(ps) = doc
        .pointer(&format!("/paths/{}/parameters", escape_pointer(path)))
        .and_then(Value::as_array)
    {
        raw_params.extend(ps.iter().map(|p| deref(p, doc).clone()));
    }
    if let Some(ps) = raw_op.get("parameters").and_then(Value::as_array) {
        for p in ps.iter().map(|p| deref(p, doc).clone()) {
            raw_params.retain(|q| !(q.get("name") == p.get("name") && q.get("in") == p.get("in")));
            raw_params.push(p);
        }
    }
    for p in &raw_params {
        let pname = p.get("name").and_then(Value::as_str).unwrap_or_default();
        let place = p.get("in").and_then(Value::as_str).unwrap_or_default();
        if place == "cookie" {
            return Err(Failure::Inexpressible(format!(
                "the cookie parameter `{pname}` (toolgate sends no cookies)"
            )));
        }
        if !good_property(pname) {
            return Err(Failure::Inexpressible(format!(
                "the {place} parameter `{pname}` has a name no provider accepts as an argument"
            )));
        }
        if props.contains_key(pname) {
            return Err(Failure::Inexpressible(format!(
                "`{pname}` is a parameter in two places"
            )));
        }
        let mut s = match p.get("schema") {
            Some(s) => conv.root(s, &format!("{op_ptr}/parameters"), &mut param_defs)?,
            None => {
                return Err(Failure::Inexpressible(format!(
                    "the {place} parameter `{pname}` has no schema (`content` parameters are not read)"
                )));
            }
        };
        let description = p
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| format!("The `{pname}` {place} parameter."));
        if let Value::Object(m) = &mut s {
            m.entry("description").or_insert(json!(description));
        }
        props.insert(pname.to_owned(), s);
        let req = place == "path" || p.get("required").and_then(Value::as_bool) == Some(true);
        if req {
            required.push(pname.to_owned());
        }
        match place {
            "query" => query.push(json!(pname)),
            "header" => {
                headers.insert(pname.to_owned(), json!({"arg": pname}));
            }
            _ => {}
        }
    }
    // The JSON body: an object's properties join the parameters; anything else is `body`.
    let mut body = Value::Null;
    if let Some(rb) = raw_op.get("requestBody").map(|b| deref(b, doc)) {
        let content = rb.get("content").and_then(Value::as_object);
        let json_media = content.and_then(|c| c.iter().find(|(k, _)| is_json(k)));
        let rb_required = rb.get("required").and_then(Value::as_bool) == Some(true);
        match json_media {
            None => {
                let kinds: Vec<&str> = content
                    .into_iter()
                    .flatten()
                    .map(|(k, _)| k.as_str())
                    .collect();
                return Err(Failure::Inexpressible(format!(
                    "its request body is not JSON ({})",
                    kinds.join(", ")
                )));
            }
            Some((media_type, media)) => {
                let at = format!(
                    "{op_ptr}/requestBody/content/{}/schema",
                    escape_pointer(media_type)
                );
                let s = conv.root(
                    media.get("schema").unwrap_or(&json!({})),
                    &at,
                    &mut param_defs,
                )?;
                let object_props = s.get("properties").and_then(Value::as_object);
                let composite = ["allOf", "anyOf", "oneOf"]
                    .iter()
                    .any(|k| s.get(*k).is_some());
                match object_props {
                    Some(bp) if !composite => {
                        let mut fields = Vec::new();
                        for (k, v) in bp {
                            if props.contains_key(k) {
                                return Err(Failure::Inexpressible(format!(
                                    "`{k}` is both a parameter and a body field"
                                )));
                            }
                            if !good_property(k) {
                                return Err(Failure::Inexpressible(format!(
                                    "the body field `{k}` has a name no provider accepts as an argument"
                                )));
                            }
                            let mut v = v.clone();
                            if let Value::Object(m) = &mut v {
                                m.entry("description").or_insert(json!(format!(
                                    "The `{k}` field of the request body."
                                )));
                            }
                            props.insert(k.clone(), v);
                            fields.push(json!(k));
                        }
                        if rb_required {
                            for r in s
                                .get("required")
                                .and_then(Value::as_array)
                                .into_iter()
                                .flatten()
                            {
                                if let Some(r) = r.as_str() {
                                    required.push(r.to_owned());
                                }
                            }
                        }
                        body = json!({"fields": fields});
                    }
                    _ => {
                        if props.contains_key("body") {
                            return Err(Failure::Inexpressible(
                                "`body` is both a parameter and the request body".into(),
                            ));
                        }
                        let mut s = s;
                        if let Value::Object(m) = &mut s {
                            m.entry("description").or_insert(json!(
                                rb.get("description")
                                    .and_then(Value::as_str)
                                    .unwrap_or("The request body.")
                            ));
                        }
                        props.insert("body".into(), s);
                        if rb_required {
                            required.push("body".into());
                        }
                        body = json!({"arg": "body"});
                    }
                }
            }
        }
    }
    // Security: bearer tokens and API keys in a header become secret headers.
    let scheme_names: Vec<String> = raw_op
        .get("security")
        .or_else(|| doc.get("security"))
        .and_then(Value::as_array)
        .and_then(|alts| alts.first())
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let api = doc
        .pointer("/info/title")
        .and_then(Value::as_str)
        .unwrap_or("api");
    let var = format!("{}_TOKEN", api.to_snake_case().to_ascii_uppercase());
    for s in &scheme_names {
        let scheme = doc
            .pointer(&format!(
                "/components/securitySchemes/{}",
                escape_pointer(s)
            ))
            .map(|v| deref(v, doc))
            .cloned()
            .unwrap_or(Value::Null);
        match (
            scheme.get("type").and_then(Value::as_str),
            scheme.get("in").and_then(Value::as_str),
        ) {
            (Some("http"), _)
                if scheme
                    .get("scheme")
                    .and_then(Value::as_str)
                    .is_some_and(|x| x.eq_ignore_ascii_case("bearer")) =>
            {
                headers.insert(
                    "Authorization".into(),
                    json!({"secret": {"env": var}, "prefix": "Bearer "}),
                );
            }
            (Some("oauth2" | "openIdConnect"), _) => {
                headers.insert(
                    "Authorization".into(),
                    json!({"secret": {"env": var}, "prefix": "Bearer "}),
                );
            }
            (Some("apiKey"), Some("header")) => {
                let h = scheme
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("X-API-Key");
                headers.insert(h.to_owned(), json!({"secret": {"env": var}}));
            }
            (Some("http"), _) => {
                return Err(Failure::Inexpressible(format!(
                    "the security scheme `{s}` (HTTP {}) is not a bearer token",
                    scheme.get("scheme").and_then(Value::as_str).unwrap_or("?")
                )));
            }
            (Some("apiKey"), Some(place)) => {
                return Err(Failure::Inexpressible(format!(
                    "the security scheme `{s}` puts the key in the {place}, where a secret would be logged"
                )));
            }
            _ => {}
        }
    }
    // The result: the first 2xx response with a JSON schema.
    let mut result = Value::Null;
    if let Some(rs) = raw_op.get("responses").and_then(Value::as_object) {
        for (code, r) in rs {
            if !code.starts_with('2') {
                continue;
            }
            let r = deref(r, doc);
            if let Some((_, m)) = r
                .get("content")
                .and_then(Value::as_object)
                .and_then(|c| c.iter().find(|(k, _)| is_json(k)))
                && let Some(s) = m.get("schema")
            {
                let mut result_defs = Defs::default();
                result = conv.root(s, &format!("{op_ptr}/responses/{code}"), &mut result_defs)?;
                let defs = conv.finish(&mut result_defs)?;
                attach(&mut result, defs);
                break;
            }
        }
    }
    let effect = match raw_op.get("x-toolgate-effect").and_then(Value::as_str) {
        Some(e) => match crate::ir::Effect::parse(e) {
            Some(e) => e,
            None => {
                return Err(Failure::Inexpressible(format!(
                    "`x-toolgate-effect: {e}` is not an effect"
                )));
            }
        },
        None => match method {
            "GET" | "HEAD" | "OPTIONS" => crate::ir::Effect::NetworkRead,
            "DELETE" => crate::ir::Effect::Destructive,
            _ => crate::ir::Effect::NetworkWrite,
        },
    };
    // The URL: the path's `{name}`s are arguments already.
    let url = format!("{server}{path}");
    let summary = op.summary.as_deref().unwrap_or("").trim();
    let detail = op.description.as_deref().unwrap_or("").trim();
    let mut description = match (summary.is_empty(), detail.is_empty()) {
        (false, false) if !detail.starts_with(summary) => format!("{summary}. {detail}"),
        (false, _) if detail.is_empty() => summary.to_owned(),
        _ if !detail.is_empty() => detail.to_owned(),
        _ => format!("Call {method} {path} of {api}."),
    };
    description = description.split_whitespace().collect::<Vec<_>>().join(" ");
    if !description.ends_with('.') {
        description.push('.');
    }
    description.push_str(if result.is_null() {
        " Returns the response body."
    } else {
        " Returns the response as JSON."
    });
    if description.len() > MAX_DESCRIPTION {
        let cut = description
            .char_indices()
            .take_while(|(i, _)| *i < MAX_DESCRIPTION - 1)
            .last()
            .map_or(0, |(i, c)| i + c.len_utf8());
        description.truncate(cut);
        description.push('…');
    }
    let mut parameters =
        json!({"type": "object", "properties": props, "additionalProperties": false});
    if !required.is_empty() {
        required.dedup();
        parameters["required"] = json!(required);
    }
    let defs = conv.finish(&mut param_defs)?;
    attach(&mut parameters, defs);
    let mut http = json!({"method": method, "url": url});
    if !query.is_empty() {
        http["query"] = json!(query);
    }
    if !headers.is_empty() {
        http["headers"] = Value::Object(headers);
    }
    if !body.is_null() {
        http["body"] = body;
    }
    let mut spec_v = json!({
        "name": name,
        "version": 1,
        "description": description,
        "effect": effect.as_str(),
    });
    if matches!(method, "PUT" | "DELETE") {
        spec_v["idempotency"] = json!("idempotent");
    }
    let cap = conv.walk.cap();
    let inlined = schema::inlined_size(&parameters, cap).max(schema::inlined_size(&result, cap));
    spec_v["parameters"] = parameters;
    if !result.is_null() {
        spec_v["result"] = result;
    }
    spec_v["timeout"] = json!("30s");
    spec_v["exec"] = json!({"http": http});
    let text = yaml_text(&spec_v)?;
    let header = format!(
        "# Imported from OpenAPI ({method} {}) by `toolgate import --from openapi`.\n\
         # effect {}: {}. Review the effect, the limits and the result, then run `toolgate lint`.\n",
        comment_text(path),
        effect.as_str(),
        if raw_op.get("x-toolgate-effect").is_some() {
            "from `x-toolgate-effect`"
        } else {
            "from the method"
        }
    );
    Ok((name, format!("{header}{text}"), inlined))
}

/// Runs the import: writes `<out>/<name>.yaml` per tool, and lists what could not be imported.
pub fn run(
    file: &Path,
    out: Option<&Path>,
    server: Option<&str>,
    force: bool,
    limits: &ImportLimits,
) -> miette::Result<u8> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let (text, doc) = match read_document(file, limits) {
        Ok(d) => d,
        Err(m) => return super::call::fail(&m),
    };
    let imported = match convert(&doc, server, limits) {
        Ok(i) => i,
        Err(Failure::Inexpressible(m)) => {
            return super::call::fail(&format!("{}: {m}", file.display()));
        }
        Err(Failure::Limit { message, pointer }) => {
            return super::call::fail(&format!("{}: {message}", locate(file, &text, &pointer)));
        }
    };
    drop(text);
    let api = doc
        .pointer("/info/title")
        .and_then(Value::as_str)
        .unwrap_or("api")
        .to_snake_case();
    let dir = out
        .map(|o| {
            if o.is_absolute() {
                o.to_path_buf()
            } else {
                cwd.join(o)
            }
        })
        .unwrap_or_else(|| {
            cwd.join("tool-specs")
                .join(crate::cli::import::output::file_name(&api))
        });
    let (written, kept) = match write_all(&dir, &imported.tools, force) {
        Ok(n) => n,
        Err(m) => return super::call::fail(&m),
    };
    for (what, why) in &imported.inexpressible {
        println!(
            "inexpressible: {}: {}",
            comment_text(what),
            comment_text(why)
        );
    }
    for (name, nodes) in &imported.large_inlined {
        eprintln!(
            "warning: `{name}` shares schemas through `$defs` that would be {}{nodes} nodes inlined; the provider emitters (`toolgate lint`, `build`, `export`) inline `$ref`s",
            if *nodes >= limits.nodes.saturating_mul(2) {
                "at least "
            } else {
                ""
            }
        );
    }
    eprintln!(
        "{} operation(s) became tools ({written} written, {kept} kept), {} inexpressible; they call {}.",
        imported.tools.len(),
        imported.inexpressible.len(),
        imported.server
    );
    Ok(super::EXIT_OK)
}
