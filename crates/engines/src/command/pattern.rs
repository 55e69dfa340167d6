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

    /// The figure's text in the last non-overlapping match of `text` that has one: the group
    /// named `value` when the pattern has one, else the first group that took part in that
    /// match, else (a pattern without groups) the whole match. Matches are found left to right;
    /// after an empty match the scan moves on one char, and an empty match right where the
    /// previous match ended is skipped.
    pub fn last_value<'t>(&self, text: &'t str) -> Result<&'t str, NoValue> {
        let named = self.re.capture_names().position(|n| n == Some(VALUE_GROUP));
        let mut last_match = None;
        let mut found = None;
        for caps in self.re.captures_iter(text) {
            let value = match named {
                Some(i) => caps.get(i),
                None if self.groups() == 0 => caps.get(0),
                None => caps.iter().skip(1).flatten().next(),
            };
            if value.is_some() {
                found = value;
            }
            last_match = caps.get(0);
        }
        match (found, last_match) {
            (Some(v), _) => Ok(v.as_str()),
            (None, None) => Err(NoValue::NoMatch),
            (None, Some(m)) => Err(NoValue::EmptyGroup {
                matched: m.as_str().to_string(),
                empty: match named {
                    Some(_) => format!("its group `{VALUE_GROUP}` took part in no match"),
                    None if self.groups() == 1 => "its group 1 took part in no match".to_string(),
                    None => format!("none of its groups 1 to {} took part in any match", self.groups()),
                },
            }),
        }
    }
}

/// The name of the group that holds the figure when the pattern has more than one:
/// `(?P<value>…)` or `(?<value>…)`.
pub const VALUE_GROUP: &str = "value";

/// Why a pattern gave no figure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoValue {
    /// Nothing in the text matches.
    NoMatch,
    /// The pattern matched (`matched`, its last match), but the group that holds the figure
    /// took part in none of its matches; `empty` says which ("its group `value` took part in
    /// no match", "none of its groups 1 to 3 took part in any match").
    EmptyGroup { matched: String, empty: String },
}

#[cfg(test)]
#[path = "pattern_tests.rs"]
mod tests;
