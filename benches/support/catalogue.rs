//! A realistic project of 1,000 tool contracts for the build benchmark (`benches/build.rs`),
//! shared with the test that keeps it lint-clean (`tests/cli_build.rs`).
//!
//! Fifty domains (orders, invoices, tickets …) each get the same twenty operations (get, list,
//! create, archive …), so every tool is `<verb>_<noun>`, and each domain is one toolset of
//! twenty tools in `toolgate.yaml` (no list exposes more than twenty tools at once). Operations
//! differ in effect, parameters, result, validation and permission rules; descriptions say what
//! each tool does to which records, so no two tools overlap. Everything is deterministic.

use std::fmt::Write as _;
use std::path::Path;

/// The domains, one toolset each.
pub const DOMAINS: [&str; 50] = [
    "account",
    "alert",
    "asset",
    "booking",
    "budget",
    "campaign",
    "certificate",
    "contract",
    "coupon",
    "customer",
    "dashboard",
    "dataset",
    "deployment",
    "device",
    "discount",
    "employee",
    "expense",
    "feedback",
    "incident",
    "invoice",
    "lead",
    "lesson",
    "license",
    "listing",
    "meeting",
    "milestone",
    "notebook",
    "order",
    "parcel",
    "partner",
    "payment",
    "playlist",
    "podcast",
    "policy",
    "prescription",
    "product",
    "project",
    "quote",
    "recipe",
    "refund",
    "reservation",
    "review",
    "shipment",
    "supplier",
    "survey",
    "ticket",
    "vehicle",
    "voucher",
    "warehouse",
    "webinar",
];

/// What one operation does; `{n}` in a text is the domain noun.
struct Operation {
    verb: &'static str,
    effect: &'static str,
    idempotency: &'static str,
    /// The description (`{n}` = noun, `{ns}` = plural).
    description: &'static str,
    /// Extra parameters beside `id` (YAML lines under `properties`, indented by 4).
    parameters: &'static str,
    /// Whether the tool takes the record's `id`.
    takes_id: bool,
    /// Result properties (YAML lines, indented by 4) and their required names.
    result: &'static str,
    result_required: &'static str,
    /// Whether permission rules ask for approval rather than allow.
    asks: bool,
}

const OPERATIONS: [Operation; 20] = [
    Operation {
        verb: "get",
        effect: "read_only",
        idempotency: "pure",
        description: "Show one {n} record with all of its fields and its change history. Use when the user names a {n} by id. Returns the {n}'s fields and whether it is archived.",
        parameters: "    fields: {type: array, maxItems: 20, items: {type: string, maxLength: 100}, description: Only these fields of the {n}.}\n",
        takes_id: true,
        result: "    fields: {type: object, additionalProperties: {type: string}, description: Field values by name.}\n    archived: {type: boolean, description: True when the {n} is archived.}\n",
        result_required: "fields, archived",
        asks: false,
    },
    Operation {
        verb: "list",
        effect: "read_only",
        idempotency: "pure",
        description: "Page through {ns} matching a filter, newest first. Use to browse or to find a {n} id. Returns one page of {n} summaries and a cursor for the next page.",
        parameters: "    filter: {type: string, maxLength: 200, description: Words that each {n} must contain.}\n    limit: {type: integer, minimum: 1, maximum: 100, default: 20, description: Most {ns} per page.}\n    cursor: {type: string, maxLength: 200, description: The cursor of the previous page.}\n",
        takes_id: false,
        result: "    items: {type: array, maxItems: 100, items: {type: string}, description: The {n} summaries.}\n    next_cursor: {type: [string, 'null'], description: 'The cursor of the next page, null on the last page.'}\n",
        result_required: "items, next_cursor",
        asks: false,
    },
    Operation {
        verb: "count",
        effect: "read_only",
        idempotency: "pure",
        description: "Count {ns} by status without reading them. Use before a bulk change to size it. Returns a number per status.",
        parameters: "    status: {type: string, enum: [open, closed, archived], description: Count only {ns} in this status.}\n",
        takes_id: false,
        result: "    counts: {type: object, additionalProperties: {type: integer}, description: Number of {ns} per status.}\n",
        result_required: "counts",
        asks: false,
    },
    Operation {
        verb: "describe",
        effect: "read_only",
        idempotency: "pure",
        description: "Explain the {n} schema: every field, its type and allowed values. Use before creating or updating a {n}. Returns one line per field.",
        parameters: "",
        takes_id: false,
        result: "    lines: {type: array, items: {type: string}, description: One line per {n} field.}\n",
        result_required: "lines",
        asks: false,
    },
    Operation {
        verb: "create",
        effect: "local_write",
        idempotency: "non_idempotent",
        description: "Register a new {n} from its fields; missing optional fields get defaults. Use after describe_{n} when no matching {n} exists. Returns the new {n}'s id.",
        parameters: "    title: {type: string, minLength: 1, maxLength: 200, description: A short title for the {n}.}\n    notes: {type: string, maxLength: 4000, description: Free text kept with the {n}.}\n",
        takes_id: false,
        result: "    id: {type: string, description: The new {n}'s id.}\n",
        result_required: "id",
        asks: true,
    },
    Operation {
        verb: "update",
        effect: "local_write",
        idempotency: "idempotent",
        description: "Overwrite chosen fields of an existing {n}, leaving the others as they are. Use when the user corrects a {n}. Returns the fields after the change.",
        parameters: "    changes:\n      type: object\n      description: New values; fields left out keep theirs.\n      properties:\n        title: {type: string, minLength: 1, maxLength: 200, description: The new title.}\n        notes: {type: string, maxLength: 4000, description: The new notes.}\n        priority: {type: string, enum: [low, normal, high], description: The new priority.}\n      additionalProperties: false\n",
        takes_id: true,
        result: "    fields: {type: object, additionalProperties: {type: string}, description: The {n}'s fields after the change.}\n",
        result_required: "fields",
        asks: true,
    },
    Operation {
        verb: "rename",
        effect: "local_write",
        idempotency: "idempotent",
        description: "Give a {n} a new title; links to it keep working. Use when only the title is wrong. Returns the old title.",
        parameters: "    title: {type: string, minLength: 1, maxLength: 200, description: The new title of the {n}.}\n",
        takes_id: true,
        result: "    previous: {type: string, description: The title before the rename.}\n",
        result_required: "previous",
        asks: true,
    },
    Operation {
        verb: "archive",
        effect: "local_write",
        idempotency: "idempotent",
        description: "Hide a {n} from lists while keeping it for audits; restore_{n} brings it back. Use instead of deleting. Returns when it was archived.",
        parameters: "    reason: {type: string, maxLength: 500, description: Why the {n} is archived.}\n",
        takes_id: true,
        result: "    archived_at: {type: string, format: date-time, description: When the {n} was archived.}\n",
        result_required: "archived_at",
        asks: true,
    },
    Operation {
        verb: "restore",
        effect: "local_write",
        idempotency: "idempotent",
        description: "Bring an archived {n} back into lists exactly as it was archived. Use to undo archive_{n}. Returns whether the {n} was archived before.",
        parameters: "",
        takes_id: true,
        result: "    was_archived: {type: boolean, description: False when the {n} was not archived.}\n",
        result_required: "was_archived",
        asks: true,
    },
    Operation {
        verb: "delete",
        effect: "destructive",
        idempotency: "idempotent",
        description: "Erase a {n} permanently with its attachments; this cannot be undone. Use only when the user asks for erasure. Returns whether the {n} existed.",
        parameters: "    confirm_title: {type: string, maxLength: 200, description: 'The title of the {n}, typed again to confirm.'}\n",
        takes_id: true,
        result: "    existed: {type: boolean, description: False when no {n} had this id.}\n",
        result_required: "existed",
        asks: true,
    },
    Operation {
        verb: "export",
        effect: "read_only",
        idempotency: "pure",
        description: "Serialize {ns} into CSV or JSON text for spreadsheets and backups. Use when the user wants a file. Returns the text and the number of rows.",
        parameters: "    format: {type: string, enum: [csv, json], default: csv, description: The text format.}\n    since: {type: string, format: date, description: Only {ns} changed on or after this day.}\n",
        takes_id: false,
        result: "    text: {type: string, description: The exported {ns}.}\n    rows: {type: integer, description: Number of {ns} exported.}\n",
        result_required: "text, rows",
        asks: false,
    },
    Operation {
        verb: "tag",
        effect: "local_write",
        idempotency: "idempotent",
        description: "Attach labels to a {n} so filters and reports can group it. Use when the user sorts {ns}. Returns every label the {n} carries now.",
        parameters: "    labels: {type: array, minItems: 1, maxItems: 10, items: {type: string, maxLength: 100}, description: Labels to attach.}\n",
        takes_id: true,
        result: "    labels: {type: array, items: {type: string}, description: All labels of the {n}.}\n",
        result_required: "labels",
        asks: true,
    },
    Operation {
        verb: "assign",
        effect: "local_write",
        idempotency: "idempotent",
        description: "Make a teammate responsible for a {n}; they are notified by email. Use when work on the {n} changes hands. Returns the previous owner.",
        parameters: "    owner: {type: string, maxLength: 120, description: Email address of the new owner.}\n",
        takes_id: true,
        result: "    previous_owner: {type: [string, 'null'], description: 'The owner before, null when nobody was.'}\n",
        result_required: "previous_owner",
        asks: true,
    },
    Operation {
        verb: "approve",
        effect: "local_write",
        idempotency: "idempotent",
        description: "Sign off a pending {n} so its workflow moves on to the next stage. Use after a reviewer checked it. Returns the new stage.",
        parameters: "    comment: {type: string, maxLength: 1000, description: A note for the audit log.}\n",
        takes_id: true,
        result: "    stage: {type: string, description: The workflow stage after approval.}\n",
        result_required: "stage",
        asks: true,
    },
    Operation {
        verb: "cancel",
        effect: "local_write",
        idempotency: "idempotent",
        description: "Stop a {n} that is still in progress and release what it reserved. Use when the requester withdraws it. Returns the released quantity.",
        parameters: "    reason: {type: string, maxLength: 500, description: Why the {n} is cancelled.}\n",
        takes_id: true,
        result: "    released: {type: integer, description: Units the {n} had reserved.}\n",
        result_required: "released",
        asks: true,
    },
    Operation {
        verb: "close",
        effect: "local_write",
        idempotency: "idempotent",
        description: "Mark a finished {n} done with a resolution note; reopen_{n} undoes it. Use when its work is complete. Returns the closing time.",
        parameters: "    resolution: {type: string, minLength: 1, maxLength: 1000, description: What was done.}\n",
        takes_id: true,
        result: "    closed_at: {type: string, format: date-time, description: When the {n} was closed.}\n",
        result_required: "closed_at",
        asks: true,
    },
    Operation {
        verb: "reopen",
        effect: "local_write",
        idempotency: "idempotent",
        description: "Put a closed {n} back in progress, keeping its earlier resolution in history. Use when a {n} turns out unfinished. Returns its status.",
        parameters: "",
        takes_id: true,
        result: "    status: {type: string, enum: [open, closed, archived], description: The {n}'s status now.}\n",
        result_required: "status",
        asks: true,
    },
    Operation {
        verb: "compare",
        effect: "read_only",
        idempotency: "pure",
        description: "Diff two {ns} field by field, or two revisions of one. Use to spot duplicates or check edits. Returns the fields whose values differ.",
        parameters: "    other_id: {type: string, minLength: 1, maxLength: 128, description: The id of the second {n}.}\n",
        takes_id: true,
        result: "    differences: {type: array, items: {type: string}, description: Names of differing fields.}\n",
        result_required: "differences",
        asks: false,
    },
    Operation {
        verb: "lock",
        effect: "local_write",
        idempotency: "idempotent",
        description: "Freeze a {n} against edits for a while, for example during an audit. Use before exporting for auditors. Returns when the freeze ends.",
        parameters: "    minutes: {type: integer, minimum: 1, maximum: 1440, description: How long edits stay blocked.}\n",
        takes_id: true,
        result: "    until: {type: string, format: date-time, description: When the {n} unfreezes.}\n",
        result_required: "until",
        asks: true,
    },
    Operation {
        verb: "watch",
        effect: "local_write",
        idempotency: "idempotent",
        description: "Subscribe the current user to notifications about changes to a {n}. Use when the user wants updates. Returns how many people watch it.",
        parameters: "",
        takes_id: true,
        result: "    watchers: {type: integer, description: Number of people watching the {n}.}\n",
        result_required: "watchers",
        asks: false,
    },
];

/// Number of tools.
pub const SPECS: usize = DOMAINS.len() * OPERATIONS.len();

fn plural(noun: &str) -> String {
    if noun.ends_with('s') || noun.ends_with('x') {
        format!("{noun}es")
    } else if let Some(stem) = noun.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'o', 'u'])
    {
        format!("{stem}ies")
    } else {
        format!("{noun}s")
    }
}

fn fill(text: &str, noun: &str) -> String {
    text.replace("{ns}", &plural(noun)).replace("{n}", noun)
}

/// One spec file: operation `op` of domain `domain`.
pub fn spec(op: usize, domain: usize) -> String {
    let o = &OPERATIONS[op % OPERATIONS.len()];
    let n = DOMAINS[domain % DOMAINS.len()];
    let ns = plural(n);
    let id = format!("{n}_id");
    let mut s = String::new();
    let _ = writeln!(s, "name: {}_{n}", o.verb);
    let _ = writeln!(s, "version: {}", 1 + (op + domain) % 3);
    let _ = writeln!(s, "description: >-\n  {}", fill(o.description, n));
    let _ = writeln!(s, "effect: {}", o.effect);
    let _ = writeln!(s, "idempotency: {}", o.idempotency);
    let mut properties = String::new();
    if o.takes_id {
        let _ = writeln!(
            properties,
            "    {id}: {{type: string, minLength: 1, maxLength: 128, pattern: '^[a-z0-9-]+$', description: The {n} to act on (its id as list_{n} shows it).}}"
        );
    }
    properties.push_str(&fill(o.parameters, n));
    if properties.is_empty() {
        s.push_str("parameters:\n  type: object\n  properties: {}\n");
    } else {
        s.push_str("parameters:\n  type: object\n  properties:\n");
        s.push_str(&properties);
    }
    if o.takes_id {
        let _ = writeln!(s, "  required: [{id}]");
    }
    s.push_str("  additionalProperties: false\n");
    let _ = write!(
        s,
        "result:\n  type: object\n  properties:\n{}  required: [{}]\n  additionalProperties: false\n",
        fill(o.result, n),
        o.result_required
    );
    if o.takes_id {
        let decision = if o.asks { "ask" } else { "allow" };
        let _ = write!(
            s,
            r#"validate:
  - id: id-not-reserved
    expr: "!args.{id}.startsWith('sys-')"
    message: Ids starting with sys- belong to the system and cannot be used here.
    hint: Use list_{n} to find the id of the {n}.
permissions:
  rules:
    - id: no-internal
      deny: "args.{id}.startsWith('internal-')"
      reason: Internal {ns} are managed by the platform team.
    - id: team-{ns}
      {decision}: "!args.{id}.startsWith('internal-')"
      reason: Team {ns} are open to the agent.
  examples:
    - {{args: {{{id}: a-1}}, expect: {decision}}}
    - {{args: {{{id}: internal-7}}, expect: deny}}
"#
        );
    }
    if o.verb == "create" {
        let _ = write!(
            s,
            r#"permissions:
  rules:
    - id: no-internal
      deny: "args.title.startsWith('internal')"
      reason: Internal {ns} are created by the platform team.
    - id: new-{ns}
      ask: "!args.title.startsWith('internal')"
      reason: A person confirms every new {n}.
  examples:
    - {{args: {{title: Spring}}, expect: ask}}
    - {{args: {{title: internal audit}}, expect: deny}}
"#
        );
    }
    if o.effect != "read_only" {
        let key = if o.takes_id {
            format!("'{n}:' + args.{id}")
        } else {
            format!("'{n}:new'")
        };
        let _ = writeln!(s, "resources:\n  writes: \"{key}\"");
    }
    let _ = writeln!(s, "timeout: {}s", 5 + (op * 7 + domain) % 25);
    s.push_str("output: {max_bytes: 16KiB, max_lines: 300}\n");
    if o.takes_id {
        let _ = writeln!(
            s,
            "errors:\n  RESOURCE_NOT_FOUND: No {n} has this id. Use list_{n} to find it."
        );
    } else {
        let _ = writeln!(
            s,
            "errors:\n  TIMEOUT: The {n} service is slow right now. Wait a minute, then try once more."
        );
    }
    s.push_str("exec: {handler: rust}\n");
    s
}

/// The project file: one toolset per domain. Each toolset already holds the 20 tools TGV005
/// allows, so none lists read_artifact, and TGP012 (unreadable-cut-output) is off: the project
/// is built and linted, never served to a model.
pub fn project() -> String {
    let mut s = String::from(
        "# A generated project of 1,000 tools (benches/support/catalogue.rs).\nspecs: [\"tool-specs/*.yaml\"]\nlint: {ignore: [TGP012]}\ntoolsets:\n",
    );
    for n in DOMAINS {
        let tools: Vec<String> = OPERATIONS
            .iter()
            .map(|op| format!("{}_{n}", op.verb))
            .collect();
        let _ = writeln!(
            s,
            "  {ns}:\n    description: Everything about {ns}.\n    tools: [{}]",
            tools.join(", "),
            ns = plural(n)
        );
    }
    s
}

/// Writes `toolgate.yaml` and `tool-specs/<tool>.yaml` into `dir`.
pub fn write_project(dir: &Path) -> std::io::Result<()> {
    let specs = dir.join("tool-specs");
    std::fs::create_dir_all(&specs)?;
    std::fs::write(dir.join("toolgate.yaml"), project())?;
    for (d, n) in DOMAINS.iter().enumerate() {
        for (o, op) in OPERATIONS.iter().enumerate() {
            std::fs::write(specs.join(format!("{}_{n}.yaml", op.verb)), spec(o, d))?;
        }
    }
    Ok(())
}
