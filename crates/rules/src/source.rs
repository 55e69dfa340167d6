//! Whitespace-stripped text with a map from each byte of the stripped text to its original column.

/// The characters cpuplugd deletes everywhere outside comment lines (C `isspace`).
pub(crate) fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// Stripped text; `cols[i]` is the 1-based column (in chars) of stripped byte `i` in the original
/// line, and `cols[text.len()]` is the column that "end of text" is reported at.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Source {
    pub line: usize,
    pub text: String,
    pub cols: Vec<usize>,
}

impl Source {
    /// Deletes whitespace from `raw`; columns are 1-based within `raw`, the end is one past its last char.
    pub fn strip(line: usize, raw: &str) -> Source {
        let mut text = String::with_capacity(raw.len());
        let mut cols = Vec::with_capacity(raw.len() + 1);
        let mut count = 0;
        for (i, c) in raw.chars().enumerate() {
            count = i + 1;
            if !is_space(c) {
                text.push(c);
                cols.resize(cols.len() + c.len_utf8(), i + 1);
            }
        }
        cols.push(count + 1);
        Source { line, text, cols }
    }

    /// The column of stripped byte `pos` (the end column for `pos >= text.len()`).
    pub fn col(&self, pos: usize) -> usize {
        self.cols[pos.min(self.text.len())]
    }

    /// Bytes `start..end` of the stripped text, ending at column `end_col`.
    pub fn slice(&self, start: usize, end: usize, end_col: usize) -> Source {
        let mut cols = self.cols[start..end].to_vec();
        cols.push(end_col);
        Source { line: self.line, text: self.text[start..end].to_string(), cols }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_maps_columns() {
        let s = Source::strip(3, "  a b\t c ");
        assert_eq!(s.text, "abc");
        assert_eq!(s.cols, vec![3, 5, 8, 10]);
        assert_eq!((s.col(1), s.col(99), s.line), (5, 10, 3));
    }

    #[test]
    fn multibyte_chars_count_as_one_column() {
        let s = Source::strip(1, "é x");
        assert_eq!(s.text, "éx");
        assert_eq!(s.cols, vec![1, 1, 3, 4]);
    }

    #[test]
    fn slice_keeps_columns() {
        let s = Source::strip(1, "K = \"a + b\"");
        assert_eq!(s.text, "K=\"a+b\"");
        let v = s.slice(3, 6, s.col(6));
        assert_eq!(v.text, "a+b");
        assert_eq!(v.cols, vec![6, 8, 10, 11]);
    }

    #[test]
    fn empty_text_reports_at_column_one() {
        let s = Source::strip(1, "");
        assert_eq!((s.text.as_str(), s.col(0)), ("", 1));
    }
}
