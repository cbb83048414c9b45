//! Regular expressions a user writes (a CRD schema's `pattern`, a lesson check's
//! `matches`): whether one compiles, and the reason in one line when it does not.

/// Why `pattern` is not a regular expression, as the last line of regex-lite's
/// message (the line that names the problem; the ones above repeat the pattern with a
/// caret under it), or None when it compiles.
pub fn compile_error(pattern: &str) -> Option<String> {
    let e = regex::Regex::new(pattern).err()?;
    Some(
        e.to_string()
            .lines()
            .last()
            .unwrap_or("")
            .trim()
            .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn should_name_the_problem_in_one_line() {
        assert_eq!(compile_error("^a+$"), None);
        let why = compile_error("(unclosed").expect("an error");
        assert!(!why.contains('\n'));
        assert!(why.contains("open group without closing"), "{why}");
    }
}
