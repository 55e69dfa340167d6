//! The cell's test files: checks on the target (exists, writable, enough free space),
//! untimed layout for phases that need existing data, the cache state before the window
//! (cold or warm), and removal on every path (cleanup and Drop).

use super::config::DiskConfig;
use super::io::{evict_from_cache, free_bytes, fsync};
use crate::support::direct_io::{open_file, AlignedBuf, OpenMode};
use crate::support::disk_layout::{fallocate, FileState};
use crate::support::disk_options::{is_block_device, DiskPhase};
use crate::support::fiemap::{allocation, Allocation};
use crate::EngineError;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Bytes per write when laying out files (untimed).
const LAYOUT_CHUNK_BYTES: usize = 1 << 20;

/// Free space to leave on the filesystem beyond the files themselves.
const SPARE_BYTES: u64 = 64 << 20;

/// A directory of per-process files, removed when dropped; or a block device that every
/// process uses (never removed).
#[derive(Debug)]
pub struct TestFiles {
    /// The directory racehorse made (None for a block device).
    pub dir: Option<PathBuf>,
    pub paths: Vec<PathBuf>,
}

impl TestFiles {
    /// Checks the target and creates `racehorse-diskio-<pid>-<n>` under it with one file
    /// name per process (files are not created yet); a block device is used in place.
    pub fn create(cfg: &DiskConfig, cell_nonce: u64) -> Result<TestFiles, EngineError> {
        if is_block_device(&cfg.target) {
            return block_device(cfg);
        }
        check_fits(cfg)?;
        let dir = cfg.target.join(format!("racehorse-diskio-{}-{cell_nonce}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| EngineError::io("cannot create the test directory", &dir, e))?;
        let paths = (0..cfg.procs).map(|i| dir.join(format!("file.{i}"))).collect();
        Ok(TestFiles { dir: Some(dir), paths })
    }
}

/// The target can hold the cell: a usable block device, or a writable directory with room
/// for every file plus a spare; writes nothing but a probe file.
pub fn check_fits(cfg: &DiskConfig) -> Result<(), EngineError> {
    if is_block_device(&cfg.target) {
        return block_device(cfg).map(|_| ());
    }
    check_target(&cfg.target)?;
    let need = cfg.footprint_bytes().saturating_add(SPARE_BYTES);
    let free = free_bytes(&cfg.target)?;
    if need > free {
        return Err(EngineError::Usage(format!(
            "{} has {} MiB free but the cell needs {} MiB ({} processes × {} MiB, plus {} MiB spare); \
             reduce 'size' or 'procs', or choose another 'target'",
            cfg.target.display(),
            free >> 20,
            need >> 20,
            cfg.procs,
            cfg.size_bytes >> 20,
            SPARE_BYTES >> 20
        )));
    }
    Ok(())
}

impl TestFiles {
    /// Gives every file the state of the cell's `layout` (untimed): written fully and
    /// fsynced, fallocated, sparse, or absent; then the cache state the phase expects:
    /// evicted, as fio's `invalidate=1` does, for every phase but rewrite and reread (which
    /// find the file as the previous phase left it), read once for reread.
    pub fn prepare(&self, cfg: &DiskConfig) -> Result<(), EngineError> {
        let device = self.dir.is_none();
        for p in &self.paths {
            if !device {
                lay_out(p, cfg.layout, cfg.size_bytes)?;
            }
            if !device && cfg.layout == FileState::Written && cfg.invalidate && cfg.phase.starts_uncached() {
                let f = open_file(p, OpenMode::default())?;
                evict_from_cache(&f, p)?;
            }
            if device && cfg.starts_uncached() {
                // What an earlier cell read or wrote through the device's cache goes too.
                let f = open_file(p, OpenMode::default())?;
                evict_from_cache(&f, p)?;
            }
            if cfg.phase == DiskPhase::Reread && !cfg.direct {
                warm(p)?;
            }
        }
        Ok(())
    }

    /// What the files' extents add up to (FIEMAP): None on a block device or where the
    /// filesystem cannot say. Files that do not exist (yet) count nothing.
    pub fn allocation(&self) -> Option<Allocation> {
        self.dir.as_ref()?;
        let mut sum = Allocation::default();
        for p in self.paths.iter().filter(|p| p.exists()) {
            let a = std::fs::File::open(p).and_then(|f| allocation(&f)).ok()?;
            sum.mapped_bytes += a.mapped_bytes;
            sum.unwritten_bytes += a.unwritten_bytes;
            sum.extents += a.extents;
        }
        Some(sum)
    }

    /// Bytes of the files the page cache holds (mincore): None on a block device or where
    /// a file cannot be mapped. Files that do not exist (yet) count nothing.
    pub fn cached_bytes(&self) -> Option<u64> {
        self.dir.as_ref()?;
        let mut sum = 0;
        for p in self.paths.iter().filter(|p| p.exists()) {
            sum += std::fs::File::open(p).and_then(|f| crate::support::residency::cached_bytes(&f)).ok()?;
        }
        Some(sum)
    }

    /// Removes the files and the directory.
    pub fn remove(&self) -> Result<(), EngineError> {
        match &self.dir {
            Some(dir) if dir.exists() => std::fs::remove_dir_all(dir)
                .map_err(|e| EngineError::io("cannot remove the test directory", dir, e)),
            _ => Ok(()),
        }
    }
}

impl Drop for TestFiles {
    fn drop(&mut self) {
        let _ = self.remove();
    }
}

/// A block-device target: read phases only, unless `destructive`; `size` must fit.
fn block_device(cfg: &DiskConfig) -> Result<TestFiles, EngineError> {
    let dev = cfg.target.display();
    if cfg.phase.writes() && !cfg.destructive {
        return Err(EngineError::Usage(format!(
            "target {dev} is a block device: diskio only reads it; pass --destructive (or destructive = true) to allow \
             writing (this destroys the data on {dev})"
        )));
    }
    let f = open_file(&cfg.target, OpenMode::default())?;
    let dev_bytes = std::io::Seek::seek(&mut &f, std::io::SeekFrom::End(0))
        .map_err(|e| EngineError::io("cannot read the size of the device", &cfg.target, e))?;
    if cfg.size_bytes > dev_bytes {
        return Err(EngineError::Usage(format!(
            "target {dev} holds {} MiB; 'size' ({} MiB) must fit in it",
            dev_bytes >> 20,
            cfg.size_bytes >> 20
        )));
    }
    Ok(TestFiles { dir: None, paths: vec![cfg.target.clone(); cfg.procs] })
}

/// The target must be an existing, writable directory.
fn check_target(dir: &Path) -> Result<(), EngineError> {
    let meta = std::fs::metadata(dir).map_err(|e| {
        EngineError::Usage(format!(
            "target {} cannot be used: {e}; create it or choose another",
            dir.display()
        ))
    })?;
    if !meta.is_dir() {
        return Err(EngineError::Usage(format!(
            "target {} is not a directory; diskio writes files into a directory",
            dir.display()
        )));
    }
    let probe = dir.join(format!(".racehorse-probe-{}", std::process::id()));
    std::fs::write(&probe, b"x").map_err(|e| {
        EngineError::Usage(format!(
            "target {} is not writable: {e}; choose another or fix its permissions",
            dir.display()
        ))
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Gives the file at `path` the state `layout` (a new file each time).
fn lay_out(path: &Path, layout: FileState, size_bytes: u64) -> Result<(), EngineError> {
    match layout {
        FileState::Created => match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(EngineError::io("cannot remove the old test file", path, e))
            }
            _ => Ok(()),
        },
        FileState::Written => write_whole(path, size_bytes),
        FileState::Fallocated | FileState::Sparse => {
            let f = open_file(path, OpenMode { write: true, create_truncate: true, direct: false })?;
            let set = if layout == FileState::Fallocated {
                fallocate(&f, size_bytes)
            } else {
                f.set_len(size_bytes)
            };
            set.map_err(|e| EngineError::io(format!("cannot {} the test file", layout.word()), path, e))?;
            fsync(&f, path)
        }
    }
}

/// Writes `size_bytes` of pattern data to `path` and fsyncs it.
fn write_whole(path: &Path, size_bytes: u64) -> Result<(), EngineError> {
    let f = open_file(path, OpenMode { write: true, create_truncate: true, direct: false })?;
    let buf = AlignedBuf::new(LAYOUT_CHUNK_BYTES)?;
    let mut off = 0u64;
    while off < size_bytes {
        let n = (size_bytes - off).min(LAYOUT_CHUNK_BYTES as u64) as usize;
        f.write_all_at(&buf.as_slice()[..n], off)
            .map_err(|e| EngineError::io("cannot lay out the test file", path, e))?;
        off += n as u64;
    }
    fsync(&f, path)
}

/// Reads the whole file once so that it is in the page cache.
fn warm(path: &Path) -> Result<(), EngineError> {
    let mut f = open_file(path, OpenMode::default())?;
    let mut buf = vec![0u8; LAYOUT_CHUNK_BYTES];
    loop {
        match f.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) => return Err(EngineError::io("cannot read the test file", path, e)),
        }
    }
}
