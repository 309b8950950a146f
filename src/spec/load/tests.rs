//! The loader's tests: discovery, globs, and what `specs:` may reach.

use super::*;

const SPEC: &str = "name: echo\ndescription: Echo the text back.\neffect: pure\n";

#[test]
fn a_folder_of_specs_skips_project_files_but_a_named_one_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("nested");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::write(dir.path().join("echo.yaml"), SPEC).unwrap();
    std::fs::write(nested.join("toolgate.yaml"), "specs: [\"*.yaml\"]\n").unwrap();
    std::fs::write(nested.join("toolgate.yml"), "specs: [\"*.yaml\"]\n").unwrap();
    let opts = |paths: Vec<PathBuf>| LoadOptions {
        paths,
        config: None,
        cwd: dir.path().to_path_buf(),
    };

    let loaded = load(&opts(vec![PathBuf::from(".")])).unwrap();
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    assert_eq!(loaded.tool_count(), 1);

    // `*` stays in its folder: the nested spec is not matched, and neither are the
    // nested project files under `**`.
    std::fs::write(nested.join("inner.yaml"), SPEC.replace("echo", "inner")).unwrap();
    let flat = expand_globs(dir.path(), &["*.yaml".to_owned()]).unwrap();
    assert_eq!(flat, vec![dir.path().join("echo.yaml")]);
    let deep = expand_globs(dir.path(), &["**/*.{yaml,yml}".to_owned()]).unwrap();
    assert_eq!(
        deep,
        vec![dir.path().join("echo.yaml"), nested.join("inner.yaml")]
    );

    // Named explicitly, a file is read as a spec whatever its name (and fails as one).
    let named = load(&opts(vec![PathBuf::from("nested/toolgate.yaml")])).unwrap();
    assert_eq!(named.errors.len(), 1);
}

#[test]
fn specs_globs_outside_the_project_are_refused_at_their_entry() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("project");
    std::fs::create_dir_all(root.join("specs")).unwrap();
    std::fs::write(
        outer.path().join("outside.yaml"),
        SPEC.replace("echo", "outside"),
    )
    .unwrap();
    std::fs::write(root.join("specs/echo.yaml"), SPEC).unwrap();
    let project = "specs:\n  - \"specs/*.yaml\"\n  - \"/**\"\n  - \"../*.yaml\"\n  - \"specs/../../*.yaml\"\n";
    std::fs::write(root.join("toolgate.yaml"), project).unwrap();
    let loaded = load(&LoadOptions {
        paths: vec![],
        config: None,
        cwd: root.clone(),
    })
    .unwrap();
    // Only the glob inside the project was expanded.
    assert_eq!(loaded.tool_count(), 1);
    let at: Vec<(usize, usize, String)> = loaded
        .errors
        .iter()
        .map(|d| {
            let f = loaded.sources.get(d.span.source).unwrap();
            let lc = f.line_column(d.span.start);
            (lc.line, lc.column, d.message.clone())
        })
        .collect();
    assert_eq!(at.len(), 3, "{at:?}");
    assert_eq!((at[0].0, at[0].1), (3, 5), "{at:?}");
    assert!(at[0].2.contains("`/**` is absolute"), "{at:?}");
    assert_eq!((at[1].0, at[1].1), (4, 5), "{at:?}");
    assert!(at[1].2.contains("climbs out"), "{at:?}");
    assert_eq!((at[2].0, at[2].1), (5, 5), "{at:?}");
    assert!(
        loaded
            .errors
            .iter()
            .all(|d| d.help.as_deref().is_some_and(|h| h.contains("relative")))
    );
}

#[test]
fn spec_files_linked_outside_the_repository_are_refused_at_their_glob() {
    let outer = tempfile::tempdir().unwrap();
    let repo = outer.path().join("repo");
    let root = repo.join("project");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("lib")).unwrap();
    std::fs::create_dir_all(root.join("specs")).unwrap();
    std::fs::create_dir_all(outer.path().join("away")).unwrap();
    let outside = outer.path().join("away/outside.yaml");
    std::fs::write(&outside, SPEC.replace("echo", "outside")).unwrap();
    std::fs::write(repo.join("lib/lib.yaml"), SPEC.replace("echo", "lib")).unwrap();
    std::fs::write(root.join("specs/echo.yaml"), SPEC).unwrap();
    let link = |from: &Path, to: PathBuf| std::os::unix::fs::symlink(from, to);
    link(&outside, root.join("linked.yaml")).unwrap();
    // A glob's walk does not follow links: this one is not even seen.
    link(&outside, root.join("specs/linked.yaml")).unwrap();
    link(&outer.path().join("away"), root.join("away")).unwrap();
    // A link named literally that stays in the repository is read through.
    link(&repo.join("lib/lib.yaml"), root.join("lib.yaml")).unwrap();
    let project =
        "specs:\n  - \"specs/*.yaml\"\n  - linked.yaml\n  - \"away/*.yaml\"\n  - lib.yaml\n";
    std::fs::write(root.join("toolgate.yaml"), project).unwrap();
    let loaded = load(&LoadOptions {
        paths: vec![],
        config: None,
        cwd: root.clone(),
    })
    .unwrap();
    assert_eq!(loaded.tool_count(), 2, "{:?}", loaded.errors);
    let real = std::fs::canonicalize(&outside).unwrap();
    let at: Vec<(usize, String)> = loaded
        .errors
        .iter()
        .map(|d| {
            let f = loaded.sources.get(d.span.source).unwrap();
            (f.line_column(d.span.start).line, d.message.clone())
        })
        .collect();
    assert_eq!(
        at.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
        [3, 4],
        "{at:?}"
    );
    for (file, (_, message)) in ["linked.yaml", "away/outside.yaml"].iter().zip(&at) {
        assert!(
            message.contains(&format!("`{file}`"))
                && message.contains("resolves outside the project")
                && message.contains(&real.display().to_string()),
            "{message}"
        );
    }
}

#[test]
fn the_default_glob_does_not_read_through_a_folder_linked_outside() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("project");
    std::fs::create_dir_all(outer.path().join("away")).unwrap();
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(outer.path().join("away/outside.yaml"), SPEC).unwrap();
    std::os::unix::fs::symlink(outer.path().join("away"), root.join("tool-specs")).unwrap();
    let load_here = || {
        load(&LoadOptions {
            paths: vec![],
            config: None,
            cwd: root.clone(),
        })
        .unwrap()
    };
    // Without toolgate.yaml: at the file itself.
    let loaded = load_here();
    assert_eq!(loaded.tool_count(), 0);
    assert_eq!(loaded.errors.len(), 1, "{:?}", loaded.errors);
    let at = loaded.sources.get(loaded.errors[0].span.source).unwrap();
    assert!(
        at.path.ends_with("tool-specs/outside.yaml"),
        "{:?}",
        at.path
    );
    assert!(
        loaded.errors[0]
            .message
            .contains("resolves outside the project")
    );
    // With a toolgate.yaml that names no `specs`: at its start.
    std::fs::write(root.join("toolgate.yaml"), "version: 1.0.0\n").unwrap();
    let loaded = load_here();
    assert_eq!(loaded.tool_count(), 0);
    assert_eq!(loaded.errors.len(), 1, "{:?}", loaded.errors);
    let d = &loaded.errors[0];
    assert_eq!(
        Some(d.span.source),
        loaded.project.as_ref().map(|(id, _)| *id)
    );
    assert_eq!((d.span.start, d.span.end), (0, 0));
}

#[test]
fn specs_globs_may_reach_the_rest_of_their_repository() {
    let outer = tempfile::tempdir().unwrap();
    let repo = outer.path().join("repo");
    let root = repo.join("projects/a");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("lib")).unwrap();
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(repo.join("lib/echo.yaml"), SPEC).unwrap();
    std::fs::write(
        outer.path().join("outside.yaml"),
        SPEC.replace("echo", "outside"),
    )
    .unwrap();
    let project =
        "specs:\n  - \"../../lib/*.yaml\"\n  - \"../../../*.yaml\"\n  - \"../*/../../../*.yaml\"\n";
    std::fs::write(root.join("toolgate.yaml"), project).unwrap();
    let loaded = load(&LoadOptions {
        paths: vec![],
        config: None,
        cwd: root.clone(),
    })
    .unwrap();
    assert_eq!(loaded.tool_count(), 1, "{:?}", loaded.errors);
    let lines: Vec<usize> = loaded
        .errors
        .iter()
        .map(|d| {
            loaded
                .sources
                .get(d.span.source)
                .unwrap()
                .line_column(d.span.start)
                .line
        })
        .collect();
    assert_eq!(lines, vec![3, 4], "{:?}", loaded.errors);
}
