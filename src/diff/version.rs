//! Version discipline: the bump the changes need, and whether the contracts have it. A tool
//! changed in a way that breaks models or recorded sessions needs its `version` raised; the
//! contracts' `version` (toolgate.yaml, the generated crate's) needs the semver bump the
//! harness level of the changes calls for — by Cargo's rules, where in `0.y.z` a minor bump is
//! the major one.

use crate::diff::{Bump, Change, ChangeKind, Impact, tool_change};
use crate::ir::{Bundle, ToolDefinition};

/// The largest harness bump among the changes.
pub fn required_bump(changes: &[Change]) -> Bump {
    changes
        .iter()
        .map(|c| c.kind.meta().harness)
        .max()
        .unwrap_or(Bump::None)
}

/// The bump from one semver to another, as Cargo reads compatibility.
pub fn bump_between(old: &semver::Version, new: &semver::Version) -> Bump {
    if new <= old {
        return Bump::None;
    }
    if old.major == 0 {
        if new.major > 0 || new.minor > old.minor {
            return Bump::Major;
        }
        return if new.patch > old.patch {
            Bump::Minor
        } else {
            Bump::Patch
        };
    }
    if new.major > old.major {
        Bump::Major
    } else if new.minor > old.minor {
        Bump::Minor
    } else {
        Bump::Patch
    }
}

/// The version the contracts need after `old` for a `bump`.
pub fn next_version(old: &semver::Version, bump: Bump) -> semver::Version {
    let (major, minor, patch) = (old.major, old.minor, old.patch);
    let (major, minor, patch) = match (bump, major == 0) {
        (Bump::None, _) => (major, minor, patch),
        (Bump::Major, false) => (major + 1, 0, 0),
        (Bump::Major, true) | (Bump::Minor, false) => (major, minor + 1, 0),
        (Bump::Minor, true) | (Bump::Patch, _) => (major, minor, patch + 1),
    };
    semver::Version::new(major, minor, patch)
}

/// Reports missing bumps: per tool, and for the contracts as a whole.
pub fn check(
    old: &Bundle,
    new: &Bundle,
    pairs: &[(&ToolDefinition, &ToolDefinition)],
    required: Bump,
    out: &mut Vec<Change>,
) {
    let mut missing = Vec::new();
    for (o, n) in pairs {
        let breaks = out.iter().any(|c| {
            // What a toolset serves is the project's, not the tool's contract.
            c.tool.as_deref() == Some(n.name.as_str()) && !c.at.starts_with("toolsets.") && {
                let m = c.kind.meta();
                m.models == Impact::Breaking || m.sessions == Impact::Breaking
            }
        });
        if breaks && n.version <= o.version {
            missing.push(tool_change(
                ChangeKind::VersionBumpMissing,
                &n.name,
                "version",
                format!(
                    "`{}` changed in a way that breaks callers but its version stayed {}: raise it to {}",
                    n.name,
                    n.version,
                    o.version + 1
                ),
            ));
        }
    }
    let parse = |v: &Option<String>| v.as_deref().and_then(|v| semver::Version::parse(v).ok());
    if let (Some(ov), Some(nv)) = (parse(&old.project.version), parse(&new.project.version))
        && bump_between(&ov, &nv) < required
    {
        missing.push(Change {
            kind: ChangeKind::VersionBumpMissing,
            tool: None,
            at: "version".into(),
            message: format!(
                "the changes need a {required} bump of the contracts' version: {ov} → {} or later (it is {nv})",
                next_version(&ov, required)
            ),
            witness: None,
        });
    } else if old.project.version.is_some() && new.project.version.is_none() {
        missing.push(Change {
            kind: ChangeKind::VersionBumpMissing,
            tool: None,
            at: "version".into(),
            message: "toolgate.yaml no longer gives the contracts' `version`".into(),
            witness: None,
        });
    }
    out.extend(missing);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> semver::Version {
        semver::Version::parse(s).unwrap()
    }

    #[test]
    fn bumps_follow_cargo_compatibility() {
        assert_eq!(bump_between(&v("1.2.3"), &v("2.0.0")), Bump::Major);
        assert_eq!(bump_between(&v("1.2.3"), &v("1.3.0")), Bump::Minor);
        assert_eq!(bump_between(&v("1.2.3"), &v("1.2.4")), Bump::Patch);
        assert_eq!(bump_between(&v("1.2.3"), &v("1.2.3")), Bump::None);
        assert_eq!(bump_between(&v("0.2.3"), &v("0.3.0")), Bump::Major);
        assert_eq!(bump_between(&v("0.2.3"), &v("0.2.4")), Bump::Minor);
        assert_eq!(next_version(&v("1.2.3"), Bump::Major), v("2.0.0"));
        assert_eq!(next_version(&v("0.2.3"), Bump::Major), v("0.3.0"));
        assert_eq!(next_version(&v("1.2.3"), Bump::Minor), v("1.3.0"));
    }
}
