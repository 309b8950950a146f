//! "Did you mean": the closest known name to a misspelt one.

/// The candidate closest to `input`, if one is close enough to be a likely typo.
pub fn closest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = input.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (c, strsim::jaro_winkler(&lower, &c.to_ascii_lowercase())))
        .filter(|(_, score)| *score >= 0.8)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(c, _)| c)
}

/// "did you mean `x`?" when one of `names` is close to `input`.
pub fn did_you_mean<'a>(input: &str, names: impl IntoIterator<Item = &'a str>) -> Option<String> {
    closest(input, names).map(|s| format!("did you mean `{s}`?"))
}

/// "did you mean `x`?", or else the list of valid names (or that there are none).
pub fn did_you_mean_or_list(input: &str, names: &[&str]) -> String {
    did_you_mean(input, names.iter().copied()).unwrap_or_else(|| {
        if names.is_empty() {
            "none are defined".into()
        } else {
            format!("expected one of: {}", names.join(", "))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_typos() {
        assert_eq!(closest("efect", ["name", "effect", "exec"]), Some("effect"));
        assert_eq!(closest("zzz", ["name", "effect"]), None);
        assert_eq!(
            did_you_mean("efect", ["effect"]).as_deref(),
            Some("did you mean `effect`?")
        );
        assert_eq!(
            did_you_mean_or_list("zzz", &["a", "b"]),
            "expected one of: a, b"
        );
        assert_eq!(did_you_mean_or_list("zzz", &[]), "none are defined");
    }
}
