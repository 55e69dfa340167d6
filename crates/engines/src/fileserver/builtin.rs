//! The built-in loadfile: our own op stream in client.txt format, generated from a seeded
//! PRNG. It imitates the op mix and I/O sizes of a NetBench-like office load (documents
//! created, read, rewritten, renamed and deleted in a small tree) and stays consistent:
//! files exist before they are read, every open handle is closed, every pass ends with a
//! Deltree of the client's directory.

use crate::support::rng::SplitMix64;
use std::fmt::Write as _;

/// The seed of the built-in stream (it never changes, so results stay comparable).
pub const SEED: u64 = 0x5eed_f11e_5e7e_0001;
/// Ops per pass, approximately (the last session may add a few).
pub const TARGET_OPS: usize = 30_000;

const ROOT: &str = r"\clients\client1";
const DIRS: &[&str] = &["WORD", "EXCEL", "PM", "PARADOX", "COREL", "PWRPNT", "ACCESS", "SEED"];
const KIB: u64 = 1024;

/// True with probability `percent` / 100.
fn chance(rng: &mut SplitMix64, percent: u64) -> bool {
    rng.below_mod(100) < percent
}

struct File {
    path: String,
    size: u64,
}

struct Gen {
    rng: SplitMix64,
    out: String,
    ops: usize,
    files: Vec<File>,
    next_name: u64,
    next_handle: u64,
}

impl Gen {
    fn line(&mut self, text: std::fmt::Arguments<'_>) {
        let _ = self.out.write_fmt(text);
        self.out.push('\n');
        self.ops += 1;
    }

    fn handle(&mut self) -> u64 {
        self.next_handle = (self.next_handle + 1) % 64;
        10_000 + self.next_handle
    }

    fn new_name(&mut self) -> String {
        let dir = DIRS[self.rng.below_mod(DIRS.len() as u64) as usize];
        self.next_name += 1;
        format!(r"{ROOT}\~dmtmp\{dir}\DOC{:05}.DOC", self.next_name)
    }

    fn open(&mut self, path: &str, disposition: u32) -> u64 {
        let h = self.handle();
        self.line(format_args!("NTCreateX \"{path}\" 0x44 {disposition:#x} {h} NT_STATUS_OK"));
        h
    }

    fn qpath(&mut self, path: &str, found: bool) {
        let st = if found { "NT_STATUS_OK" } else { "NT_STATUS_OBJECT_NAME_NOT_FOUND" };
        self.line(format_args!("QUERY_PATH_INFORMATION \"{path}\" 1004 {st}"));
    }

    fn writes(&mut self, h: u64, mut size: u64) -> u64 {
        for _ in 0..1 + self.rng.below_mod(2) {
            self.line(format_args!("WriteX {h} {size} 65536 65536 NT_STATUS_OK"));
            size += 64 * KIB;
        }
        if chance(&mut self.rng, 50) {
            self.line(format_args!("WriteX {h} {size} 4096 4096 NT_STATUS_OK"));
            size += 4 * KIB;
        }
        if chance(&mut self.rng, 40) {
            self.line(format_args!("WriteX {h} {size} 1 1 NT_STATUS_OK"));
            size += 1;
        }
        size
    }

    /// A new document: look it up (absent), create, write, maybe flush, close.
    fn create_session(&mut self) {
        let path = self.new_name();
        self.qpath(&path, false);
        let h = self.open(&path, 2);
        if chance(&mut self.rng, 50) {
            self.line(format_args!("QUERY_FS_INFORMATION 1 NT_STATUS_OK"));
        }
        let size = self.writes(h, 0);
        if chance(&mut self.rng, 40) {
            self.line(format_args!("Flush {h} NT_STATUS_OK"));
        }
        if chance(&mut self.rng, 40) {
            self.line(format_args!("QUERY_FILE_INFORMATION {h} 258 NT_STATUS_OK"));
        }
        self.line(format_args!("Close {h} NT_STATUS_OK"));
        self.files.push(File { path, size });
    }

    /// Reads of an existing document: 4 KiB records at random, or 60 KiB sequential runs.
    fn read_session(&mut self) {
        let i = self.rng.below_mod(self.files.len() as u64) as usize;
        let (path, size) = (self.files[i].path.clone(), self.files[i].size);
        if chance(&mut self.rng, 70) {
            self.qpath(&path, true);
        }
        let h = self.open(&path, 1);
        if chance(&mut self.rng, 30) {
            self.line(format_args!("QUERY_FILE_INFORMATION {h} 258 NT_STATUS_OK"));
        }
        let lock = self.rng.below_mod(1000) < 3;
        if lock {
            self.line(format_args!("LockX {h} 0 1 NT_STATUS_OK"));
        }
        let sequential = chance(&mut self.rng, 35);
        let mut off = 0;
        for _ in 0..3 + self.rng.below_mod(7) {
            let want = if sequential { 60 * KIB } else { 4 * KIB };
            if !sequential {
                off = self.rng.below_mod(size.div_ceil(4 * KIB)) * 4 * KIB;
            } else if off >= size {
                break;
            }
            let got = want.min(size.saturating_sub(off));
            self.line(format_args!("ReadX {h} {off} {want} {got} NT_STATUS_OK"));
            off += got;
        }
        if lock {
            self.line(format_args!("UnlockX {h} 0 1 NT_STATUS_OK"));
        }
        if chance(&mut self.rng, 15) {
            self.line(format_args!("SET_FILE_INFORMATION {h} 1004 NT_STATUS_OK"));
        }
        self.line(format_args!("Close {h} NT_STATUS_OK"));
    }

    /// Save over a document (overwrite-if): creates it when new, truncates it when not.
    fn overwrite_session(&mut self) {
        let existing = !self.files.is_empty() && chance(&mut self.rng, 50);
        let i = self.rng.below_mod(self.files.len() as u64) as usize;
        let path = if existing { self.files[i].path.clone() } else { self.new_name() };
        let h = self.open(&path, 5);
        let size = if chance(&mut self.rng, 60) { 4 * KIB } else { 1 };
        self.line(format_args!("WriteX {h} 0 {size} {size} NT_STATUS_OK"));
        if chance(&mut self.rng, 18) {
            self.line(format_args!("SET_FILE_INFORMATION {h} 1004 NT_STATUS_OK"));
        }
        self.line(format_args!("Close {h} NT_STATUS_OK"));
        if existing {
            self.files[i].size = size;
        } else {
            self.files.push(File { path, size });
        }
    }

    /// Looking for a document that is not there.
    fn probe_session(&mut self) {
        let path = self.new_name();
        if chance(&mut self.rng, 70) {
            self.qpath(&path, false);
        }
        let h = self.handle();
        self.line(format_args!("NTCreateX \"{path}\" 0x44 0x1 {h} NT_STATUS_OBJECT_NAME_NOT_FOUND"));
        if chance(&mut self.rng, 85) {
            let dir = &path[..path.rfind('\\').unwrap_or(0)];
            self.line(format_args!("FIND_FIRST \"{dir}\\*.TMP\" 260 1366 0 NT_STATUS_NO_SUCH_FILE"));
        }
    }

    /// Listing a directory.
    fn browse_session(&mut self) {
        let dir = DIRS[self.rng.below_mod(DIRS.len() as u64) as usize];
        let d = format!(r"{ROOT}\~dmtmp\{dir}");
        self.line(format_args!("FIND_FIRST \"{d}\\*.*\" 260 1366 0 NT_STATUS_OK"));
        self.line(format_args!("FIND_FIRST \"{d}\\*.DOC\" 260 1366 0 NT_STATUS_OK"));
        self.qpath(&d, true);
        self.line(format_args!("QUERY_FS_INFORMATION 1 NT_STATUS_OK"));
    }

    fn rename_session(&mut self) {
        let i = self.rng.below_mod(self.files.len() as u64) as usize;
        let to = self.new_name();
        let from = std::mem::replace(&mut self.files[i].path, to.clone());
        self.qpath(&from, true);
        self.line(format_args!("Rename \"{from}\" \"{to}\" NT_STATUS_OK"));
    }

    fn unlink_session(&mut self) {
        let i = self.rng.below_mod(self.files.len() as u64) as usize;
        let f = self.files.swap_remove(i);
        self.qpath(&f.path, true);
        self.line(format_args!("Unlink \"{}\" 0x20 NT_STATUS_OK", f.path));
        if chance(&mut self.rng, 30) {
            self.qpath(&f.path, false);
        }
    }

    fn session(&mut self) {
        let roll = self.rng.below_mod(1000);
        let have = self.files.len();
        match roll {
            _ if have < 8 => self.create_session(),
            0..=239 => self.read_session(),
            240..=379 => self.create_session(),
            380..=509 => self.overwrite_session(),
            510..=709 => self.probe_session(),
            710..=769 => self.browse_session(),
            770..=809 => self.rename_session(),
            _ if have < 40 => self.read_session(),
            810..=979 => self.unlink_session(),
            _ => self.read_session(),
        }
    }
}

/// The built-in loadfile text, in client.txt format.
pub fn generate(seed: u64, target_ops: usize) -> String {
    let mut g = Gen {
        rng: SplitMix64::new(seed),
        out: String::new(),
        ops: 0,
        files: Vec::new(),
        next_name: 0,
        next_handle: 0,
    };
    g.out.push_str("# racehorse fileserver built-in loadfile (generated; client.txt format)\n");
    g.line(format_args!("Deltree \"{ROOT}\" NT_STATUS_OK"));
    g.line(format_args!(r#"Mkdir "\clients" NT_STATUS_OK"#));
    let mut dirs = vec![ROOT.to_string(), format!(r"{ROOT}\~dmtmp")];
    dirs.extend(DIRS.iter().map(|d| format!(r"{ROOT}\~dmtmp\{d}")));
    for d in &dirs {
        let h = g.handle();
        g.line(format_args!("NTCreateX \"{d}\" 0x1 0x2 {h} NT_STATUS_OK"));
        g.line(format_args!("Close {h} NT_STATUS_OK"));
    }
    while g.ops < target_ops {
        g.session();
    }
    g.line(format_args!("Deltree \"{ROOT}\" NT_STATUS_OK"));
    g.out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fileserver::exec::{ExecConfig, Executor};
    use crate::fileserver::loadfile::{parse, OpKind};
    use std::collections::BTreeMap;

    #[test]
    fn generation_is_deterministic() {
        assert_eq!(generate(SEED, 2000), generate(SEED, 2000));
        assert_ne!(generate(SEED, 2000), generate(SEED + 1, 2000));
    }

    #[test]
    fn op_mix_resembles_client_txt() {
        let lf = parse(&generate(SEED, TARGET_OPS)).unwrap();
        let n = lf.ops.len();
        assert!((20_000..=50_000).contains(&n), "{n} ops");
        let mut mix: BTreeMap<&str, usize> = BTreeMap::new();
        let mut sizes: BTreeMap<(&str, u32), usize> = BTreeMap::new();
        for op in &lf.ops {
            *mix.entry(op.kind.name()).or_default() += 1;
            if let OpKind::ReadX { size, .. } | OpKind::WriteX { size, .. } = op.kind {
                *sizes.entry((op.kind.name(), size)).or_default() += 1;
            }
        }
        let pct = |name: &str| 100.0 * *mix.get(name).unwrap_or(&0) as f64 / n as f64;
        let targets = [
            ("ReadX", 27.1),
            ("NTCreateX", 17.3),
            ("QUERY_PATH_INFORMATION", 15.7),
            ("Close", 12.7),
            ("WriteX", 8.6),
            ("FIND_FIRST", 6.1),
            ("Unlink", 3.5),
            ("QUERY_FS_INFORMATION", 2.9),
            ("QUERY_FILE_INFORMATION", 2.7),
            ("SET_FILE_INFORMATION", 1.4),
            ("Flush", 1.2),
            ("Rename", 0.7),
        ];
        for (name, want) in targets {
            let got = pct(name);
            assert!((got - want).abs() <= want * 0.25 + 0.3, "{name}: {got:.2}% vs {want}% ({mix:?})");
        }
        assert!(mix["LockX"] > 0 && mix["LockX"] == mix["UnlockX"]);
        // Reads mostly 4 KiB and 60 KiB; writes 64 KiB, 4 KiB and 1 byte.
        let reads: usize = sizes.iter().filter(|(k, _)| k.0 == "ReadX").map(|(_, v)| v).sum();
        assert_eq!(sizes[&("ReadX", 4096)] + sizes[&("ReadX", 61440)], reads);
        let writes: usize = sizes.iter().filter(|(k, _)| k.0 == "WriteX").map(|(_, v)| v).sum();
        assert_eq!(sizes[&("WriteX", 65536)] + sizes[&("WriteX", 4096)] + sizes[&("WriteX", 1)], writes);
        assert_eq!(lf.ops.last().unwrap().kind.name(), "Deltree");
    }

    #[test]
    fn one_pass_runs_without_errors() {
        let lf = parse(&generate(SEED, 3000)).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let mut ex = Executor::new(&lf, tmp.path(), 0, ExecConfig::default());
        for pass in 0..2 {
            for op in &lf.ops {
                ex.exec(op).unwrap();
            }
            assert_eq!(ex.errors, 0, "pass {pass}");
        }
    }
}
