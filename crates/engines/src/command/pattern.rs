//! Regular expressions for pulling a figure out of a program's output, matched by the `regex`
//! crate: linear time in the text whatever the pattern (no catastrophic backtracking), Perl's
//! leftmost-first results (alternation prefers its left branch, greedy repetition prefers more,
//! lazy repetition prefers less), Unicode classes and case folding.

use regex::{Regex, RegexBuilder};

/// Deepest nesting of groups, classes and repetitions a pattern may have.
const NEST_LIMIT: u32 = 64;
/// Most bytes a compiled pattern may take (counted repetitions are expanded).
const SIZE_LIMIT_BYTES: usize = 10 << 20;

/// Byte spans of a match: group 0 (the whole match), then each group (None if it took no part).
pub type Captures = Vec<Option<(usize, usize)>>;

/// A compiled pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    re: Regex,
}

impl Pattern {
    /// Compiles `src`; the error text says what is wrong and where (the regex crate's message,
    /// with "too large" when the expanded pattern passes the size limit).
    pub fn new(src: &str) -> Result<Pattern, String> {
        let built = RegexBuilder::new(src).nest_limit(NEST_LIMIT).size_limit(SIZE_LIMIT_BYTES).build();
        match built {
            Ok(re) => Ok(Pattern { re }),
            Err(regex::Error::CompiledTooBig(limit)) => Err(format!(
                "pattern is too large once its repetitions are expanded (more than {limit} bytes compiled)"
            )),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        self.re.as_str()
    }

    /// Number of capture groups (not counting the whole match).
    pub fn groups(&self) -> usize {
        self.re.captures_len() - 1
    }

    /// Leftmost match starting at or after byte `from` (rounded up to a char boundary): spans of
    /// group 0 (whole match) and each group (None if it did not take part). Text before `from`
    /// still counts for anchors and word boundaries.
    pub fn captures_at(&self, text: &str, from: usize) -> Option<Captures> {
        let mut start = from;
        while start < text.len() && !text.is_char_boundary(start) {
            start += 1;
        }
        if start > text.len() {
            return None;
        }
        let caps = self.re.captures_at(text, start)?;
        Some(caps.iter().map(|m| m.map(|m| (m.start(), m.end()))).collect())
    }

    /// The text of group 1 (or of the whole match when the pattern has no group) of the last
    /// non-overlapping match in `text` in which that group took part. Matches are found left to
    /// right; after an empty match the scan moves on one char, and an empty match right where
    /// the previous match ended is skipped. None when nothing matches.
    pub fn last_value<'t>(&self, text: &'t str) -> Option<&'t str> {
        let group = usize::from(self.groups() > 0);
        self.re.captures_iter(text).filter_map(|c| c.get(group)).last().map(|m| m.as_str())
    }
}

#[cfg(test)]
#[path = "pattern_tests.rs"]
mod tests;
