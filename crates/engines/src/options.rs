//! Option tables: each engine declares its options once (name, kind, default, help); the
//! table drives parsing of suite files and flags, `racehorse workloads show`, and the docs.

use racehorse_core::Value;

/// The kind of an option value and how its text is read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OptKind {
    /// An integer in [min, max].
    Int { min: i64, max: i64 },
    /// A size in bytes; accepts suffixes k, m, g (powers of 1024), e.g. `64k`.
    Size { min: u64, max: u64 },
    /// A floating-point number.
    Float,
    /// true / false.
    Bool,
    /// Free text (paths, names).
    Str,
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
}

/// One option of an engine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OptionSpec {
    pub name: &'static str,
    pub kind: OptKind,
    /// Default as text, parsed with `kind`; "" means "no default" (optional string).
    pub default: &'static str,
    pub help: &'static str,
}

impl OptKind {
    /// Human name of the kind, for help tables.
    pub fn describe(&self) -> String {
        match self {
            OptKind::Int { min, max } => format!("integer {min}..{max}"),
            OptKind::Size { .. } => "size (bytes; k/m/g suffix)".to_string(),
            OptKind::Float => "number".to_string(),
            OptKind::Bool => "true|false".to_string(),
            OptKind::Str => "text".to_string(),
            OptKind::Choice(words) => words.join("|"),
        }
    }
}

/// Parses a size such as `4096`, `4k`, `64KiB`, `1m`, `2g` into bytes (k = 1024).
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim().to_ascii_lowercase();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(digits_end);
    let n: u64 = num.parse().ok()?;
    let mult: u64 = match suffix.trim() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(mult)
}

impl OptionSpec {
    /// Parses text given on the command line or as a TOML string.
    pub fn parse_text(&self, text: &str) -> Result<Value, String> {
        let bad = || format!("option '{}': '{}' is not a valid {}", self.name, text, self.kind.describe());
        let v = match self.kind {
            OptKind::Int { .. } => Value::Int(text.trim().parse().map_err(|_| bad())?),
            OptKind::Size { .. } => {
                Value::Int(parse_size(text).and_then(|b| i64::try_from(b).ok()).ok_or_else(bad)?)
            }
            OptKind::Float => Value::Float(text.trim().parse().map_err(|_| bad())?),
            OptKind::Bool => Value::Bool(match text.trim() {
                "true" | "yes" | "on" | "1" => true,
                "false" | "no" | "off" | "0" => false,
                _ => return Err(bad()),
            }),
            OptKind::Str | OptKind::Choice(_) => Value::Str(text.to_string()),
        };
        self.check(v)
    }

    /// Checks a value already typed (from TOML), converting where it is unambiguous.
    pub fn check(&self, v: Value) -> Result<Value, String> {
        let name = self.name;
        match (self.kind, v) {
            (OptKind::Int { min, max }, Value::Int(i)) => {
                if i < min || i > max {
                    Err(format!("option '{name}': {i} is outside {min}..{max}"))
                } else {
                    Ok(Value::Int(i))
                }
            }
            (OptKind::Size { min, max }, Value::Int(i)) => match u64::try_from(i) {
                Ok(b) if b >= min && b <= max => Ok(Value::Int(i)),
                _ => Err(format!("option '{name}': {i} bytes is outside {min}..{max} bytes")),
            },
            (OptKind::Size { .. }, Value::Str(s)) => self.parse_text(&s),
            (OptKind::Float, Value::Int(i)) => Ok(Value::Float(i as f64)),
            (OptKind::Float, Value::Float(f)) => Ok(Value::Float(f)),
            (OptKind::Bool, Value::Bool(b)) => Ok(Value::Bool(b)),
            (OptKind::Str, Value::Str(s)) => Ok(Value::Str(s)),
            (OptKind::Choice(words), Value::Str(s)) => {
                if words.contains(&s.as_str()) {
                    Ok(Value::Str(s))
                } else {
                    Err(format!("option '{name}': '{s}' is not one of {}", words.join(", ")))
                }
            }
            (kind, v) => Err(format!("option '{name}': {v} is not a valid {}", kind.describe())),
        }
    }

    /// The default value, or None when the option has no default.
    pub fn default_value(&self) -> Option<Value> {
        if self.default.is_empty() && matches!(self.kind, OptKind::Str) {
            return None;
        }
        self.parse_text(self.default).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLIENTS: OptionSpec =
        OptionSpec { name: "clients", kind: OptKind::Int { min: 1, max: 1024 }, default: "1", help: "" };

    #[test]
    fn sizes_use_binary_suffixes() {
        assert_eq!(parse_size("4k"), Some(4096));
        assert_eq!(parse_size("64KiB"), Some(65536));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("12"), Some(12));
        assert_eq!(parse_size("k"), None);
        assert_eq!(parse_size("3furlongs"), None);
    }

    #[test]
    fn int_range_is_enforced() {
        assert_eq!(CLIENTS.parse_text("8"), Ok(Value::Int(8)));
        assert!(CLIENTS.parse_text("0").unwrap_err().contains("outside 1..1024"));
        assert!(CLIENTS.parse_text("eight").unwrap_err().contains("not a valid integer"));
    }

    #[test]
    fn choice_lists_valid_words() {
        let o = OptionSpec { name: "ipc", kind: OptKind::Choice(&["none", "mq"]), default: "none", help: "" };
        assert!(o.check(Value::Str("pipe".into())).unwrap_err().contains("none, mq"));
        assert_eq!(o.default_value(), Some(Value::Str("none".into())));
    }
}
