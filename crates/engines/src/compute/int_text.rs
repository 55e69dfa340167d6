//! Integer kernels on text: regular expressions (a backtracking matcher of `^ $ . c*` as in
//! grep's simple cases), parsing (a recursive-descent expression evaluator, a compiler's
//! front end) and sequence alignment (edit distance by dynamic programming, as in
//! bioinformatics). Checksums are reproduced by the C versions.

use super::common::{check, check_eq, fold};
use crate::support::rng::SplitMix64;
use std::hint::black_box;

pub const REGEX_PATTERNS: &[&[u8]] = &[b"ab.*cd", b"^fa.*c", b"b.c.d", b"a*bc*de", b"hg.*fe.*a$", b"e.e.e"];
pub const REGEX_LINES: usize = 20_000;
pub const REGEX_LINE_LEN: usize = 60;

/// Kernighan and Pike's matcher (The Practice of Programming, ch. 9): does `re` match
/// anywhere in `text`?
pub fn re_match(re: &[u8], text: &[u8]) -> bool {
    if let Some(rest) = re.strip_prefix(b"^") {
        return match_here(rest, text);
    }
    (0..=text.len()).any(|i| match_here(re, &text[i..]))
}

fn match_here(re: &[u8], text: &[u8]) -> bool {
    match re {
        [] => true,
        [c, b'*', rest @ ..] => match_star(*c, rest, text),
        [b'$'] => text.is_empty(),
        [c, rest @ ..] if !text.is_empty() && (*c == b'.' || *c == text[0]) => match_here(rest, &text[1..]),
        _ => false,
    }
}

fn match_star(c: u8, re: &[u8], text: &[u8]) -> bool {
    let mut i = 0;
    loop {
        if match_here(re, &text[i..]) {
            return true;
        }
        if i < text.len() && (text[i] == c || c == b'.') {
            i += 1;
        } else {
            return false;
        }
    }
}

/// The same language by dynamic programming over (pattern position, text position), an
/// independent algorithm for the self-check.
pub fn re_match_dp(re: &[u8], text: &[u8]) -> bool {
    let (anchored, re) = match re.strip_prefix(b"^") {
        Some(r) => (true, r),
        None => (false, re),
    };
    let (end, re) = match re.strip_suffix(b"$") {
        Some(r) => (true, r),
        None => (false, re),
    };
    // Tokens: (char, starred).
    let mut toks = Vec::new();
    let mut k = 0;
    while k < re.len() {
        let star = re.get(k + 1) == Some(&b'*');
        toks.push((re[k], star));
        k += if star { 2 } else { 1 };
    }
    let n = text.len();
    // reach[j]: after the tokens so far, the match can end at text position j.
    let mut reach: Vec<bool> = (0..=n).map(|j| !anchored || j == 0).collect();
    for (c, star) in toks {
        let ok = |j: usize| c == b'.' || text[j] == c;
        let mut next = vec![false; n + 1];
        for j in 0..=n {
            if star && (reach[j] || (j > 0 && next[j - 1] && ok(j - 1))) {
                next[j] = true;
            }
            if !star && j > 0 && reach[j - 1] && ok(j - 1) {
                next[j] = true;
            }
        }
        reach = next;
    }
    if end {
        reach[n]
    } else {
        reach.iter().any(|r| *r)
    }
}

/// 20,000 lines of 60 letters a–h per repetition, six patterns; checksum = matches.
pub fn regex(reps: u64) -> Result<u64, String> {
    let mut acc = 0;
    let mut text = vec![0u8; REGEX_LINES * REGEX_LINE_LEN];
    for rep in 0..reps {
        let mut r = SplitMix64::new(rep ^ 0x5245);
        text.iter_mut().for_each(|c| *c = b'a' + r.below_mod(8) as u8);
        let mut matches = 0u64;
        for (p, re) in REGEX_PATTERNS.iter().enumerate() {
            let mut m = 0u64;
            let mut dp = 0u64;
            for line in text.chunks(REGEX_LINE_LEN) {
                m += u64::from(re_match(black_box(re), line));
                if rep == 0 {
                    dp += u64::from(re_match_dp(re, line));
                }
            }
            if rep == 0 {
                check_eq("regex", &format!("matches of pattern {p} (by dynamic programming)"), m, dp)?;
            }
            matches = matches.wrapping_mul(1_000_003).wrapping_add(m);
        }
        acc = fold(acc, matches);
    }
    Ok(acc)
}

/// Generates `expr := term (± term)*`, `term := factor (* factor)*`,
/// `factor := number | ( expr )` as text and returns its value (wrapping u32).
struct Gen<'a> {
    r: SplitMix64,
    out: &'a mut Vec<u8>,
}

impl Gen<'_> {
    fn expr(&mut self, depth: u32) -> u32 {
        let mut v = self.term(depth);
        for _ in 0..self.r.below_mod(3) {
            let plus = self.r.below_mod(2) == 0;
            self.out.extend_from_slice(if plus { b" + " } else { b" - " });
            let t = self.term(depth);
            v = if plus { v.wrapping_add(t) } else { v.wrapping_sub(t) };
        }
        v
    }
    fn term(&mut self, depth: u32) -> u32 {
        let mut v = self.factor(depth);
        for _ in 0..self.r.below_mod(3) {
            self.out.extend_from_slice(b" * ");
            v = v.wrapping_mul(self.factor(depth));
        }
        v
    }
    fn factor(&mut self, depth: u32) -> u32 {
        if depth == 0 || self.r.below_mod(3) != 0 {
            let n = self.r.below_mod(10_000) as u32;
            self.out.extend_from_slice(n.to_string().as_bytes());
            n
        } else {
            self.out.push(b'(');
            let v = self.expr(depth - 1);
            self.out.push(b')');
            v
        }
    }
}

/// A recursive-descent evaluator of the generated language.
pub struct Parser<'a> {
    s: &'a [u8],
    pub pos: usize,
}

impl<'a> Parser<'a> {
    pub fn new(s: &'a [u8]) -> Self {
        Parser { s, pos: 0 }
    }
    fn skip(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos] == b' ' {
            self.pos += 1;
        }
    }
    fn peek(&mut self) -> u8 {
        self.skip();
        self.s.get(self.pos).copied().unwrap_or(0)
    }
    pub fn expr(&mut self) -> u32 {
        let mut v = self.term();
        loop {
            match self.peek() {
                b'+' => {
                    self.pos += 1;
                    v = v.wrapping_add(self.term());
                }
                b'-' => {
                    self.pos += 1;
                    v = v.wrapping_sub(self.term());
                }
                _ => return v,
            }
        }
    }
    fn term(&mut self) -> u32 {
        let mut v = self.factor();
        while self.peek() == b'*' {
            self.pos += 1;
            v = v.wrapping_mul(self.factor());
        }
        v
    }
    fn factor(&mut self) -> u32 {
        if self.peek() == b'(' {
            self.pos += 1;
            let v = self.expr();
            if self.peek() == b')' {
                self.pos += 1;
            }
            return v;
        }
        let mut v = 0u32;
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_digit() {
            v = v.wrapping_mul(10).wrapping_add(u32::from(self.s[self.pos] - b'0'));
            self.pos += 1;
        }
        v
    }
}

pub const PARSE_EXPRS: usize = 20_000;

/// 20,000 generated expressions (depth ≤ 6) per repetition, separated by `;`, parsed and
/// evaluated; checksum = Σ values, each checked against the generator's.
pub fn parse(reps: u64) -> Result<u64, String> {
    let mut acc = 0;
    let mut text = Vec::new();
    let mut want = Vec::with_capacity(PARSE_EXPRS);
    for rep in 0..reps {
        text.clear();
        want.clear();
        let mut g = Gen { r: SplitMix64::new(rep ^ 0x5041), out: &mut text };
        for _ in 0..PARSE_EXPRS {
            want.push(g.expr(6));
            g.out.push(b';');
        }
        let mut p = Parser::new(black_box(&text));
        let mut sum = 0u64;
        for (i, w) in want.iter().enumerate() {
            let v = p.expr();
            check("parse", "every expression ends at ';'", p.peek() == b';')?;
            p.pos += 1;
            check_eq("parse", &format!("value of expression {i}"), u64::from(v), u64::from(*w))?;
            sum = sum.wrapping_add(u64::from(v));
        }
        acc = fold(acc, sum ^ text.len() as u64);
    }
    Ok(acc)
}

pub const ALIGN_LEN: usize = 2_000;

/// Edit distance (unit costs) with two rows.
pub fn edit_distance(a: &[u8], b: &[u8]) -> u32 {
    let mut prev: Vec<u32> = (0..=b.len() as u32).collect();
    let mut cur = vec![0u32; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i as u32 + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + u32::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// A random DNA string and a mutated copy (10% substitutions, insertions or deletions).
pub fn align_pair(r: &mut SplitMix64) -> (Vec<u8>, Vec<u8>) {
    const ACGT: &[u8; 4] = b"ACGT";
    let a: Vec<u8> = (0..ALIGN_LEN).map(|_| ACGT[r.below_mod(4) as usize]).collect();
    let mut b = Vec::with_capacity(ALIGN_LEN + 64);
    for c in &a {
        match r.below_mod(30) {
            0 => b.push(ACGT[r.below_mod(4) as usize]),
            1 => {}
            2 => b.extend_from_slice(&[*c, ACGT[r.below_mod(4) as usize]]),
            _ => b.push(*c),
        }
    }
    (a, b)
}

/// One alignment of two 2,000-base sequences per repetition; checksum = Σ distances.
pub fn align(reps: u64) -> Result<u64, String> {
    let mut acc = 0;
    for rep in 0..reps {
        let mut r = SplitMix64::new(rep ^ 0x414C);
        let (a, b) = align_pair(&mut r);
        let d = edit_distance(black_box(&a), black_box(&b));
        if rep == 0 {
            check_eq("align", "d(a,b) = d(b,a)", u64::from(d), u64::from(edit_distance(&b, &a)))?;
        }
        let diff = a.len().abs_diff(b.len()) as u32;
        check("align", "|len a − len b| ≤ d ≤ max len", diff <= d && d as usize <= a.len().max(b.len()))?;
        acc = fold(acc, u64::from(d));
    }
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers_agree_on_known_cases() {
        for (re, t, want) in [
            (&b"ab.*cd"[..], &b"xxabyycdz"[..], true),
            (b"^fa.*c", b"xfac", false),
            (b"^fa.*c", b"fabbc", true),
            (b"a*bc*de", b"bde", true),
            (b"hg.*fe.*a$", b"hgxfexa", true),
            (b"hg.*fe.*a$", b"hgxfexab", false),
            (b"e.e.e", b"eaebe", true),
            (b"b.c.d", b"bcd", false),
        ] {
            assert_eq!(re_match(re, t), want, "{}", String::from_utf8_lossy(re));
            assert_eq!(re_match_dp(re, t), want, "dp {}", String::from_utf8_lossy(re));
        }
    }

    #[test]
    fn parser_honours_precedence() {
        assert_eq!(Parser::new(b"2 + 3 * (4 - 1)").expr(), 11);
        assert_eq!(Parser::new(b"1 - 2").expr(), u32::MAX);
    }

    #[test]
    fn edit_distance_known_values() {
        assert_eq!(edit_distance(b"kitten", b"sitting"), 3);
        assert_eq!(edit_distance(b"", b"abc"), 3);
        assert_eq!(edit_distance(b"flaw", b"lawn"), 2);
    }

    #[test]
    fn kernels_check_themselves() {
        assert!(regex(1).is_ok());
        assert!(parse(2).is_ok());
        assert!(align(2).is_ok());
    }
}
