//! Parameters of a cell (workload options and axes) and the cell's identity.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// One parameter value. Sizes and durations are stored as integers in bytes / nanoseconds;
/// the option table of the engine says which an integer is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl Value {
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }
    pub fn as_u64(&self) -> Option<u64> {
        self.as_i64().and_then(|i| u64::try_from(i).ok())
    }
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Str(s) => f.write_str(s),
        }
    }
}

/// Parameters that hold byte sizes (shown with k/m/g), besides names ending in `_bytes`.
const SIZE_PARAMS: [&str; 7] = ["bs", "size", "file_size", "record_size", "region", "limit", "heap"];

/// A parameter value as people write it: sizes that are whole KiB, MiB or GiB with their
/// suffix (`bs=64k`, `size=2g`), everything else as stored. Keys and machine formats keep
/// the stored value.
pub fn display_value(name: &str, v: &Value) -> String {
    let is_size = SIZE_PARAMS.contains(&name) || name.ends_with("_bytes");
    match v {
        Value::Int(b) if is_size && *b > 0 => {
            for (shift, suffix) in [(30, "g"), (20, "m"), (10, "k")] {
                if b % (1 << shift) == 0 {
                    return format!("{}{suffix}", b >> shift);
                }
            }
            b.to_string()
        }
        _ => v.to_string(),
    }
}

/// Named parameters, ordered by name so that a cell's key is stable.
pub type Params = BTreeMap<String, Value>;

/// One point of the experiment matrix: workload + parameters + variant + repetition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellSpec {
    pub workload: String,
    pub params: Params,
    pub variant: String,
    /// Repetition number, counted from 1.
    pub rep: u32,
}

impl CellSpec {
    /// The key that matches cells across runs: workload, parameters and variant (not rep).
    pub fn match_key(&self) -> String {
        let mut key = format!("{}|{}", self.workload, self.variant);
        for (k, v) in &self.params {
            key.push('|');
            key.push_str(k);
            key.push('=');
            key.push_str(&v.to_string());
        }
        key
    }

    /// A short label for progress output: `fileserver cpus=2 clients=4 #1`.
    pub fn label(&self) -> String {
        let mut s = self.workload.clone();
        for (k, v) in &self.params {
            s.push_str(&format!(" {k}={}", display_value(k, v)));
        }
        if !self.variant.is_empty() && self.variant != "default" {
            s.push_str(&format!(" [{}]", self.variant));
        }
        s.push_str(&format!(" #{}", self.rep));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(rep: u32) -> CellSpec {
        let mut params = Params::new();
        params.insert("clients".into(), Value::Int(4));
        params.insert("cpus".into(), Value::Int(2));
        CellSpec { workload: "fileserver".into(), params, variant: "default".into(), rep }
    }

    #[test]
    fn match_key_ignores_repetition() {
        assert_eq!(spec(1).match_key(), spec(2).match_key());
        assert_eq!(spec(1).match_key(), "fileserver|default|clients=4|cpus=2");
    }

    #[test]
    fn label_is_readable() {
        assert_eq!(spec(3).label(), "fileserver clients=4 cpus=2 #3");
    }

    #[test]
    fn value_json_is_untagged() {
        let v: Vec<Value> = serde_json::from_str(r#"[1, 2.5, "x", true]"#).unwrap();
        assert_eq!(v, vec![Value::Int(1), Value::Float(2.5), Value::Str("x".into()), Value::Bool(true)]);
    }
}
