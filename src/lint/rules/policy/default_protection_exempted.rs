//! TGP011 default-protection-exempted.

use crate::diagnostic::Severity;
use crate::ir::ProtectedPath;
use crate::ir::project::DEFAULT_PROTECTED;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::policy::ProtectedSet;
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::DefaultProtectionExempted,
    severity: Severity::Warning,
    applies: Applies::SpecsOnly,
    purpose: "Finds a `protect` exception that takes paths out of toolgate's default protected set.",
    explanation: r#"## What it does
Reports each `except` entry of `protect:` in toolgate.yaml that exempts paths one of the default
protected globs covers (`.env*`, private keys and certificates, SSH keys, credential files of
common tools), naming those defaults. An exception that only narrows the project's own globs is
not reported, nor is a project glob that matches nothing.

## Why is this bad?
The default set is what no tool should ever read or write in any project. An exception makes
those files readable and writable by every tool — and by whatever steers the agent. Sometimes
that is right (test fixtures with throwaway certificates); it should then be as narrow as the
files that need it, and visible in review, not a quiet `tests/**` that also exempts a real key
someone drops there later.

## Example
```yaml
protect:
  - {except: "tests/**", reason: Test data.}
```

Use instead:
```yaml
protect:
  - {except: "/tests/fixtures/self-signed.pem", reason: A throwaway certificate the TLS tests load.}
```
"#,
};

/// A path the glob matches: wildcards filled in (`*.pem` → `sample.pem`, `**` → `x`).
pub(crate) fn sample(glob: &str) -> String {
    glob.trim_start_matches('/')
        .split('/')
        .map(|seg| match seg {
            "**" => "x".to_owned(),
            s => s.replace('*', "sample").replace('?', "s"),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The default globs an exception takes paths away from.
pub(crate) fn exempted_defaults(except: &str) -> Vec<&'static str> {
    let trimmed = except.trim_end_matches("/**").trim_end_matches('/');
    let last = trimmed.rsplit('/').next().unwrap_or(trimmed);
    // An exception that names a folder exempts what is inside it.
    let folder = except.ends_with('/')
        || except.ends_with("/**")
        || (!last.contains(['*', '?', '[', '{', '.']) && !last.is_empty());
    let base = sample(trimmed);
    DEFAULT_PROTECTED
        .iter()
        .filter(|(glob, _)| {
            let entry = |default: bool| ProtectedPath {
                glob: (*glob).to_owned(),
                reason: String::new(),
                default,
            };
            let exception = [ProtectedPath {
                glob: except.to_owned(),
                reason: String::new(),
                default: false,
            }];
            // This one default alone, without and with the exception.
            let only = |with_except: bool| {
                let except: &[ProtectedPath] = if with_except { &exception } else { &[] };
                ProtectedSet::from_globs(vec![entry(true)], except).ok()
            };
            let (Some(plain), Some(excepted)) = (only(false), only(true)) else {
                return false;
            };
            let mut candidates = vec![base.clone()];
            if folder {
                candidates.push(format!("{base}/{}", sample(glob)));
            }
            candidates
                .iter()
                .any(|p| plain.protects(p).is_some() && excepted.protects(p).is_none())
        })
        .map(|(glob, _)| *glob)
        .collect()
}

/// Reports exceptions that shrink the default protected set.
pub(crate) fn check(ctx: &mut LintContext, _tools: &[ToolView]) {
    let Some((file, pf)) = ctx.project_file else {
        return;
    };
    let Some(entries) = &pf.protect else {
        return;
    };
    for entry in &entries.value {
        let Some(except) = &entry.value.except else {
            continue;
        };
        let exempted = exempted_defaults(&except.value);
        if exempted.is_empty() {
            continue;
        }
        let mut shown: Vec<String> = exempted.iter().take(6).map(|g| format!("`{g}`")).collect();
        if exempted.len() > 6 {
            shown.push(format!("and {} more", exempted.len() - 6));
        }
        ctx.report(
            except.range.in_file(file),
            format!(
                "`except: {}` takes paths out of the default protected set ({}): every tool may read and write them",
                except.value,
                shown.join(", ")
            ),
        )
        .help("narrow the exception to the files tools must reach (a single file, anchored with a leading `/`), or remove it");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exceptions_are_judged_by_what_they_exempt() {
        assert_eq!(exempted_defaults("/public.pem"), ["*.pem"]);
        assert_eq!(exempted_defaults(".env.example"), [".env.*"]);
        let all = exempted_defaults("tests/fixtures/**");
        assert!(all.contains(&".env") && all.contains(&"*.pem") && all.contains(&".ssh"));
        assert_eq!(exempted_defaults("docs/*.md"), Vec::<&str>::new());
        assert_eq!(
            exempted_defaults("/build/generated.txt"),
            Vec::<&str>::new()
        );
    }
}
