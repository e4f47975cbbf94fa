//! The one wildcard of the host's patterns (a match pattern's path, a request filter's URL):
//! `*` matches any run of characters; everything else is literal.

/// `*` matches any run of characters; everything else is literal.
pub fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i == parts.len() - 1 {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn glob_matches_runs() {
        assert!(glob("/*", "/anything/at/all"));
        assert!(glob("/ui/*", "/ui/"));
        assert!(glob("/a*b*c", "/aXXbYYc"));
        assert!(!glob("/a*b*c", "/aXXbYY"));
        assert!(glob("/exact", "/exact") && !glob("/exact", "/exact/more"));
    }
}
