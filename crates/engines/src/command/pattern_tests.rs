//! Tests of the pattern matcher: a table of spans per feature, patterns that would backtrack
//! catastrophically, long inputs, and property tests against `str::find`.

use super::*;
use proptest::prelude::*;

fn caps(pattern: &str, text: &str) -> Option<Captures> {
    Pattern::new(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}")).captures_at(text, 0)
}

type Span = Option<(usize, usize)>;
const N: Span = None;
const fn s(a: usize, b: usize) -> Span {
    Some((a, b))
}

/// (pattern, text, spans of group 0 and each group; empty when nothing matches).
const CASES: &[(&str, &str, &[Span])] = &[
    // literals, dot, Unicode text
    ("abc", "xxabcx", &[s(2, 5)]),
    ("abc", "ab", &[]),
    ("a.c", "abc", &[s(0, 3)]),
    (".", "\n", &[]),
    ("(?s).", "\n", &[s(0, 1)]),
    ("é", "café", &[s(3, 5)]),
    (".", "é", &[s(0, 2)]),
    ("", "abc", &[s(0, 0)]),
    // classes
    ("[0-9]+", "ab123c", &[s(2, 5)]),
    ("[^a-z]+", "abC1d", &[s(2, 4)]),
    (r"\d+\.\d+", "v 3.14 s", &[s(2, 6)]),
    (r"\w+", "  héllo!", &[s(2, 8)]),
    (r"\s+", "a \t\nb", &[s(1, 4)]),
    (r"[[:alpha:]]+", "12ab3", &[s(2, 4)]),
    (r"[\x{1F600}-\x{1F64F}]", "hi 😀!", &[s(3, 7)]),
    ("(?-u:[a-c]+)", "xxbcaé", &[s(2, 5)]),
    // anchors, single- and multi-line
    ("^abc", "abcabc", &[s(0, 3)]),
    ("^abc", "xabc", &[]),
    ("abc$", "abcabc", &[s(3, 6)]),
    ("^b", "a\nb", &[]),
    ("a$", "a\nb", &[]),
    ("(?m)^b", "a\nb", &[s(2, 3)]),
    ("(?m)a$", "a\nb", &[s(0, 1)]),
    ("(?m)^$", "a\n\nb", &[s(2, 2)]),
    ("^$", "", &[s(0, 0)]),
    ("(?mR)^b", "a\r\nb", &[s(3, 4)]),
    ("(?mR)a$", "a\r\nb", &[s(0, 1)]),
    // word boundaries
    (r"\bcat\b", "concat cat", &[s(7, 10)]),
    (r"\Bcat", "concat cat", &[s(3, 6)]),
    (r"\bé", "aé é", &[s(4, 6)]),
    (r"\bx", "éx x", &[s(4, 5)]),
    (r"(?-u:\b)x", "éx", &[s(2, 3)]),
    (r"\<ab", "cab ab", &[s(4, 6)]),
    (r"ab\>", "abc ab", &[s(4, 6)]),
    // repetition, greedy and lazy
    ("a*", "aaab", &[s(0, 3)]),
    ("a*?", "aaab", &[s(0, 0)]),
    ("a+?", "aaab", &[s(0, 1)]),
    ("a?b", "xab", &[s(1, 3)]),
    ("a??b", "ab", &[s(0, 2)]),
    ("a{2,3}", "aaaa", &[s(0, 3)]),
    ("a{2,3}?", "aaaa", &[s(0, 2)]),
    ("a{2}", "a aa", &[s(2, 4)]),
    ("a{2,}", "aaaaa", &[s(0, 5)]),
    ("<(.+?)>", "<a><b>", &[s(0, 3), s(1, 2)]),
    ("<(.+)>", "<a><b>", &[s(0, 6), s(1, 5)]),
    ("(a{0,2})(a*)", "aaa", &[s(0, 3), s(0, 2), s(2, 3)]),
    (r"(?:\d+,)*\d+", "12,345,6 ", &[s(0, 8)]),
    ("(a*)*", "b", &[s(0, 0), s(0, 0)]),
    ("(a*)+", "b", &[s(0, 0), s(0, 0)]),
    ("(a|b)*", "abc", &[s(0, 2), s(1, 2)]),
    ("(?:|a)*b", "aab", &[s(0, 3)]),
    // alternation and groups
    ("foo|foobar", "foobar", &[s(0, 3)]),
    ("(a|ab)(c|bcd)", "abcd", &[s(0, 4), s(0, 1), s(1, 4)]),
    ("(a+)(b+)?", "aac", &[s(0, 2), s(0, 2), N]),
    ("(a)|b", "b", &[s(0, 1), N]),
    ("x(?:ab|a)(b?)", "xab", &[s(0, 3), s(3, 3)]),
    ("(?:a|b)+c", "xabac", &[s(1, 5)]),
    (r"(?P<n>\d+)x", "12x", &[s(0, 3), s(0, 2)]),
    ("(a)(?:b)(c)", "abc", &[s(0, 3), s(0, 1), s(2, 3)]),
    (r"(\d+)-(\d+)?", "1-x", &[s(0, 2), s(0, 1), N]),
    // case-insensitive
    ("(?i)hello", "say HeLLo", &[s(4, 9)]),
    ("(?i)é", "É", &[s(0, 2)]),
    ("(?i:a)b", "AB Ab", &[s(3, 5)]),
    ("(?i)k", "\u{212A}", &[s(0, 3)]),
];

#[test]
fn table() {
    for (pattern, text, want) in CASES {
        let got = caps(pattern, text).unwrap_or_default();
        assert_eq!(got, *want, "/{pattern}/ on {text:?}");
    }
}

#[test]
fn groups_and_errors() {
    assert_eq!(Pattern::new("(a)(?:b)(?P<x>c)").unwrap().groups(), 2);
    assert_eq!(Pattern::new("abc").unwrap().groups(), 0);
    assert!(Pattern::new("(ab").unwrap_err().contains("unclosed group"));
    assert!(Pattern::new("a{2,1}").is_err());
    assert!(Pattern::new("[z-a]").is_err());
    let deep = format!("{}a{}", "(".repeat(100), ")".repeat(100));
    assert!(Pattern::new(&deep).unwrap_err().contains("nest"));
    assert!(Pattern::new("(?:a{1000}){1000}").unwrap_err().contains("too large"));
    assert_eq!(Pattern::new("x+").unwrap().as_str(), "x+");
}

#[test]
fn captures_at_honours_from() {
    let p = Pattern::new("a").unwrap();
    assert_eq!(p.captures_at("aXa", 1), Some(vec![s(2, 3)]));
    assert_eq!(p.captures_at("aXa", 4), None);
    assert_eq!(Pattern::new(".").unwrap().captures_at("é", 1), None);
    assert_eq!(Pattern::new("^a").unwrap().captures_at("aa", 1), None);
    assert_eq!(Pattern::new(r"\bb").unwrap().captures_at("ab b", 1), Some(vec![s(3, 4)]));
}

#[test]
fn last_value_takes_the_last_match() {
    fn last<'t>(p: &str, t: &'t str) -> Option<&'t str> {
        Pattern::new(p).unwrap().last_value(t).ok()
    }
    assert_eq!(last("score: ([0-9.]+)", "score: 1\nscore: 2.5\ndone"), Some("2.5"));
    assert_eq!(last("[0-9]+", "a1b22c333d"), Some("333"));
    assert_eq!(last(r"(\d)\d", "1234"), Some("3"));
    assert_eq!(last("aa", "aaa"), Some("aa"));
    assert_eq!(last("(a)|b", "ab"), Some("a"));
    assert_eq!(last("x*", "ab"), Some(""));
    assert_eq!(last("(?m)^ops=(\\d+)$", "ops=1\nops=22\nops=x"), Some("22"));
    assert_eq!(last("z", "abc"), None);
    assert_eq!(last("é+", "éé-é"), Some("é"));
}

#[test]
fn the_value_is_the_named_group_else_the_first_group_that_took_part() {
    fn last<'t>(p: &str, t: &'t str) -> Result<&'t str, NoValue> {
        Pattern::new(p).unwrap().last_value(t)
    }
    // Issue 46: the first group takes no part, the second holds the figure.
    assert_eq!(last(r"(a|b)*score: (\d+)", "score: 42"), Ok("42"));
    assert_eq!(last(r"(x)?=(\d+)", "=1 x=2 =3"), Ok("3"));
    // A group named `value` wins over earlier groups, in either syntax.
    assert_eq!(last(r"(\w+): (?P<value>\d+)", "ops: 12"), Ok("12"));
    assert_eq!(last(r"(\w+): (?<value>\d+)", "ops: 12"), Ok("12"));
    // The last match that has the value, as before.
    assert_eq!(last(r"n=(?P<value>\d+)?;", "n=5; n=;"), Ok("5"));
    let empty = |matched: &str, empty: &str| {
        Err(NoValue::EmptyGroup { matched: matched.to_string(), empty: empty.to_string() })
    };
    assert_eq!(last(r"n=(?P<value>\d+)?;", "n=;"), empty("n=;", "its group `value` took part in no match"));
    assert_eq!(last(r"total(\d+)?", "total"), empty("total", "its group 1 took part in no match"));
    assert_eq!(last(r"t(a)?(b)?", "t t"), empty("t", "none of its groups 1 to 2 took part in any match"));
    assert_eq!(last(r"(a)", "zzz"), Err(NoValue::NoMatch));
}

#[test]
fn catastrophic_patterns_match_in_linear_time() {
    let text = "a".repeat(30);
    assert_eq!(Pattern::new("(a*)*b").unwrap().last_value(&text), Err(NoValue::NoMatch));
    let text = format!("{}z xy", "x".repeat(40));
    assert_eq!(Pattern::new("(x+x+)+y$").unwrap().captures_at(&text, 0), None);
    // The case from issue 26: a backtracker gave up on it after 11.9 million steps.
    let mut output = String::new();
    while output.len() < 30_000 {
        output.push_str("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa progress line, still going\n");
    }
    output.push_str("aaaascore: 12.75\n");
    let t0 = std::time::Instant::now();
    let p = Pattern::new(r"(a|a)*score: ([\d.]+)").unwrap();
    assert_eq!(p.captures_at(&output, 0).unwrap()[2].map(|(s, e)| &output[s..e]), Some("12.75"));
    assert_eq!(p.last_value(&output), Ok("a"), "group 1 took part, so it is the value");
    let elapsed = t0.elapsed();
    assert!(elapsed < std::time::Duration::from_secs(1), "took {elapsed:?}");
}

#[test]
fn long_inputs_do_not_overflow_the_stack() {
    let digits = "7".repeat(1 << 20);
    let p = Pattern::new(r"\d+").unwrap();
    assert_eq!(p.last_value(&digits).map(str::len), Ok(1 << 20));
    let text = format!("x{}", "ab".repeat(200_000));
    let p = Pattern::new("(ab)*$").unwrap();
    assert_eq!(p.captures_at(&text, 0).unwrap()[1], s(text.len() - 2, text.len()));
}

proptest! {
    #[test]
    fn escaped_literal_found_like_str_find(needle in "[ab.é*]{0,4}", hay in "[ab.é*]{0,40}") {
        let p = Pattern::new(&regex::escape(&needle)).unwrap();
        let want = hay.find(&needle).map(|i| (i, i + needle.len()));
        let got = p.captures_at(&hay, 0).map(|c| c[0].unwrap());
        prop_assert_eq!(got, want);
    }

    #[test]
    fn embedded_literal_is_the_last_value(pre in ".{0,20}", needle in ".{1,8}", post in "[^\n]{0,20}") {
        let hay = format!("{pre}{needle}{post}");
        let p = Pattern::new(&regex::escape(&needle)).unwrap();
        let got = p.last_value(&hay);
        prop_assert_eq!(got, Ok(needle.as_str()));
    }

    #[test]
    fn arbitrary_patterns_never_panic(pattern in any::<String>(), text in any::<String>()) {
        if let Ok(p) = Pattern::new(&pattern) {
            let _ = p.last_value(&text);
        }
    }

    #[test]
    fn regex_like_patterns_never_panic(pattern in r"[ab()|*+?{}0-9,\[\]^$.\\dwsbBm:?-]{0,14}", text in "[ab0-9 \n.é]{0,40}") {
        if let Ok(p) = Pattern::new(&pattern) {
            if let Ok(v) = p.last_value(&text) {
                prop_assert!(text.contains(v));
            }
            let _ = p.captures_at(&text, text.len() / 2);
        }
    }
}
