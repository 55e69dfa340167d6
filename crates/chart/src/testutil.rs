//! Test support: a small XML well-formedness checker (balanced tags, quoted attributes, valid
//! entity references, no raw `<`, `&` or `>` in text) and helpers shared by the chart tests.

/// Checks that `doc` is one well-formed XML element (no prolog, comments or CDATA expected).
pub(crate) fn check_well_formed(doc: &str) -> Result<(), String> {
    let mut stack: Vec<&str> = Vec::new();
    let mut rest = doc;
    let mut root_closed = false;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('<') {
            if root_closed {
                return Err("content after the root element".into());
            }
            if let Some(close) = after.strip_prefix('/') {
                let end = close.find('>').ok_or("unterminated end tag")?;
                let name = close[..end].trim_end();
                let open = stack.pop().ok_or_else(|| format!("unexpected </{name}>"))?;
                if open != name {
                    return Err(format!("</{name}> closes <{open}>"));
                }
                root_closed = stack.is_empty();
                rest = &close[end + 1..];
            } else {
                let (name, self_closing, remaining) = parse_start_tag(after)?;
                if self_closing {
                    root_closed = stack.is_empty();
                } else {
                    stack.push(name);
                }
                rest = remaining;
            }
        } else {
            let end = rest.find('<').unwrap_or(rest.len());
            let text = &rest[..end];
            if stack.is_empty() && !text.trim().is_empty() {
                return Err(format!("text outside the root element: {text:?}"));
            }
            check_text(text, false)?;
            rest = &rest[end..];
        }
    }
    if !stack.is_empty() {
        return Err(format!("unclosed elements: {stack:?}"));
    }
    if !root_closed {
        return Err("no root element".into());
    }
    Ok(())
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, ':' | '_' | '-' | '.')
}

/// Parses `name attr="v" ...>` or `.../>`; returns the name, whether self-closing, and the rest.
fn parse_start_tag(s: &str) -> Result<(&str, bool, &str), String> {
    let name_len = s.find(|c: char| !is_name_char(c)).unwrap_or(s.len());
    if name_len == 0 || !s.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(format!("bad tag name at {:?}", &s[..s.len().min(20)]));
    }
    let name = &s[..name_len];
    let mut rest = &s[name_len..];
    let mut seen: Vec<&str> = Vec::new();
    loop {
        let trimmed = rest.trim_start();
        let had_space = trimmed.len() < rest.len();
        rest = trimmed;
        if let Some(r) = rest.strip_prefix("/>") {
            return Ok((name, true, r));
        }
        if let Some(r) = rest.strip_prefix('>') {
            return Ok((name, false, r));
        }
        if !had_space {
            return Err(format!("<{name}>: attributes must be separated by spaces"));
        }
        let attr_len = rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len());
        if attr_len == 0 {
            return Err(format!("<{name}>: bad attribute at {:?}", &rest[..rest.len().min(20)]));
        }
        let attr = &rest[..attr_len];
        if seen.contains(&attr) {
            return Err(format!("<{name}>: duplicate attribute {attr}"));
        }
        seen.push(attr);
        rest = rest[attr_len..].strip_prefix('=').ok_or_else(|| format!("<{name}>: {attr} without ="))?;
        let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'').ok_or("unquoted attribute")?;
        rest = &rest[1..];
        let end = rest.find(quote).ok_or("unterminated attribute value")?;
        check_text(&rest[..end], true)?;
        rest = &rest[end + 1..];
    }
}

/// Text or attribute value: only valid XML characters, `&` only in entity references, no `<`,
/// and (as the charts escape it) no `>` either.
fn check_text(text: &str, in_attribute: bool) -> Result<(), String> {
    let mut rest = text;
    while let Some(pos) = rest.find(['&', '<', '>']) {
        let c = rest[pos..].chars().next().unwrap_or('&');
        if c != '&' {
            return Err(format!(
                "raw {c:?} in {}: {text:?}",
                if in_attribute { "attribute" } else { "text" }
            ));
        }
        let after = &rest[pos + 1..];
        let end = after.find(';').ok_or_else(|| format!("unterminated entity in {text:?}"))?;
        let entity = &after[..end];
        let known = matches!(entity, "amp" | "lt" | "gt" | "quot" | "apos");
        let numeric =
            entity.strip_prefix('#').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if !known && !numeric {
            return Err(format!("unknown entity &{entity}; in {text:?}"));
        }
        rest = &after[end + 1..];
    }
    match text.chars().find(|&c| (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r')) {
        Some(c) => Err(format!("invalid XML character {:?}", c)),
        None => Ok(()),
    }
}

/// Panics with the document when it is not well-formed.
pub(crate) fn assert_well_formed(doc: &str) {
    if let Err(e) = check_well_formed(doc) {
        panic!("not well-formed: {e}\n{doc}");
    }
}

/// Text that callers pass in tests to see that it only ever appears escaped.
pub(crate) const HOSTILE: &str = "<script>&\"'";

/// Asserts that [`HOSTILE`] never appears raw, but does appear escaped.
pub(crate) fn assert_hostile_escaped(doc: &str) {
    assert!(!doc.contains("<script"), "raw markup in {doc}");
    assert!(doc.contains("&lt;script&gt;&amp;&quot;&#39;"), "escaped text missing in {doc}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_well_formed() {
        assert!(check_well_formed("<a x=\"1\"><b/>t &amp; &#39;<c y='2'></c></a>").is_ok());
    }

    #[test]
    fn rejects_broken_documents() {
        for bad in [
            "<a>",
            "<a></b>",
            "<a><b></a></b>",
            "<a>x < y</a>",
            "<a>x & y</a>",
            "<a x=1></a>",
            "<a x=\"1\" x=\"2\"></a>",
            "<a x=\"<\"></a>",
            "<a></a><b></b>",
            "text<a></a>",
            "<a>&bogus;</a>",
            "<a>\u{1}</a>",
            "",
        ] {
            assert!(check_well_formed(bad).is_err(), "accepted {bad:?}");
        }
    }
}
