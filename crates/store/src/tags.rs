//! A run's tags (`run --tag KEY=VALUE`; the automatic `kernel` and `racehorse` tags): what
//! makes runs a series (a commit, a build, a kernel), checked, stored, and used to select runs.

use crate::error::{Result, StoreError};
use crate::store::Store;
use rusqlite::params;
use std::collections::HashMap;

/// Longest tag key.
pub const MAX_TAG_KEY: usize = 64;
/// Longest tag value.
pub const MAX_TAG_VALUE: usize = 256;
/// Most tags on one run.
pub const MAX_TAGS: usize = 64;

/// A run's tags, ordered by key.
pub type Tags = Vec<(String, String)>;

/// Parses `KEY=VALUE` as given on the command line, checked by [`tag_problem`].
pub fn parse_tag(text: &str) -> std::result::Result<(String, String), String> {
    let (k, v) = text
        .split_once('=')
        .ok_or_else(|| format!("--tag {text:?}: expected KEY=VALUE, e.g. --tag commit=3f2a9c1"))?;
    let (k, v) = (k.trim().to_string(), v.trim().to_string());
    match tag_problem(&k, &v) {
        Some(why) => Err(format!("--tag {text:?}: {why}")),
        None => Ok((k, v)),
    }
}

/// Why a tag cannot be stored, or None: a key of 1 to 64 lowercase letters, digits, `_`, `-`
/// or `.` starting with a letter; a value of at most 256 characters without control characters.
pub fn tag_problem(key: &str, value: &str) -> Option<String> {
    let key_ok = !key.is_empty()
        && key.len() <= MAX_TAG_KEY
        && key.starts_with(|c: char| c.is_ascii_lowercase())
        && key.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_-.".contains(c));
    if !key_ok {
        return Some(format!(
            "tag key {key:?}: use 1 to {MAX_TAG_KEY} lowercase letters, digits, '_', '-' or '.', starting with a letter"
        ));
    }
    if value.chars().count() > MAX_TAG_VALUE {
        return Some(format!("tag {key}: the value is longer than {MAX_TAG_VALUE} characters"));
    }
    if value.chars().any(char::is_control) {
        return Some(format!("tag {key}: the value holds control characters"));
    }
    None
}

/// Checks a whole set of tags: each tag, the count, and no key twice.
pub fn tags_problem(tags: &[(String, String)]) -> Option<String> {
    if tags.len() > MAX_TAGS {
        return Some(format!("{} tags: at most {MAX_TAGS} per run", tags.len()));
    }
    for (i, (k, v)) in tags.iter().enumerate() {
        if let Some(why) = tag_problem(k, v) {
            return Some(why);
        }
        if tags[..i].iter().any(|(other, _)| other == k) {
            return Some(format!("tag {k} is given twice"));
        }
    }
    None
}

impl Store {
    /// Sets tags of a run (a key already set takes the new value).
    pub fn set_run_tags(&self, run_id: i64, tags: &[(String, String)]) -> Result<()> {
        if let Some(why) = tags_problem(tags) {
            return Err(StoreError::BadTag(why));
        }
        let tx = self.conn.unchecked_transaction()?;
        for (k, v) in tags {
            tx.execute(
                "INSERT INTO run_tags (run_id, key, value) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value",
                params![run_id, k, v],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The tags of one run, by key.
    pub fn run_tags(&self, run_id: i64) -> Result<Tags> {
        let mut stmt =
            self.conn.prepare_cached("SELECT key, value FROM run_tags WHERE run_id = ?1 ORDER BY key")?;
        let rows = stmt.query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// The tags of every run, by run id.
    pub fn all_run_tags(&self) -> Result<HashMap<i64, Tags>> {
        let mut stmt = self.conn.prepare("SELECT run_id, key, value FROM run_tags ORDER BY run_id, key")?;
        let mut out: HashMap<i64, Tags> = HashMap::new();
        for row in stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get(1)?, r.get(2)?)))? {
            let (id, k, v) = row?;
            out.entry(id).or_default().push((k, v));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::new_run;

    #[test]
    fn tags_are_checked() {
        assert_eq!(parse_tag("commit=3f2a9c1").unwrap(), ("commit".into(), "3f2a9c1".into()));
        assert_eq!(parse_tag(" build = 812 ").unwrap(), ("build".into(), "812".into()));
        assert_eq!(parse_tag("k=").unwrap(), ("k".into(), String::new()));
        for bad in ["commit", "=x", "Commit=x", "1a=x", "a b=x", "k=\u{1b}[2J"] {
            assert!(parse_tag(bad).is_err(), "{bad}");
        }
        assert!(parse_tag(&format!("k={}", "x".repeat(MAX_TAG_VALUE + 1))).is_err());
        assert!(parse_tag(&format!("{}=x", "k".repeat(MAX_TAG_KEY + 1))).is_err());
        let twice = vec![("a".to_string(), "1".to_string()), ("a".to_string(), "2".to_string())];
        assert_eq!(tags_problem(&twice).unwrap(), "tag a is given twice");
    }

    #[test]
    fn tags_are_stored_and_replaced() {
        let s = Store::open_in_memory().unwrap();
        let id = s.create_run(&new_run("a")).unwrap();
        s.set_run_tags(id, &[("commit".into(), "abc".into()), ("build".into(), "1".into())]).unwrap();
        s.set_run_tags(id, &[("build".into(), "2".into())]).unwrap();
        assert_eq!(
            s.run_tags(id).unwrap(),
            vec![("build".into(), "2".into()), ("commit".into(), "abc".into())]
        );
        assert_eq!(s.all_run_tags().unwrap()[&id].len(), 2);
        assert!(matches!(s.set_run_tags(id, &[("B".into(), "x".into())]), Err(StoreError::BadTag(_))));
    }
}
