//! One escaping rule for every text output (`show`, `list`, `compare` and `report` as text or
//! markdown): control characters in labels, parameters, variant names and error texts are
//! written as visible escapes, so that a label cannot move the cursor, clear the screen,
//! recolour the terminal or fake a line of the table. A table cell also shows at most
//! [`MAX_CELL_CHARS`] characters, so that no stored text can make a table unreadable or
//! its renderer fail (issue 47, case 3).

/// Most characters a table cell shows in every renderer (text, markdown, HTML); a longer
/// text is cut and ends in "…". A run's label (at most 256 characters) always fits.
pub const MAX_CELL_CHARS: usize = 256;

/// A table cell's text as shown: control characters escaped, cut to [`MAX_CELL_CHARS`].
pub fn cell_text(s: &str) -> String {
    racehorse_store::limits::clip(&escape_control(s), MAX_CELL_CHARS).into_owned()
}

/// `s` with every control character (C0, DEL, C1) and every bidirectional override written
/// as an escape: `\n`, `\r`, `\t`, `\x1b`, `\u{202e}`. Other text, backslashes included,
/// is kept as it is, so escaping twice changes nothing more.
pub fn escape_control(s: &str) -> String {
    if !s.chars().any(needs_escape) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for ch in s.chars() {
        match ch {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) && u32::from(c) < 0x100 => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c if needs_escape(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// Text that keeps its line breaks but escapes every other control character in each line.
pub fn escape_lines(s: &str) -> String {
    s.split('\n').map(escape_control).collect::<Vec<_>>().join("\n")
}

/// Control characters, and the bidirectional embeddings, overrides and isolates that can
/// make text read in a different order than it is stored.
fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_visible() {
        assert_eq!(escape_control("plain label -O3 µs"), "plain label -O3 µs");
        assert_eq!(escape_control("a\nb\tc\rd"), "a\\nb\\tc\\rd");
        assert_eq!(escape_control("\x1b[2Jred\x07"), "\\x1b[2Jred\\x07");
        assert_eq!(escape_control("del\x7f c1\u{85}"), "del\\x7f c1\\x85");
        assert_eq!(escape_control("evil\u{202e}txt.exe"), "evil\\u{202e}txt.exe");
    }

    #[test]
    fn escaping_is_idempotent_and_keeps_backslashes() {
        let once = escape_control("x\x1by\\n");
        assert_eq!(once, "x\\x1by\\n");
        assert_eq!(escape_control(&once), once);
    }

    #[test]
    fn cells_are_cut_to_their_limit() {
        assert_eq!(cell_text("a\x1b"), "a\\x1b");
        let long = cell_text(&"x".repeat(70_000));
        assert_eq!(long.chars().count(), MAX_CELL_CHARS);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn lines_keep_their_breaks() {
        assert_eq!(escape_lines("one\x1b\ntwo"), "one\\x1b\ntwo");
    }
}
