//! The `diskio` option table and a cell's validated configuration: phase, processes, record
//! and file sizes, direct I/O, fsync inside the timing, I/O engine and depth, the least
//! window of pass mode (and which phases may repeat their pass to fill it), target.

use super::pattern::{IoDir, Pattern};
use crate::{CellContext, EngineError, OptKind, OptionSpec};
use std::path::PathBuf;
use std::time::Duration;

pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "phase",
        kind: OptKind::Choice(DiskPhase::NAMES),
        default: "read",
        help: "IOzone phase (write creates the files, rewrite overwrites them, read is cold, reread warm, \
               random phases use record-aligned offsets) or fio's randrw",
    },
    OptionSpec {
        name: "procs",
        kind: OptKind::Int { min: 1, max: 1024 },
        default: "1",
        help: "processes (worker threads), each on its own file (IOzone -t, fio numjobs)",
    },
    OptionSpec {
        name: "bs",
        kind: OptKind::Size { min: 512, max: 64 << 20 },
        default: "64k",
        help: "record size: bytes per read or write (IOzone -r, fio bs)",
    },
    OptionSpec {
        name: "size",
        kind: OptKind::Size { min: 4096, max: 1 << 40 },
        default: "64m",
        help: "file size per process (IOzone -s, fio size); a multiple of bs",
    },
    OptionSpec {
        name: "direct",
        kind: OptKind::Bool,
        default: "false",
        help: "O_DIRECT: bypass the page cache (IOzone -I, fio direct=1)",
    },
    OptionSpec {
        name: "fsync",
        kind: OptKind::Bool,
        default: "false",
        help: "fsync each file inside the timed part, after its writes (IOzone -e, fio end_fsync)",
    },
    OptionSpec {
        name: "ioengine",
        kind: OptKind::Choice(&["psync", "io_uring"]),
        default: "psync",
        help: "psync: one pread/pwrite at a time; io_uring: iodepth operations held in flight",
    },
    OptionSpec {
        name: "iodepth",
        kind: OptKind::Int { min: 1, max: 4096 },
        default: "1",
        help: "operations in flight per process (io_uring only)",
    },
    OptionSpec {
        name: "rwmixread",
        kind: OptKind::Int { min: 0, max: 100 },
        default: "50",
        help: "percentage of reads in randrw",
    },
    OptionSpec {
        name: "timed",
        kind: OptKind::Bool,
        default: "false",
        help: "false: one pass per process, window ends at the first to finish (IOzone stonewall); \
               true: loop until the runtime window ends (fio time_based)",
    },
    OptionSpec {
        name: "min_window_ms",
        kind: OptKind::Int { min: 0, max: 3_600_000 },
        default: "1000",
        help: "pass mode: repeat each process's pass until its window lasts this long, counting every pass \
               (write truncates first; cold reads without direct are never repeated, the cache would serve \
               them); 0: one pass. diskio only: the fio engine ignores it",
    },
    OptionSpec {
        name: "target",
        kind: OptKind::Str,
        default: "",
        help: "directory for the test files (default: the cell's work directory), or a block device \
               (read phases only unless destructive=true); several targets as an axis compare volumes",
    },
    OptionSpec {
        name: "destructive",
        kind: OptKind::Bool,
        default: "false",
        help: "allow write phases on a block-device target: DESTROYS the data on that device",
    },
];

/// A phase of IOzone (or fio's randrw).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiskPhase {
    Write,
    Rewrite,
    Read,
    Reread,
    RandRead,
    RandWrite,
    RandRw,
}

impl DiskPhase {
    /// The option words, in table order (shared with the fio adapter).
    pub const NAMES: &'static [&'static str] =
        &["write", "rewrite", "read", "reread", "randread", "randwrite", "randrw"];

    pub fn parse(s: &str) -> Option<DiskPhase> {
        Some(match s {
            "write" => DiskPhase::Write,
            "rewrite" => DiskPhase::Rewrite,
            "read" => DiskPhase::Read,
            "reread" => DiskPhase::Reread,
            "randread" => DiskPhase::RandRead,
            "randwrite" => DiskPhase::RandWrite,
            "randrw" => DiskPhase::RandRw,
            _ => return None,
        })
    }

    /// Offsets are drawn at random.
    pub fn is_random(self) -> bool {
        matches!(self, DiskPhase::RandRead | DiskPhase::RandWrite | DiskPhase::RandRw)
    }

    /// The files must exist (laid out untimed in prepare) before the phase.
    pub fn needs_layout(self) -> bool {
        self != DiskPhase::Write
    }

    /// The phase writes.
    pub fn writes(self) -> bool {
        matches!(self, DiskPhase::Write | DiskPhase::Rewrite | DiskPhase::RandWrite | DiskPhase::RandRw)
    }

    /// The phase reads.
    pub fn reads(self) -> bool {
        !matches!(self, DiskPhase::Write | DiskPhase::Rewrite | DiskPhase::RandWrite)
    }

    /// Reads should find the file out of the page cache (IOzone's read after write with a
    /// cold cache; reread is the warm case).
    pub fn cold(self) -> bool {
        matches!(self, DiskPhase::Read | DiskPhase::RandRead | DiskPhase::RandRw)
    }
}

/// A validated cell configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct DiskConfig {
    pub phase: DiskPhase,
    pub procs: usize,
    pub bs_bytes: u64,
    pub size_bytes: u64,
    pub direct: bool,
    pub fsync: bool,
    pub ioengine: String,
    pub iodepth: u32,
    pub rwmixread: u32,
    pub timed: bool,
    /// Pass mode: passes are repeated until a process's window lasts this long (see
    /// [`DiskConfig::repeats`]); zero: one pass.
    pub min_window: Duration,
    /// Directory under which the cell's files live, or a block device.
    pub target: PathBuf,
    /// Writes to a block-device target are allowed.
    pub destructive: bool,
}

impl DiskConfig {
    pub fn from_ctx(ctx: &CellContext) -> Result<DiskConfig, EngineError> {
        let phase_text = ctx.get_str("phase")?;
        let phase = DiskPhase::parse(phase_text).ok_or_else(|| {
            EngineError::Usage(format!(
                "option 'phase': '{phase_text}' is not one of write, rewrite, read, reread, randread, randwrite, randrw"
            ))
        })?;
        let target = match ctx.spec.params.get("target").and_then(|v| v.as_str()) {
            Some(t) if !t.is_empty() => PathBuf::from(t),
            _ => ctx.work_dir.clone(),
        };
        let cfg = DiskConfig {
            phase,
            procs: ctx.get_u64("procs")? as usize,
            bs_bytes: ctx.get_u64("bs")?,
            size_bytes: ctx.get_u64("size")?,
            direct: ctx.get_bool("direct")?,
            fsync: ctx.get_bool("fsync")?,
            ioengine: ctx.get_str("ioengine")?.to_string(),
            iodepth: u32::try_from(ctx.get_u64("iodepth")?).unwrap_or(u32::MAX),
            rwmixread: u32::try_from(ctx.get_u64("rwmixread")?).unwrap_or(101),
            timed: ctx.get_bool("timed")?,
            min_window: match ctx.spec.params.get("min_window_ms") {
                Some(_) => Duration::from_millis(ctx.get_u64("min_window_ms")?),
                None => Duration::ZERO,
            },
            target,
            destructive: match ctx.spec.params.get("destructive") {
                Some(_) => ctx.get_bool("destructive")?,
                None => false,
            },
        };
        cfg.validate()?;
        Ok(cfg)
    }

    fn validate(&self) -> Result<(), EngineError> {
        let usage = |m: String| Err(EngineError::Usage(m));
        if self.procs == 0 {
            return usage("option 'procs' must be at least 1".into());
        }
        if self.bs_bytes == 0
            || self.size_bytes < self.bs_bytes
            || !self.size_bytes.is_multiple_of(self.bs_bytes)
        {
            return usage(format!(
                "option 'size' ({} bytes) must be a positive multiple of 'bs' ({} bytes)",
                self.size_bytes, self.bs_bytes
            ));
        }
        if self.direct && !self.bs_bytes.is_multiple_of(512) {
            return usage(format!(
                "direct I/O needs 'bs' to be a multiple of 512 bytes; got {}",
                self.bs_bytes
            ));
        }
        if self.ioengine == "psync" && self.iodepth > 1 {
            return usage(format!(
                "iodepth={} needs ioengine=io_uring (psync does one operation at a time)",
                self.iodepth
            ));
        }
        if self.rwmixread > 100 {
            return usage(format!("option 'rwmixread' must be 0..100; got {}", self.rwmixread));
        }
        Ok(())
    }

    /// Bytes the cell's files occupy.
    pub fn footprint_bytes(&self) -> u64 {
        self.size_bytes.saturating_mul(self.procs as u64)
    }

    /// Records per file.
    pub fn records(&self) -> u64 {
        self.size_bytes / self.bs_bytes
    }

    /// A pass may be repeated to fill [`DiskConfig::min_window`]: in pass mode, unless the
    /// phase must read from the disk through the page cache (read, randread, randrw without
    /// O_DIRECT) — a second pass would find the file cached, and evicting it inside the window
    /// would add the eviction's CPU. With O_DIRECT every pass goes to the device.
    pub fn repeats(&self) -> bool {
        !self.timed && !self.min_window.is_zero() && (self.direct || !self.phase.cold())
    }

    /// The operation sequence of worker `i` in its pass `pass` (0, 1, … when passes repeat;
    /// random offsets differ from pass to pass): one pass (records ops) or endless when timed.
    pub fn pattern(&self, i: usize, pass: u64) -> Pattern {
        let seed = 0x5eed_0000_u64
            ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ pass.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let ops = (!self.timed).then(|| self.records());
        match self.phase {
            DiskPhase::Write | DiskPhase::Rewrite => {
                Pattern::sequential(IoDir::Write, self.size_bytes, self.bs_bytes, self.timed)
            }
            DiskPhase::Read | DiskPhase::Reread => {
                Pattern::sequential(IoDir::Read, self.size_bytes, self.bs_bytes, self.timed)
            }
            DiskPhase::RandRead => Pattern::random(IoDir::Read, self.size_bytes, self.bs_bytes, ops, seed),
            DiskPhase::RandWrite => Pattern::random(IoDir::Write, self.size_bytes, self.bs_bytes, ops, seed),
            DiskPhase::RandRw => Pattern::mixed(self.rwmixread, self.size_bytes, self.bs_bytes, ops, seed),
        }
    }
}
