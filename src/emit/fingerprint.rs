//! The fingerprint of a build: one hash of everything its output depends on, so a build into a
//! folder that already holds its output can skip emitting ([`crate::emit::write_build`]).
//!
//! It covers the bundle (the resolved contracts and project, with their content hash), the
//! build options (list choices, the generated crate's name and toolgate dependency), toolgate's
//! version, and the source of the code that turns a bundle into files — `src/emit/**`,
//! `src/ir/**` and `templates/**`, compiled in — so a toolgate built from changed emitters
//! regenerates even when its version did not move. It does not depend on the machine or the
//! folder, so a committed manifest stays the same on every clone.

use crate::emit::BuildOptions;

/// The sources whose code decides what a bundle becomes, by path from the crate root.
const SOURCES: &[(&str, &str)] = &[
    ("src/emit/anthropic.rs", include_str!("anthropic.rs")),
    ("src/emit/dropped.rs", include_str!("dropped.rs")),
    ("src/emit/fingerprint.rs", include_str!("fingerprint.rs")),
    ("src/emit/gemini.rs", include_str!("gemini.rs")),
    ("src/emit/lists.rs", include_str!("lists.rs")),
    ("src/emit/mcp.rs", include_str!("mcp.rs")),
    ("src/emit/mod.rs", include_str!("mod.rs")),
    ("src/emit/openai.rs", include_str!("openai.rs")),
    (
        "src/emit/openai/strict.rs",
        include_str!("openai/strict.rs"),
    ),
    ("src/emit/output.rs", include_str!("output.rs")),
    ("src/emit/rewrite.rs", include_str!("rewrite.rs")),
    (
        "src/emit/rust/conformance.rs",
        include_str!("rust/conformance.rs"),
    ),
    (
        "src/emit/rust/handlers.rs",
        include_str!("rust/handlers.rs"),
    ),
    ("src/emit/rust/ident.rs", include_str!("rust/ident.rs")),
    (
        "src/emit/rust/manifest.rs",
        include_str!("rust/manifest.rs"),
    ),
    ("src/emit/rust/mod.rs", include_str!("rust/mod.rs")),
    ("src/emit/rust/tokens.rs", include_str!("rust/tokens.rs")),
    ("src/emit/rust/types.rs", include_str!("rust/types.rs")),
    ("src/emit/schema.rs", include_str!("schema.rs")),
    ("src/ir/bundle.rs", include_str!("../ir/bundle.rs")),
    ("src/ir/http.rs", include_str!("../ir/http.rs")),
    ("src/ir/mod.rs", include_str!("../ir/mod.rs")),
    ("src/ir/project.rs", include_str!("../ir/project.rs")),
    ("src/ir/provider.rs", include_str!("../ir/provider.rs")),
    ("src/ir/template.rs", include_str!("../ir/template.rs")),
    ("src/ir/tool.rs", include_str!("../ir/tool.rs")),
    ("src/ir/vocab.rs", include_str!("../ir/vocab.rs")),
    (
        "templates/README.md.j2",
        include_str!("../../templates/README.md.j2"),
    ),
    (
        "templates/lib_doc.md.j2",
        include_str!("../../templates/lib_doc.md.j2"),
    ),
];

/// The fingerprint (BLAKE3, hex) of a build of `bundle_json` (the bundle's emitted JSON) with
/// `options`.
pub fn fingerprint(bundle_json: &str, options: &BuildOptions) -> String {
    let mut h = blake3::Hasher::new();
    field(&mut h, "toolgate", env!("CARGO_PKG_VERSION"));
    for (path, text) in SOURCES {
        // A checkout with CRLF line ends is the same source.
        field(&mut h, path, &text.replace('\r', ""));
    }
    field(&mut h, "options", &format!("{options:?}"));
    field(&mut h, "bundle", bundle_json);
    h.finalize().to_hex().to_string()
}

/// Hashes a named value, lengths first, so no two different sequences hash the same bytes.
fn field(h: &mut blake3::Hasher, name: &str, value: &str) {
    h.update(&(name.len() as u64).to_le_bytes());
    h.update(name.as_bytes());
    h.update(&(value.len() as u64).to_le_bytes());
    h.update(value.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::ListOptions;
    use std::path::Path;

    fn files_under(root: &Path, dir: &str, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if path.is_dir() {
                files_under(root, &rel, out);
            } else {
                out.push(rel);
            }
        }
    }

    /// A new emitter file left out of [`SOURCES`] would let a changed toolgate skip a build.
    #[test]
    fn every_emitter_source_is_hashed() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut found = Vec::new();
        for dir in ["src/emit", "src/ir", "templates"] {
            files_under(root, dir, &mut found);
        }
        found.sort();
        let listed: Vec<String> = SOURCES.iter().map(|(p, _)| (*p).to_owned()).collect();
        assert_eq!(
            found, listed,
            "list every file of src/emit, src/ir and templates in SOURCES (src/emit/fingerprint.rs)"
        );
    }

    #[test]
    fn options_and_bundle_change_the_fingerprint() {
        let options = BuildOptions::default();
        let a = fingerprint("{}", &options);
        assert_eq!(a, fingerprint("{}", &options));
        assert_ne!(a, fingerprint("{ }", &options));
        let loose = BuildOptions {
            lists: ListOptions {
                openai_strict: false,
                ..ListOptions::default()
            },
            rust: None,
        };
        assert_ne!(a, fingerprint("{}", &loose));
    }
}
