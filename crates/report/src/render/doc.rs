//! A small document model (headings, paragraphs, tables, charts) that every human renderer
//! shares: the layout is built once, and text, markdown and HTML only differ in syntax.

use crate::render::escape::{cell_text, escape_control, escape_lines, MAX_CELL_CHARS};
use racehorse_store::limits::clip;

/// How a table cell should look where the renderer can show it (HTML colours).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Plain,
    Better,
    Worse,
    Muted,
}

impl Tone {
    pub fn class(self) -> &'static str {
        match self {
            Tone::Plain => "",
            Tone::Better => "better",
            Tone::Worse => "worse",
            Tone::Muted => "muted",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub text: String,
    pub tone: Tone,
}

impl Cell {
    pub fn plain(text: impl Into<String>) -> Cell {
        Cell { text: text.into(), tone: Tone::Plain }
    }
    pub fn toned(text: impl Into<String>, tone: Tone) -> Cell {
        Cell { text: text.into(), tone }
    }
}

/// A table: `left` leading columns are labels (left-aligned), the rest numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    pub caption: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    pub left: usize,
    /// A css class naming the table's kind in HTML (`compare`, `summary`, `env`, `run`).
    pub kind: &'static str,
    /// In text, the next block follows the table's last row directly (`show`'s tables and the
    /// notes under them); otherwise a blank line separates them.
    pub compact: bool,
}

impl Grid {
    pub fn new(kind: &'static str, caption: impl Into<String>, header: Vec<String>, left: usize) -> Grid {
        Grid { caption: caption.into(), header, rows: Vec::new(), left, kind, compact: false }
    }

    /// The same table, with no blank line after it in text.
    pub fn compact(self) -> Grid {
        Grid { compact: true, ..self }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Level 1 is the document title.
    Heading(u8, String),
    Para(String),
    Table(Grid),
    /// Lines kept as they are (a profile's listing): verbatim in text, a fenced block in
    /// markdown, `<pre>` in HTML.
    Pre(String),
    /// An inline SVG chart (HTML only).
    Chart(String),
}

/// Renders a document as aligned plain text for the terminal.
pub fn to_text(doc: &[Block]) -> String {
    let mut out = String::new();
    for b in doc {
        match b {
            Block::Heading(1, t) => {
                let t = escape_control(t);
                out.push_str(&format!("{t}\n{}\n", "=".repeat(t.chars().count())))
            }
            Block::Heading(_, t) => out.push_str(&format!("\n{}\n", escape_control(t))),
            Block::Para(t) => out.push_str(&format!("{}\n", escape_lines(t))),
            Block::Table(g) => {
                if !g.caption.is_empty() {
                    out.push_str(&format!("{}\n", escape_lines(&g.caption)));
                }
                out.push_str(&grid_text(g));
                if !g.compact {
                    out.push('\n');
                }
            }
            Block::Pre(t) => out.push_str(&format!("{}\n", escape_lines(t))),
            Block::Chart(_) => {}
        }
    }
    out
}

/// A plain text table built row by row for the terminal (`list`, `env`, `show` …): `left`
/// leading columns left-aligned, the rest right-aligned, drawn as every document's tables.
#[derive(Debug, Clone, PartialEq)]
pub struct Table(Grid);

impl Table {
    pub fn new(header: &[&str], left: usize) -> Table {
        Table(Grid::new("text", "", header.iter().map(|h| h.to_string()).collect(), left))
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.0.rows.push(cells.into_iter().map(Cell::plain).collect());
    }

    /// The header, a line of dashes per column, and the rows; no trailing spaces.
    pub fn render(&self) -> String {
        grid_text(&self.0)
    }
}

/// A grid as aligned text: header, dashes, rows (no caption); control characters escaped.
fn grid_text(g: &Grid) -> String {
    let n = g.header.len();
    let header: Vec<String> = g.header.iter().map(|h| cell_text(h)).collect();
    let rows: Vec<Vec<String>> =
        g.rows.iter().map(|r| r.iter().map(|c| cell_text(&c.text)).collect()).collect();
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (i, c) in r.iter().enumerate().take(n) {
            width[i] = width[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let parts: Vec<String> = (0..n)
            .map(|i| {
                // Padded by hand: a width argument above 65,535 panics in `format!`.
                let c = cells.get(i).copied().unwrap_or("");
                let pad = " ".repeat(width[i].saturating_sub(c.chars().count()));
                if i < g.left {
                    format!("{c}{pad}")
                } else {
                    format!("{pad}{c}")
                }
            })
            .collect();
        parts.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(header.iter().map(String::as_str).collect());
    out.push_str(&(width.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("  ") + "\n"));
    for r in &rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out
}

/// Escapes text for a markdown table cell or paragraph: a line break becomes a space, other
/// control characters visible escapes, markdown's own characters are backslashed.
fn md_escape(s: &str) -> String {
    let s = escape_control(&s.replace('\n', " "));
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '|' | '*' | '_' | '`' | '[' | ']' | '<' | '>' | '~' | '\\' => {
                out.push('\\');
                out.push(ch);
            }
            '\n' => out.push(' '),
            _ => out.push(ch),
        }
    }
    out
}

/// Renders a document as GitHub-flavoured markdown.
pub fn to_markdown(doc: &[Block]) -> String {
    let mut out = String::new();
    for b in doc {
        match b {
            Block::Heading(level, t) => {
                out.push_str(&format!("{} {}\n\n", "#".repeat(usize::from(*level).clamp(1, 6)), md_escape(t)))
            }
            Block::Para(t) => out.push_str(&format!("{}\n\n", md_escape(t))),
            Block::Table(g) => {
                if !g.caption.is_empty() {
                    out.push_str(&format!("{}\n\n", md_escape(&g.caption)));
                }
                let head: Vec<String> =
                    g.header.iter().map(|h| md_escape(&clip(h, MAX_CELL_CHARS))).collect();
                out.push_str(&format!("| {} |\n", head.join(" | ")));
                let align: Vec<&str> =
                    (0..g.header.len()).map(|i| if i < g.left { ":--" } else { "--:" }).collect();
                out.push_str(&format!("| {} |\n", align.join(" | ")));
                for r in &g.rows {
                    let cells: Vec<String> =
                        r.iter().map(|c| md_escape(&clip(&c.text, MAX_CELL_CHARS))).collect();
                    out.push_str(&format!("| {} |\n", cells.join(" | ")));
                }
                out.push('\n');
            }
            Block::Pre(t) => {
                // A fence longer than any run of backticks inside, so that none can close it.
                let longest = t.split(|c| c != '`').map(str::len).max().unwrap_or(0);
                let fence = "`".repeat(longest.max(2) + 1);
                out.push_str(&format!("{fence}\n{}\n{fence}\n\n", escape_lines(t)));
            }
            Block::Chart(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Block> {
        let mut g = Grid::new("compare", "cap", vec!["name".into(), "value".into()], 1);
        g.rows.push(vec![Cell::plain("a"), Cell::plain("1")]);
        g.rows.push(vec![Cell::plain("longer|x"), Cell::toned("123", Tone::Better)]);
        vec![Block::Heading(1, "Title".into()), Block::Table(g), Block::Chart("<svg/>".into())]
    }

    #[test]
    fn text_aligns_columns() {
        let t = to_text(&sample());
        assert!(t.starts_with("Title\n=====\ncap\n"), "{t}");
        assert!(t.contains("name      value\n--------  -----\na             1\nlonger|x    123\n\n"), "{t}");
        assert!(!t.contains("svg"));
    }

    #[test]
    fn tables_align_columns_like_grids() {
        let mut t = Table::new(&["name", "value"], 1);
        t.row(vec!["a".into(), "1".into()]);
        t.row(vec!["longer".into(), "123".into()]);
        assert_eq!(t.render(), "name    value\n------  -----\na           1\nlonger    123\n");
        let mut short = Table::new(&["a", "b", "c"], 2);
        short.row(vec!["x".into()]);
        assert_eq!(short.render(), "a  b  c\n-  -  -\nx\n", "missing cells are blank, lines trimmed");
    }

    #[test]
    fn text_and_markdown_escape_control_characters() {
        let mut g = Grid::new("compare", "cap\x1b[31m", vec!["name".into()], 1);
        g.rows.push(vec![Cell::plain("a\nfake row")]);
        let doc =
            vec![Block::Heading(2, "run 1 'x\x07'".into()), Block::Para("p\x1b\nq".into()), Block::Table(g)];
        let t = to_text(&doc);
        assert!(t.contains("run 1 'x\\x07'") && t.contains("p\\x1b\nq") && t.contains("cap\\x1b[31m"), "{t}");
        assert!(t.contains("a\\nfake row") && !t.contains('\x1b') && !t.contains('\x07'), "{t}");
        let mut short = Table::new(&["l"], 1);
        short.row(vec!["\x1b]0;title\x07".into()]);
        assert_eq!(short.render(), "l\n----------------\n\\x1b]0;title\\x07\n");
        let m = to_markdown(&doc);
        assert!(!m.contains('\x1b') && m.contains("a fake row"), "{m}");
    }

    /// Issue 47, case 3: a cell of 65,536 characters or more panicked the text renderer
    /// (`Formatting argument out of range`), and with it `list` for the whole store.
    #[test]
    fn issue47_a_huge_cell_is_cut_in_every_renderer() {
        let mut t = Table::new(&["id", "label"], 2);
        t.row(vec!["1".into(), "L".repeat(70_000)]);
        let text = t.render();
        assert!(text.lines().all(|l| l.chars().count() <= 4 + crate::render::escape::MAX_CELL_CHARS), "cut");
        assert!(text.contains('…'), "{text}");
        let mut g = Grid::new("run", "", vec!["label".into()], 1);
        g.rows.push(vec![Cell::plain("M".repeat(70_000))]);
        let doc = vec![Block::Table(g)];
        for out in [to_text(&doc), to_markdown(&doc), crate::render::html::page("t", &doc)] {
            assert!(out.len() < 10_000 && out.contains('…'), "{}", out.len());
        }
    }

    #[test]
    fn compact_tables_and_preformatted_lines() {
        let mut g = Grid::new("run", "", vec!["a".into()], 1).compact();
        g.rows.push(vec![Cell::plain("x")]);
        let pre = Block::Pre("  12.50  app\n  ``` \x1b".into());
        let doc = vec![Block::Table(g), Block::Para("note".into()), pre];
        assert_eq!(to_text(&doc), "a\n-\nx\nnote\n  12.50  app\n  ``` \\x1b\n");
        let m = to_markdown(&doc);
        assert!(m.ends_with("````\n  12.50  app\n  ``` \\x1b\n````\n\n"), "a fence no line can close: {m}");
    }

    #[test]
    fn markdown_escapes_cells() {
        let m = to_markdown(&sample());
        assert!(m.contains("| name | value |\n| :-- | --: |\n"), "{m}");
        assert!(m.contains("longer\\|x"), "{m}");
    }
}
