//! Getting the figure out of a program's output: the last match of a regular expression, or the
//! value at a JSON path.

use super::pattern::{NoValue, Pattern, VALUE_GROUP};
use crate::bounded_output;
use serde_json::{Map, Value};
use std::fmt;

/// Where the figure is in the program's output.
#[derive(Debug, Clone)]
pub enum Extractor {
    Regex(Pattern),
    JsonPath(JsonPath),
}

impl Extractor {
    /// The figure in `output`: for Regex the last match's group (see [`Pattern::last_value`])
    /// parsed by [`parse_number`]; for JsonPath, the output parsed as JSON (when the whole output
    /// is not JSON, the last line that is a JSON value on its own), then the value at the path,
    /// which must be a number or a string holding one.
    pub fn extract(&self, output: &str) -> Result<f64, String> {
        match self {
            Extractor::Regex(pattern) => {
                let src = pattern.as_str();
                let text = pattern.last_value(output).map_err(|e| match e {
                    NoValue::NoMatch => format!("no match for /{src}/ in the output"),
                    NoValue::EmptyGroup { matched, empty } => format!(
                        "/{src}/ matched {:?}, but {empty}; name the group that holds the figure \
                         (?P<{VALUE_GROUP}>…), or make the others non-capturing (?:…)",
                        bounded_output(&matched)
                    ),
                })?;
                parse_number(text).map_err(|e| format!("/{src}/ matched {:?}, {e}", bounded_output(text)))
            }
            Extractor::JsonPath(path) => path.number(&parse_json_output(output)?),
        }
    }

    /// What the extractor looks for: "regex /…/" or "json $.a.b".
    pub fn describe(&self) -> String {
        match self {
            Extractor::Regex(pattern) => format!("regex /{}/", pattern.as_str()),
            Extractor::JsonPath(path) => format!("json {path}"),
        }
    }
}

/// Parses a figure: an optional sign (`+` is fine), digits with `,` or `_` allowed between two
/// digits of the integer part ("12,345.6"), an optional fraction and exponent. NaN and the
/// infinities are refused, as are values too large for an f64.
pub fn parse_number(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let chars: Vec<char> = trimmed.chars().collect();
    let mut clean = String::with_capacity(trimmed.len());
    let mut integer_part = true;
    for (i, &c) in chars.iter().enumerate() {
        let digit_at = |j: Option<usize>| j.and_then(|j| chars.get(j)).is_some_and(char::is_ascii_digit);
        match c {
            '0'..='9' | '+' | '-' => clean.push(c),
            '.' | 'e' | 'E' => {
                integer_part = false;
                clean.push(c);
            }
            ',' | '_' if integer_part && digit_at(i.checked_sub(1)) && digit_at(Some(i + 1)) => {}
            _ => return Err(format!("which is not a number ({c:?} is out of place)")),
        }
    }
    if !clean.bytes().any(|b| b.is_ascii_digit()) {
        return Err("which is not a number (no digits)".to_string());
    }
    match clean.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err("which is too large for a number".to_string()),
        Err(_) => Err("which is not a number".to_string()),
    }
}

/// The output as JSON: all of it, or else its last line that is a JSON value on its own.
fn parse_json_output(output: &str) -> Result<Value, String> {
    if output.trim().is_empty() {
        return Err("the output is empty, expected JSON".to_string());
    }
    serde_json::from_str(output).or_else(|whole| {
        output
            .lines()
            .rev()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .find_map(|line| serde_json::from_str(line).ok())
            .ok_or_else(|| format!("the output is not JSON ({whole}), nor is any line of it"))
    })
}

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// An object member.
    Key(String),
    /// An array element; negative counts from the end (-1 is the last).
    Index(i64),
}

/// A path into a JSON document: `$` (optional), then `.name`, `["name"]`, `['name']` or `[N]`
/// steps; a leading name needs no dot (`results[0].score`), and `[-1]` is the last element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPath {
    steps: Vec<Step>,
}

impl JsonPath {
    /// Parses a path; the error says what is wrong and at which byte offset.
    pub fn new(src: &str) -> Result<JsonPath, String> {
        let src = src.trim();
        if src.is_empty() {
            return Err("empty JSON path (use $ for the whole document)".to_string());
        }
        let mut p = PathParser { src, pos: 0 };
        let mut steps = Vec::new();
        if !p.eat('$') && !src.starts_with(['.', '[']) {
            steps.push(Step::Key(p.name()?));
        }
        while let Some(c) = p.peek() {
            let step = match c {
                '.' | '[' => {
                    p.pos += 1;
                    if c == '.' {
                        Step::Key(p.name()?)
                    } else {
                        p.bracket()?
                    }
                }
                _ => return Err(p.error("expected '.' or '['")),
            };
            steps.push(step);
        }
        Ok(JsonPath { steps })
    }

    /// The value the path leads to in `doc`.
    pub fn lookup<'v>(&self, doc: &'v Value) -> Result<&'v Value, String> {
        let mut value = doc;
        for (i, step) in self.steps.iter().enumerate() {
            value = match (step, value) {
                (Step::Key(key), Value::Object(map)) => map
                    .get(key)
                    .ok_or_else(|| format!("{self}: key '{key}' not found (keys: {})", key_list(map)))?,
                (Step::Index(n), Value::Array(items)) => {
                    let at = if *n < 0 { i64::try_from(items.len()).unwrap_or(i64::MAX) + n } else { *n };
                    usize::try_from(at).ok().and_then(|at| items.get(at)).ok_or_else(|| {
                        format!("{self}: index {n} out of range (the array has {} elements)", items.len())
                    })?
                }
                (step, other) => {
                    let want = if matches!(step, Step::Key(_)) { "an object" } else { "an array" };
                    let at = fmt_steps(&self.steps[..i]);
                    return Err(format!("{self}: {at} is {}, not {want}", kind(other)));
                }
            };
        }
        Ok(value)
    }

    /// The number at the path in `doc`: a JSON number, or a string holding one.
    pub fn number(&self, doc: &Value) -> Result<f64, String> {
        match self.lookup(doc)? {
            Value::Number(n) => {
                n.as_f64().filter(|v| v.is_finite()).ok_or_else(|| format!("{self}: {n} is out of range"))
            }
            Value::String(s) => parse_number(s).map_err(|e| format!("{self}: the value is {s:?}, {e}")),
            other => Err(format!("{self}: the value is {}, not a number", kind(other))),
        }
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&fmt_steps(&self.steps))
    }
}

/// Steps in canonical form: `$`, then `.name` for plain names, `["…"]` for others, `[N]`.
fn fmt_steps(steps: &[Step]) -> String {
    let mut out = String::from("$");
    for step in steps {
        match step {
            Step::Key(k) if !k.is_empty() && k.chars().all(is_name_char) => {
                out.push('.');
                out.push_str(k);
            }
            Step::Key(k) => {
                let escaped = k.replace('\\', "\\\\").replace('"', "\\\"");
                out.push_str(&format!("[\"{escaped}\"]"));
            }
            Step::Index(n) => out.push_str(&format!("[{n}]")),
        }
    }
    out
}

/// Characters a key may use after a dot without brackets.
fn is_name_char(c: char) -> bool {
    !c.is_whitespace() && !c.is_control() && !matches!(c, '.' | '[' | ']' | '"' | '\'' | '$')
}

/// What kind of JSON value this is, for messages.
fn kind(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("a boolean ({b})"),
        Value::Number(n) => format!("a number ({n})"),
        Value::String(_) => "a string".to_string(),
        Value::Array(a) => format!("an array of {}", a.len()),
        Value::Object(_) => "an object".to_string(),
    }
}

/// An object's keys for messages, at most ten of them.
fn key_list(map: &Map<String, Value>) -> String {
    if map.is_empty() {
        return "none, the object is empty".to_string();
    }
    let mut list = map.keys().take(10).map(String::as_str).collect::<Vec<_>>().join(", ");
    if map.len() > 10 {
        list.push_str(&format!(", … {} more", map.len() - 10));
    }
    list
}

/// A cursor over a JSON path's text.
struct PathParser<'s> {
    src: &'s str,
    pos: usize,
}

impl PathParser<'_> {
    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn eat(&mut self, c: char) -> bool {
        let hit = self.peek() == Some(c);
        if hit {
            self.pos += c.len_utf8();
        }
        hit
    }

    fn error(&self, what: &str) -> String {
        format!("{what} at offset {} of JSON path {:?}", self.pos, self.src)
    }

    /// A bare key name: one or more name characters.
    fn name(&mut self) -> Result<String, String> {
        let rest = &self.src[self.pos..];
        let len = rest.find(|c| !is_name_char(c)).unwrap_or(rest.len());
        if len == 0 {
            return Err(self.error("expected a key name"));
        }
        self.pos += len;
        Ok(rest[..len].to_string())
    }

    /// What follows a '[': a quoted key or an index, then ']'.
    fn bracket(&mut self) -> Result<Step, String> {
        let step = match self.peek() {
            Some(q @ ('"' | '\'')) => {
                self.pos += 1;
                Step::Key(self.quoted(q)?)
            }
            _ => Step::Index(self.index()?),
        };
        if !self.eat(']') {
            return Err(self.error("expected ']'"));
        }
        Ok(step)
    }

    /// The rest of a string quoted with `q`; a backslash takes the next char as it is.
    fn quoted(&mut self, q: char) -> Result<String, String> {
        let mut out = String::new();
        let mut chars = self.src[self.pos..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some((_, escaped)) => out.push(escaped),
                    None => break,
                },
                _ if c == q => {
                    self.pos += i + 1;
                    return Ok(out);
                }
                _ => out.push(c),
            }
        }
        Err(self.error("unterminated quoted key"))
    }

    /// An array index: digits, or '-' and digits counting from the end.
    fn index(&mut self) -> Result<i64, String> {
        let negative = self.eat('-');
        let rest = &self.src[self.pos..];
        let len = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if len == 0 {
            return Err(self.error("expected an array index or a quoted key"));
        }
        let n: i64 = rest[..len].parse().map_err(|_| self.error("array index too large"))?;
        if negative && n == 0 {
            return Err(self.error("index -0 means nothing; the last element is -1"));
        }
        self.pos += len;
        Ok(if negative { -n } else { n })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn regex(p: &str) -> Extractor {
        Extractor::Regex(Pattern::new(p).unwrap())
    }

    fn json_path(p: &str) -> Extractor {
        Extractor::JsonPath(JsonPath::new(p).unwrap_or_else(|e| panic!("{p}: {e}")))
    }

    #[test]
    fn numbers() {
        let good = [
            ("42", 42.0),
            ("+3.5", 3.5),
            ("-1e3", -1000.0),
            ("2.5E-3", 0.0025),
            (".5", 0.5),
            ("12,345.6", 12345.6),
            ("1_000_000", 1e6),
            ("-1,234", -1234.0),
            (" 7\n", 7.0),
        ];
        for (text, want) in good {
            assert_eq!(parse_number(text), Ok(want), "{text:?}");
        }
        for bad in [
            "",
            "abc",
            "NaN",
            "inf",
            "-infinity",
            "1e999",
            ",123",
            "12,",
            "1,,2",
            "1.2,3",
            "--1",
            "+-1",
            "1 2",
            ".",
        ] {
            assert!(parse_number(bad).is_err(), "{bad:?}");
        }
        assert!(parse_number("1e999").unwrap_err().contains("too large"));
    }

    #[test]
    fn regex_extraction() {
        let score = regex("score: ([0-9.]+)");
        assert_eq!(score.extract("score: 1\nscore: 2.5\nbye"), Ok(2.5));
        assert_eq!(
            score.extract("nothing here"),
            Err("no match for /score: ([0-9.]+)/ in the output".into())
        );
        assert_eq!(score.describe(), "regex /score: ([0-9.]+)/");
        assert_eq!(regex("[0-9,]+").extract("total 12,345 items"), Ok(12345.0));
        assert_eq!(regex(r"(?m)^ops/s\s+(\S+)$").extract("ops/s 1_200\nops/s +3e2\n"), Ok(300.0));
        assert_eq!(regex(r"(a|b)*score: (\d+)").extract("score: 7"), Ok(7.0));
        assert_eq!(regex(r"(\w+) (?P<value>\d+)").extract("iops 300"), Ok(300.0));
        let err = regex(r"n=(\d+)?;").extract("n=;").unwrap_err();
        assert_eq!(
            err,
            "/n=(\\d+)?;/ matched \"n=;\", but its group 1 took part in no match; name the group \
             that holds the figure (?P<value>…), or make the others non-capturing (?:…)"
        );
        let err = regex(r"x=(\w+)").extract("x=abc").unwrap_err();
        assert!(err.contains(r#"matched "abc", which is not a number"#), "{err}");
    }

    #[test]
    fn path_forms() {
        let doc = json!({"jbb": {"max_jops": 1234}, "results": [{"score": 1.5}, {"score": "2,000"}],
                         "a b": {"c": -3}, "x": 7, "it's": 8});
        let cases = [
            ("$.jbb.max_jops", 1234.0),
            ("jbb.max_jops", 1234.0),
            (".jbb.max_jops", 1234.0),
            ("results[0].score", 1.5),
            ("$.results[-1].score", 2000.0),
            ("$[\"a b\"].c", -3.0),
            ("['x']", 7.0),
            ("$[\"it's\"]", 8.0),
            ("['it\\'s']", 8.0),
            (" $.x ", 7.0),
        ];
        for (path, want) in cases {
            let p = JsonPath::new(path).unwrap_or_else(|e| panic!("{path}: {e}"));
            assert_eq!(p.number(&doc), Ok(want), "{path}");
        }
        assert_eq!(JsonPath::new("$").unwrap().number(&json!(5)), Ok(5.0));
        assert_eq!(JsonPath::new("results[0].score").unwrap().to_string(), "$.results[0].score");
        assert_eq!(JsonPath::new("$['a b'][-1]").unwrap().to_string(), "$[\"a b\"][-1]");
        assert_eq!(json_path("a.b").describe(), "json $.a.b");
    }

    #[test]
    fn path_syntax_errors() {
        let bad = ["", "  ", "$.", "$a", "a..b", "[", "[1", "[x]", "['open", "[-0]", "[-]", "a]", "$.a[1]b"];
        for src in bad {
            assert!(JsonPath::new(src).is_err(), "{src:?}");
        }
        assert_eq!(
            JsonPath::new("a..b").unwrap_err(),
            "expected a key name at offset 2 of JSON path \"a..b\""
        );
        assert!(JsonPath::new("[99999999999999999999]").unwrap_err().contains("too large"));
    }

    #[test]
    fn lookup_errors() {
        let doc = json!({"result": {"a": 1, "b": [1, 2]}, "s": "fast", "t": true, "n": null});
        let err = |path: &str| JsonPath::new(path).unwrap().number(&doc).unwrap_err();
        assert_eq!(err("$.result.ops"), "$.result.ops: key 'ops' not found (keys: a, b)");
        assert_eq!(err("$.result.b[2]"), "$.result.b[2]: index 2 out of range (the array has 2 elements)");
        assert_eq!(err("$.result.b[-3]"), "$.result.b[-3]: index -3 out of range (the array has 2 elements)");
        assert_eq!(err("$.result.a.x"), "$.result.a.x: $.result.a is a number (1), not an object");
        assert_eq!(err("$.result[0]"), "$.result[0]: $.result is an object, not an array");
        assert_eq!(err("$.result"), "$.result: the value is an object, not a number");
        assert_eq!(err("$.t"), "$.t: the value is a boolean (true), not a number");
        assert_eq!(err("$.n"), "$.n: the value is null, not a number");
        assert!(err("$.s").starts_with("$.s: the value is \"fast\", which is not a number"));
        assert!(JsonPath::new("x").unwrap().number(&json!({})).unwrap_err().contains("object is empty"));
    }

    #[test]
    fn json_output_forms() {
        let ops = json_path("$.ops");
        assert_eq!(ops.extract("{\"ops\": 12}"), Ok(12.0));
        assert_eq!(ops.extract("{\n  \"ops\": 12.5\n}\n"), Ok(12.5));
        assert_eq!(ops.extract("warming up\n{\"ops\": 1}\n{\"ops\": 2}\ndone\n"), Ok(2.0));
        assert_eq!(json_path("$").extract("log\n42\n"), Ok(42.0));
        assert!(ops.extract("").unwrap_err().contains("empty"));
        let err = ops.extract("just text\nmore text").unwrap_err();
        assert!(err.starts_with("the output is not JSON ("), "{err}");
    }

    proptest! {
        #[test]
        fn json_path_new_never_panics(src in any::<String>()) {
            let _ = JsonPath::new(&src);
        }

        #[test]
        fn path_like_text_round_trips(src in r#"[$.\[\]'"\\a-c0-9 -]{0,16}"#) {
            if let Ok(path) = JsonPath::new(&src) {
                prop_assert_eq!(JsonPath::new(&path.to_string()), Ok(path));
            }
        }

        #[test]
        fn numbers_round_trip(v in any::<f64>().prop_filter("finite", |v| v.is_finite())) {
            prop_assert_eq!(parse_number(&v.to_string()), Ok(v));
            prop_assert_eq!(parse_number(&format!("{v:e}")), Ok(v));
        }

        #[test]
        fn parse_number_never_panics(s in any::<String>()) {
            let _ = parse_number(&s);
        }
    }
}
