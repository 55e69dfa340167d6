//! CPU cache topology from sysfs (`devices/system/cpu/cpu<N>/cache/index*`): the one reader
//! behind environment capture (every cache of CPU 0) and the micro engine's cache levels (data
//! and unified caches, with their sizes).

use crate::error::MachineError;
use crate::root::SysRoot;
use std::path::{Path, PathBuf};

/// One `index*` directory: a cache of one CPU as sysfs describes it. A field is None when its
/// file does not exist, or exists but could not be read or parsed; the latter is also listed
/// in `problems`, so that a caller can be lenient (environment capture) or strict (micro).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheIndex {
    /// The directory, for messages.
    pub dir: PathBuf,
    /// `level`: 1 for L1 …
    pub level: Option<u8>,
    /// `type`: "Data", "Instruction" or "Unified", as written.
    pub kind: Option<String>,
    /// `size`, e.g. "32K".
    pub size_bytes: Option<u64>,
    /// `coherency_line_size`.
    pub line_bytes: Option<u64>,
    /// `shared_cpu_list`, e.g. "0-3".
    pub shared_cpu_list: Option<String>,
    /// Files that exist but could not be read or hold a malformed value, in the order read.
    pub problems: Vec<CacheFileProblem>,
}

/// A file of an `index*` directory that exists but is unreadable or malformed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheFileProblem {
    /// The file's name ("size", "level" …).
    pub file: &'static str,
    /// "PATH: error" or "PATH: unexpected value \"…\"".
    pub message: String,
}

impl CacheIndex {
    /// The problem with file `file`, if any.
    pub fn problem(&self, file: &str) -> Option<&str> {
        self.problems.iter().find(|p| p.file == file).map(|p| p.message.as_str())
    }

    /// True for an instruction cache.
    pub fn is_instruction(&self) -> bool {
        self.kind.as_deref().is_some_and(|k| k.eq_ignore_ascii_case("Instruction"))
    }
}

/// Parses a sysfs cache size: a number with an optional K, M or G suffix (powers of 1024) and an
/// optional trailing B, e.g. "32K", "1024K", "32M", "512".
pub fn parse_size_bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    let s = s.strip_suffix(['B', 'b']).unwrap_or(s);
    let (digits, mult) = match s.char_indices().last()? {
        (i, 'K' | 'k') => (&s[..i], 1u64 << 10),
        (i, 'M' | 'm') => (&s[..i], 1 << 20),
        (i, 'G' | 'g') => (&s[..i], 1 << 30),
        _ => (s, 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(mult)
}

/// The caches of `cpu`, one per `index*` directory of `<sys>/devices/system/cpu/cpu<cpu>/cache`,
/// in index order. An error only when that directory cannot be listed.
pub fn cache_indexes(root: &SysRoot, cpu: u32) -> Result<Vec<CacheIndex>, MachineError> {
    let dir = root.sys(format!("devices/system/cpu/cpu{cpu}/cache"));
    let entries = std::fs::read_dir(&dir).map_err(|e| MachineError::io(&dir, e))?;
    let mut names = Vec::new();
    for entry in entries {
        let name = entry.map_err(|e| MachineError::io(&dir, e))?.file_name().to_string_lossy().into_owned();
        if let Some(n) = name.strip_prefix("index") {
            names.push((n.parse::<u32>().unwrap_or(u32::MAX), name));
        }
    }
    names.sort();
    Ok(names.into_iter().map(|(_, name)| read_index(&dir.join(name))).collect())
}

/// One `index*` directory.
fn read_index(dir: &Path) -> CacheIndex {
    let mut problems = Vec::new();
    let mut field = |file: &'static str| match std::fs::read_to_string(dir.join(file)) {
        Ok(t) => Some(t.trim().to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            problems.push(CacheFileProblem { file, message: format!("{}: {e}", dir.join(file).display()) });
            None
        }
    };
    let (kind, size, level, line, shared) = (
        field("type"),
        field("size"),
        field("level"),
        field("coherency_line_size"),
        field("shared_cpu_list"),
    );
    let size_bytes = parse_field(dir, "size", size, parse_size_bytes, &mut problems);
    let level = parse_field(dir, "level", level, |t| t.parse::<u8>().ok(), &mut problems);
    let line_bytes = parse_field(dir, "coherency_line_size", line, |t| t.parse::<u64>().ok(), &mut problems);
    CacheIndex {
        dir: dir.to_path_buf(),
        level,
        kind,
        size_bytes,
        line_bytes,
        shared_cpu_list: shared,
        problems,
    }
}

/// The value of file `file` of `dir` (its trimmed `text`, None when missing); a malformed one is
/// None and noted in `problems`.
fn parse_field<T>(
    dir: &Path,
    file: &'static str,
    text: Option<String>,
    parse: impl Fn(&str) -> Option<T>,
    problems: &mut Vec<CacheFileProblem>,
) -> Option<T> {
    let text = text?;
    let value = parse(&text);
    if value.is_none() {
        let message = format!("{}: unexpected value {text:?}", dir.join(file).display());
        problems.push(CacheFileProblem { file, message });
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{copy_fixture, fixture_dir};

    fn index(level: u8, kind: &str, size_bytes: u64, line_bytes: Option<u64>, shared: &str) -> CacheIndex {
        CacheIndex {
            level: Some(level),
            kind: Some(kind.into()),
            size_bytes: Some(size_bytes),
            line_bytes,
            shared_cpu_list: Some(shared.into()),
            ..CacheIndex::default()
        }
    }

    /// The indexes with their directories left out.
    fn read(root: &SysRoot, cpu: u32) -> Vec<CacheIndex> {
        let mut v = cache_indexes(root, cpu).unwrap();
        v.iter_mut().for_each(|c| c.dir = PathBuf::new());
        v
    }

    #[test]
    fn reads_the_fixtures() {
        let root = SysRoot::at(fixture_dir("baremetal4"));
        let want = [
            index(1, "Data", 32 << 10, Some(64), "0"),
            index(1, "Instruction", 32 << 10, Some(64), "0"),
            index(2, "Unified", 256 << 10, Some(64), "0"),
            index(3, "Unified", 8 << 20, Some(64), "0-3"),
        ];
        assert_eq!(read(&root, 0), want);
        let got = cache_indexes(&root, 0).unwrap();
        assert!(got[3].dir.ends_with("devices/system/cpu/cpu0/cache/index3"));
        assert!(got[1].is_instruction() && !got[0].is_instruction());
        let vm = SysRoot::at(fixture_dir("vm2"));
        assert_eq!(
            read(&vm, 0),
            [index(1, "Data", 32 << 10, None, "0"), index(3, "Unified", 32 << 20, None, "0-1")]
        );
        let err = cache_indexes(&vm, 7).unwrap_err().to_string();
        assert!(err.contains("cpu7/cache"), "{err}");
    }

    #[test]
    fn malformed_values_are_noted_and_left_out() {
        let tmp = tempfile::tempdir().unwrap();
        let root = copy_fixture("baremetal4", tmp.path());
        let cache = root.sys("devices/system/cpu/cpu0/cache");
        std::fs::write(cache.join("index2/size"), "lots\n").unwrap();
        std::fs::write(cache.join("index3/level"), "three\n").unwrap();
        std::fs::remove_file(cache.join("index0/type")).unwrap();
        let got = cache_indexes(&root, 0).unwrap();
        assert_eq!((got[2].size_bytes, got[2].level), (None, Some(2)));
        let msg = got[2].problem("size").unwrap();
        assert!(msg.ends_with("index2/size: unexpected value \"lots\""), "{msg}");
        assert_eq!((got[3].level, got[3].size_bytes), (None, Some(8 << 20)));
        assert!(got[3].problem("level").is_some() && got[3].problem("size").is_none());
        assert_eq!(
            (got[0].kind.as_deref(), got[0].problems.len()),
            (None, 0),
            "a missing file is no problem"
        );
    }

    #[test]
    fn size_strings() {
        for (s, want) in
            [("32K", 32 << 10), ("8M\n", 8 << 20), ("512", 512), ("32KB", 32 << 10), ("1G", 1 << 30)]
        {
            assert_eq!(parse_size_bytes(s), Some(want), "{s:?}");
        }
        for s in ["x", "", "K", "32 K", "1.5M", "99999999999999999999G"] {
            assert_eq!(parse_size_bytes(s), None, "{s:?}");
        }
    }
}
