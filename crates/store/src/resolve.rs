//! Close-match suggestions for an unknown run key: prefix matches and small edit distances
//! over the stored labels and ids, so a typo gets a "did you mean" instead of a dead end.

/// At most this many suggestions are offered.
const MAX_SUGGESTIONS: usize = 5;

/// Candidates close to `key`, best first: exact-prefix matches, then by edit distance.
/// `candidates` are in preference order (newest first) and may repeat.
pub fn suggestions(key: &str, candidates: &[String]) -> Vec<String> {
    let key_lower = key.to_lowercase();
    let max_distance = (key_lower.chars().count() / 3).max(1);
    let mut scored: Vec<(usize, usize, &String)> = Vec::new();
    for (order, cand) in candidates.iter().enumerate() {
        if scored.iter().any(|(_, _, c)| *c == cand) {
            continue;
        }
        let cand_lower = cand.to_lowercase();
        let prefix = !key_lower.is_empty()
            && (cand_lower.starts_with(&key_lower) || key_lower.starts_with(&cand_lower));
        let distance = if prefix { 0 } else { strsim::levenshtein(&key_lower, &cand_lower) };
        if distance <= max_distance {
            scored.push((distance, order, cand));
        }
    }
    scored.sort();
    scored.into_iter().take(MAX_SUGGESTIONS).map(|(_, _, c)| c.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn suggests_typos_and_prefixes_but_not_strangers() {
        let c = strings(&["baseline", "base-6.8", "new-kernel", "12", "baseline"]);
        assert_eq!(suggestions("basline", &c), strings(&["baseline"]));
        assert_eq!(suggestions("base", &c), strings(&["baseline", "base-6.8"]));
        assert_eq!(suggestions("13", &c), strings(&["12"]));
        assert!(suggestions("zzzzzzzz", &c).is_empty());
    }
}
