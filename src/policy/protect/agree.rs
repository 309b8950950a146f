//! The one-pass judgement ([`ProtectedSet::protects`]) against the per-prefix one it replaced,
//! kept here as the reference: both must answer alike (the same glob, too) on any path and set.

use proptest::prelude::*;

use super::*;

/// The judgement as it was: each prefix matched on its own, O(folders × length).
fn reference(set: &ProtectedSet, rel: &str) -> Option<ProtectedPath> {
    let rel = rel.trim_start_matches("./");
    if rel.is_empty() || rel == "." {
        return None;
    }
    if rel.len() > PATH_MAX {
        return Some(TOO_LONG.clone());
    }
    let mut hit = None;
    let mut excepted = false;
    for (i, _) in rel
        .match_indices('/')
        .chain(std::iter::once((rel.len(), "")))
    {
        let prefix = &rel[..i];
        if prefix.is_empty() {
            continue;
        }
        if hit.is_none() {
            hit = set.protect.matches(prefix).first().copied();
        }
        excepted = excepted || set.except.is_match(prefix);
    }
    match hit {
        Some(i) if !excepted => set.paths.get(i).cloned(),
        _ => None,
    }
}

fn entry(glob: &str) -> ProtectedPath {
    ProtectedPath {
        glob: glob.to_owned(),
        reason: format!("reason of {glob}"),
        default: false,
    }
}

/// A path segment: the names the globs use (in any case), `.`, `..`, empty (a `//`), and
/// random bytes of a small alphabet.
fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            ".env", ".ENV", "Secrets", "secrets", "keys", "a.pem", "A.PEM", "id_rsa", ".ssh", "ok",
            "OK", "fixtures", "db", "x.db", "..", ".", "", "state[1]", "*", "café",
        ])
        .prop_map(str::to_owned),
        "[a-cA-C.\\-_*]{1,4}",
    ]
}

fn path() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["", "/", "./", "../", "//"]),
        prop::collection::vec(segment(), 1..8),
        prop::bool::ANY,
    )
        .prop_map(|(lead, segs, trailing)| {
            let mut p = format!("{lead}{}", segs.join("/"));
            if trailing {
                p.push('/');
            }
            p
        })
}

/// A glob: unanchored, anchored (`/…`), with `**`, wildcards, classes, braces and a trailing
/// `/` or `/**`, in mixed case.
fn glob() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        ".env",
        ".env.*",
        "*.PEM",
        "secrets",
        "/secrets",
        "/Keys/*.pem",
        "**/db/*.db",
        "keys/**",
        ".ssh/",
        "/ok",
        "OK",
        "fixtures/**",
        "**/fixtures/*",
        "[a-c]*.db",
        "{x,a}.{db,pem}",
        "id_?sa",
        "/state\\[1\\]/*",
        "café",
        "*",
        "**",
        "a*/b*",
    ])
    .prop_map(str::to_owned)
}

fn set_of(paths: &[String], except: &[String], defaults: bool) -> ProtectedSet {
    let mut all: Vec<ProtectedPath> = if defaults {
        ProtectPolicy::default().all_paths()
    } else {
        Vec::new()
    };
    all.extend(paths.iter().map(|g| entry(g)));
    let except: Vec<ProtectedPath> = except.iter().map(|g| entry(g)).collect();
    ProtectedSet::from_parts(all, except).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn one_pass_agrees_with_each_prefix_alone(
        paths in prop::collection::vec(glob(), 0..6),
        except in prop::collection::vec(glob(), 0..3),
        defaults in prop::bool::ANY,
        probes in prop::collection::vec(path(), 1..8),
    ) {
        let set = set_of(&paths, &except, defaults);
        for p in &probes {
            prop_assert_eq!(set.protects(p).cloned(), reference(&set, p), "path {:?}", p);
        }
    }
}

#[test]
fn agrees_on_the_edges() {
    let set = set_of(
        &["secrets".into(), "/a/b".into(), "**".into()],
        &["ok".into()],
        true,
    );
    let long = "a/".repeat(PATH_MAX / 2);
    for p in [
        "", ".", "./", "/", "//", "a", "a/", "/a/b", "a/b/", "x/ok/y", ".ENV", "..", "../.env",
        &long,
    ] {
        assert_eq!(set.protects(p).cloned(), reference(&set, p), "{p:?}");
    }
    // With no globs at all, and with exceptions only.
    for (paths, except) in [(vec![], vec![]), (vec![], vec!["ok".to_owned()])] {
        let set = set_of(&paths, &except, false);
        assert_eq!(set.protects("a/.env"), None);
    }
}

#[test]
fn the_first_glob_of_the_shortest_prefix_is_reported() {
    // `b` matches only the longer prefix; `a*` and `*` both match the shorter, `a*` first.
    let set = set_of(&["b".into(), "a*".into(), "*".into()], &[], false);
    assert_eq!(set.protects("ab/b").map(|p| p.glob.as_str()), Some("a*"));
    assert_eq!(reference(&set, "ab/b").map(|p| p.glob), Some("a*".into()));
}
