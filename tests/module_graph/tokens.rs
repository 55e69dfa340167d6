//! The tokens of a Rust source that matter for its paths (identifiers, string contents, `::`
//! and punctuation), with comments, numbers, chars and lifetimes dropped: enough for the
//! module graph to find paths and brackets without mistaking text for code.

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Ident(String),
    Str(String),
    /// `::`
    Sep,
    Punct(char),
}

/// Skips a string body starting after its opening quote; `hashes` closing `#`s for raw ones.
fn skip_string(c: &[char], mut i: usize, raw: bool, hashes: usize) -> (usize, String) {
    let start = i;
    while i < c.len() {
        if !raw && c[i] == '\\' {
            i += 2;
            continue;
        }
        if c[i] == '"' && c[i + 1..].iter().take(hashes).filter(|&&h| h == '#').count() == hashes {
            let text: String = c[start..i].iter().collect();
            return (i + 1 + hashes, text);
        }
        i += 1;
    }
    (i, c[start..].iter().collect())
}

/// Skips a char literal or a lifetime starting at its `'`.
fn skip_quote(c: &[char], i: usize) -> usize {
    if c.get(i + 1) == Some(&'\\') {
        let mut j = i + 3;
        while j < c.len() && c[j] != '\'' {
            j += 1;
        }
        return j + 1;
    }
    if c.get(i + 2) == Some(&'\'') {
        return i + 3;
    }
    let mut j = i + 1;
    while j < c.len() && (c[j].is_alphanumeric() || c[j] == '_') {
        j += 1;
    }
    j
}

/// Skips a comment starting at `/`; None when it is not one.
fn skip_comment(c: &[char], i: usize) -> Option<usize> {
    match c.get(i + 1) {
        Some('/') => Some(c[i..].iter().position(|&x| x == '\n').map_or(c.len(), |n| i + n)),
        Some('*') => {
            let (mut j, mut depth) = (i + 2, 1);
            while j < c.len() && depth > 0 {
                if c[j] == '/' && c.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 1;
                } else if c[j] == '*' && c.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 1;
                }
                j += 1;
            }
            Some(j)
        }
        _ => None,
    }
}

/// The tokens of a source that matter for paths: identifiers, string contents, `::` and
/// single punctuation; comments, numbers, chars and lifetimes are dropped.
pub fn tokens(src: &str) -> Vec<Tok> {
    let c: Vec<char> = src.chars().collect();
    let (mut out, mut i) = (Vec::new(), 0);
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && skip_comment(&c, i).is_some() {
            i = skip_comment(&c, i).unwrap_or(c.len());
        } else if ch == '"' {
            let (next, text) = skip_string(&c, i + 1, false, 0);
            out.push(Tok::Str(text));
            i = next;
        } else if ch == '\'' {
            i = skip_quote(&c, i);
        } else if ch.is_ascii_digit() {
            while i < c.len()
                && (c[i].is_alphanumeric()
                    || c[i] == '_'
                    || (c[i] == '.' && c.get(i + 1).is_some_and(|d| d.is_ascii_digit())))
            {
                i += 1;
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            i = literal_after_prefix(&c, i, &word, &mut out);
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push(Tok::Sep);
            i += 2;
        } else {
            out.push(Tok::Punct(ch));
            i += 1;
        }
    }
    out
}

/// After a word: `r"…"`, `r#"…"#`, `b"…"`, `br"…"` and `b'…'` are literals, anything else
/// an identifier. Returns where to go on.
fn literal_after_prefix(c: &[char], i: usize, word: &str, out: &mut Vec<Tok>) -> usize {
    let raw = word == "r" || word == "br";
    if raw || word == "b" {
        let hashes = c[i..].iter().take_while(|&&h| h == '#').count();
        if c.get(i + hashes) == Some(&'"') && (raw || hashes == 0) {
            let (next, text) = skip_string(c, i + hashes + 1, raw, hashes);
            out.push(Tok::Str(text));
            return next;
        }
        if word == "b" && c.get(i) == Some(&'\'') {
            return skip_quote(c, i);
        }
    }
    out.push(Tok::Ident(word.to_string()));
    i
}

#[test]
fn literals_comments_and_lifetimes_hide_what_they_hold() {
    let src = r####"let a = r#"crate::x { "#; let b = '{'; let c = '\''; let d = b'}';
fn f<'a>(x: &'a str) { /* crate::y /* nested */ } */ }
let e = b"crate::z"; // crate::v
let g = 1.5e3 + x.0; crate::w"####;
    let t = tokens(src);
    let crates = t.iter().filter(|k| **k == Tok::Ident("crate".into())).count();
    assert_eq!(crates, 1, "{t:?}");
    assert_eq!(t[t.len() - 3..], [Tok::Ident("crate".into()), Tok::Sep, Tok::Ident("w".into())]);
    let open = t.iter().filter(|k| **k == Tok::Punct('{')).count();
    let close = t.iter().filter(|k| **k == Tok::Punct('}')).count();
    assert_eq!((open, close), (1, 1), "{t:?}");
    assert!(t.contains(&Tok::Str("crate::x { ".into())) && t.contains(&Tok::Str("crate::z".into())));
}
