//! One self-contained HTML page from a document: inline CSS, inline SVG charts, no
//! scripts, a content-security policy that forbids loading anything, and every string
//! from the store escaped.

use crate::render::doc::{Block, Grid};
use crate::render::escape::escape_lines;
use racehorse_chart::escape;

const STYLE: &str = "
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;padding:0 1em;color:#222;line-height:1.4}
h1{font-size:1.5em;border-bottom:2px solid #444;padding-bottom:.2em}
h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.8em 0;font-size:.9em}
caption{text-align:left;font-weight:600;padding:.3em 0}
th,td{border:1px solid #ddd;padding:.25em .6em;text-align:right;white-space:nowrap}
th{background:#f2f2f2}
td.l,th.l{text-align:left}
td.better{color:#0a6b2d;background:#e7f6ec}
td.worse{color:#a3141d;background:#fbe9ea}
td.muted{color:#777}
table.env td{white-space:normal;max-width:40em;word-break:break-all}
nav ul{columns:2;font-size:.9em}
figure.chart{margin:1em 0}
svg{max-width:100%;height:auto}
p{max-width:70em}
pre{font-size:.85em;background:#f7f7f7;padding:.5em;overflow-x:auto}
";

fn table(g: &Grid) -> String {
    let mut out = format!("<table class=\"{}\">", escape(g.kind));
    if !g.caption.is_empty() {
        out.push_str(&format!("<caption>{}</caption>", escape(&g.caption)));
    }
    out.push_str("<thead><tr>");
    for (i, h) in g.header.iter().enumerate() {
        let class = if i < g.left { " class=\"l\"" } else { "" };
        out.push_str(&format!("<th{class} scope=\"col\">{}</th>", escape(h)));
    }
    out.push_str("</tr></thead><tbody>");
    for r in &g.rows {
        out.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let mut classes: Vec<&str> = Vec::new();
            if i < g.left {
                classes.push("l");
            }
            if !c.tone.class().is_empty() {
                classes.push(c.tone.class());
            }
            let class =
                if classes.is_empty() { String::new() } else { format!(" class=\"{}\"", classes.join(" ")) };
            let shown = racehorse_store::limits::clip(&c.text, crate::escape::MAX_CELL_CHARS);
            out.push_str(&format!("<td{class}>{}</td>", escape(&shown)));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>\n");
    out
}

/// Anchor id of the n-th section.
fn anchor(n: usize) -> String {
    format!("s{n}")
}

/// The whole page: title, a contents list of the sections, then the blocks in order.
pub fn page(title: &str, blocks: &[Block]) -> String {
    let mut body = String::new();
    let mut toc = String::new();
    let mut section = 0usize;
    for b in blocks {
        match b {
            Block::Heading(1, t) => body.push_str(&format!("<h1>{}</h1>\n", escape(t))),
            Block::Heading(_, t) => {
                section += 1;
                toc.push_str(&format!("<li><a href=\"#{}\">{}</a></li>", anchor(section), escape(t)));
                body.push_str(&format!("<h2 id=\"{}\">{}</h2>\n", anchor(section), escape(t)));
            }
            Block::Para(t) => body.push_str(&format!("<p>{}</p>\n", escape(t))),
            Block::Table(g) => body.push_str(&table(g)),
            Block::Pre(t) => body.push_str(&format!("<pre>{}</pre>\n", escape(&escape_lines(t)))),
            Block::Chart(svg) => body.push_str(&format!("<figure class=\"chart\">{svg}</figure>\n")),
        }
    }
    // Contents go after the title and the lines under it, before the first section.
    let nav = format!("<nav><ul>{toc}</ul></nav>\n");
    let at = body.find("<h2").unwrap_or(body.len());
    body.insert_str(at, &nav);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"racehorse {}\">\n<title>{}</title>\n<style>{STYLE}</style></head>\n<body>\n{body}</body></html>\n",
        env!("CARGO_PKG_VERSION"),
        escape(title)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::doc::{Cell, Tone};

    #[test]
    fn page_escapes_everything_from_the_store() {
        let mut g = Grid::new("compare", "<caption>", vec!["<h>".into(), "v".into()], 1);
        g.rows.push(vec![Cell::plain("<script>alert(1)</script>"), Cell::toned("1 & 2", Tone::Better)]);
        let blocks = vec![
            Block::Heading(1, "t<i>".into()),
            Block::Para("a \"quoted\" <b>".into()),
            Block::Heading(2, "sec'tion".into()),
            Block::Table(g),
        ];
        let html = page("t<i>", &blocks);
        assert!(!html.contains("<script>"));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("<td class=\"better\">1 &amp; 2</td>"));
        assert!(
            html.contains("<h2 id=\"s1\">sec&#39;tion</h2>")
                || html.contains("<h2 id=\"s1\">sec&apos;tion</h2>")
        );
        assert!(html.contains("<nav><ul><li><a href=\"#s1\">"));
        assert!(html.contains("Content-Security-Policy"));
    }
}
