//! Tokens of the expression language, read from whitespace-stripped text.

use crate::expr::BinOp;

/// One token; positions are byte offsets into the stripped text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// A number without sign (a leading `-` is a separate token).
    Num(f64),
    /// A name, possibly `family.field`, with an optional `[N]` (value saturated, position of `[`).
    Word {
        text: String,
        index: Option<(usize, usize)>,
    },
    Bin(BinOp),
    /// `-`: binary or unary, decided by the parser.
    Minus,
    Bang,
    LParen,
    RParen,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spanned {
    pub tok: Tok,
    pub pos: usize,
}

/// A lexical error: byte position and message.
pub(crate) type LexError = (usize, String);

/// Splits stripped text into tokens.
pub(crate) fn lex(text: &str) -> Result<Vec<Spanned>, LexError> {
    let bytes = text.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        let b = bytes[i];
        let tok = if b.is_ascii_digit() {
            let (value, end) = number(text, i)?;
            i = end;
            Tok::Num(value)
        } else if b.is_ascii_alphabetic() || b == b'_' {
            let (tok, end) = word(text, i)?;
            i = end;
            tok
        } else {
            let (tok, len) = operator(text, i)?;
            i += len;
            tok
        };
        toks.push(Spanned { tok, pos: start });
    }
    Ok(toks)
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn digits_end(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    i
}

/// `digits [. digits*] [(e|E) [+|-] digits]`, read as f64; must be finite and not run into a name.
fn number(text: &str, start: usize) -> Result<(f64, usize), LexError> {
    let bytes = text.as_bytes();
    let mut i = digits_end(bytes, start);
    if bytes.get(i) == Some(&b'.') {
        i = digits_end(bytes, i + 1);
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(bytes.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if bytes.get(j).is_some_and(u8::is_ascii_digit) {
            i = digits_end(bytes, j);
        }
    }
    let literal = &text[start..i];
    if let Some(&next) = bytes.get(i) {
        if is_word_byte(next) || next == b'.' {
            let mut end = i;
            while end < bytes.len() && (is_word_byte(bytes[end]) || bytes[end] == b'.') {
                end += 1;
            }
            let bad = &text[start..end];
            return Err((i, format!("malformed number `{bad}` (numbers are decimal, as in `1.5` or `1e3`)")));
        }
    }
    match literal.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok((v, i)),
        _ => Err((start, format!("number `{literal}` is out of range"))),
    }
}

/// A name `[A-Za-z_][A-Za-z0-9_]*`, optionally `.field` and `[N]`.
fn word(text: &str, start: usize) -> Result<(Tok, usize), LexError> {
    let bytes = text.as_bytes();
    let mut i = start;
    while i < bytes.len() && is_word_byte(bytes[i]) {
        i += 1;
    }
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        while i < bytes.len() && is_word_byte(bytes[i]) {
            i += 1;
        }
    }
    let word = text[start..i].to_string();
    if bytes.get(i) != Some(&b'[') {
        return Ok((Tok::Word { text: word, index: None }, i));
    }
    let open = i;
    let end = digits_end(bytes, open + 1);
    if end == open + 1 || bytes.get(end) != Some(&b']') {
        return Err((open, format!("`[` after `{word}` must hold digits and `]`, as in `{word}[1]`")));
    }
    let n = text[open + 1..end].parse::<usize>().unwrap_or(usize::MAX);
    Ok((Tok::Word { text: word, index: Some((n, open)) }, end + 1))
}

/// One operator or parenthesis; rejects operators that are not in the language with a hint.
fn operator(text: &str, i: usize) -> Result<(Tok, usize), LexError> {
    let bytes = text.as_bytes();
    let next = bytes.get(i + 1).copied();
    let no = |op: &str, hint: &str| Err((i, format!("`{op}` is not in the language; {hint}")));
    let tok = match (bytes[i], next) {
        (b'>', Some(b'=')) => return no(">=", "write `!(a < b)`"),
        (b'<', Some(b'=')) => return no("<=", "write `!(a > b)`"),
        (b'=', Some(b'=')) => return no("==", "write `!(a < b) & !(a > b)`"),
        (b'!', Some(b'=')) => return no("!=", "write `(a < b) | (a > b)`"),
        (b'&', Some(b'&')) => return no("&&", "write `&`"),
        (b'|', Some(b'|')) => return no("||", "write `|`"),
        (b'=', _) => return no("=", "comparisons are `<` and `>` only"),
        (b'%', _) => return no("%", "there is no remainder operator"),
        (b'^', _) => return no("^", "there is no power operator; multiply"),
        (b'+', _) => Tok::Bin(BinOp::Add),
        (b'-', _) => Tok::Minus,
        (b'*', _) => Tok::Bin(BinOp::Mul),
        (b'/', _) => Tok::Bin(BinOp::Div),
        (b'<', _) => Tok::Bin(BinOp::Lt),
        (b'>', _) => Tok::Bin(BinOp::Gt),
        (b'&', _) => Tok::Bin(BinOp::And),
        (b'|', _) => Tok::Bin(BinOp::Or),
        (b'!', _) => Tok::Bang,
        (b'(', _) => Tok::LParen,
        (b')', _) => Tok::RParen,
        (b'.', Some(d)) if d.is_ascii_digit() => {
            return Err((i, "a number must start with a digit: write `0.5`, not `.5`".to_string()))
        }
        _ => {
            let c = text[i..].chars().next().unwrap_or('?');
            return Err((i, format!("unexpected character `{c}`")));
        }
    };
    Ok((tok, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<Tok> {
        lex(text).unwrap().into_iter().map(|s| s.tok).collect()
    }

    fn err(text: &str) -> LexError {
        lex(text).unwrap_err()
    }

    #[test]
    fn numbers() {
        assert_eq!(toks("1.5"), vec![Tok::Num(1.5)]);
        assert_eq!(toks("1e3"), vec![Tok::Num(1000.0)]);
        assert_eq!(toks("2E-1"), vec![Tok::Num(0.2)]);
        assert_eq!(toks("7."), vec![Tok::Num(7.0)]);
        assert_eq!(toks("1e+2*3"), vec![Tok::Num(100.0), Tok::Bin(BinOp::Mul), Tok::Num(3.0)]);
    }

    #[test]
    fn bad_numbers() {
        assert_eq!(err(".5").0, 0);
        assert!(err(".5").1.contains("`0.5`"));
        assert_eq!(err("0x10").0, 1);
        assert!(err("1.2.3").1.contains("malformed number `1.2.3`"));
        assert!(err("1e999").1.contains("out of range"));
        assert!(err("5abc").1.contains("malformed"));
    }

    #[test]
    fn words_and_indexes() {
        assert_eq!(
            toks("meminfo.MemFree[2]"),
            vec![Tok::Word { text: "meminfo.MemFree".into(), index: Some((2, 15)) }]
        );
        assert_eq!(
            toks("vmstat.pgalloc_dma32"),
            vec![Tok::Word { text: "vmstat.pgalloc_dma32".into(), index: None }]
        );
        assert_eq!(
            toks("time[99999999999999999999999]"),
            vec![Tok::Word { text: "time".into(), index: Some((usize::MAX, 4)) }]
        );
        assert_eq!(err("time[]").0, 4);
        assert_eq!(err("time[1").0, 4);
        assert!(err("time[x]").1.contains("as in `time[1]`"));
    }

    #[test]
    fn operators() {
        assert_eq!(
            toks("!-()+*/<>&|"),
            vec![
                Tok::Bang,
                Tok::Minus,
                Tok::LParen,
                Tok::RParen,
                Tok::Bin(BinOp::Add),
                Tok::Bin(BinOp::Mul),
                Tok::Bin(BinOp::Div),
                Tok::Bin(BinOp::Lt),
                Tok::Bin(BinOp::Gt),
                Tok::Bin(BinOp::And),
                Tok::Bin(BinOp::Or),
            ]
        );
    }

    #[test]
    fn rejected_operators_have_hints() {
        assert_eq!(err("a>=b"), (1, "`>=` is not in the language; write `!(a < b)`".to_string()));
        assert!(err("a<=b").1.contains("!(a > b)"));
        assert!(err("a==b").1.contains("`==`"));
        assert!(err("a!=b").1.contains("`!=`"));
        assert!(err("a&&b").1.contains("write `&`"));
        assert!(err("a||b").1.contains("write `|`"));
        assert!(err("a%b").1.contains("`%`"));
        assert!(err("a=b").1.contains("`=`"));
        assert_eq!(err("a$b"), (1, "unexpected character `$`".to_string()));
        assert_eq!(err("aé").1, "unexpected character `é`");
    }
}
