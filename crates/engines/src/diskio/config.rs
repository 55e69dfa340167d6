//! A `diskio` cell's validated configuration: phase, processes, record and file sizes, direct
//! I/O, fsync inside the timing, I/O engine and depth, the least window of pass mode (and
//! which phases may repeat their pass to fill it), target. The option table and the phases
//! are shared with the fio adapter (`crate::support::disk_options`).

use super::pattern::{IoDir, Pattern};
use crate::support::disk_layout::{FileState, Layout};
use crate::support::disk_options::{flag, is_block_device, DiskPhase};
use crate::{CellContext, EngineError};
use std::path::PathBuf;
use std::time::Duration;

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
    /// io_uring operations per submission.
    pub iodepth_batch: u32,
    /// io_uring buffers registered with the kernel (fio `fixedbufs`).
    pub fixedbufs: bool,
    /// I/O buffers in a transparent huge page of their own (else the heap, as fio's malloc).
    pub hugebufs: bool,
    pub rwmixread: u32,
    pub timed: bool,
    /// Pass mode: passes are repeated until a process's window lasts this long (see
    /// [`DiskConfig::repeats`]); zero: one pass.
    pub min_window: Duration,
    /// Directory under which the cell's files live, or a block device.
    pub target: PathBuf,
    /// Writes to a block-device target are allowed.
    pub destructive: bool,
    /// What the files hold when the window opens (the `layout` option for this phase).
    pub layout: FileState,
    /// fio's `invalidate`: buffered files start uncached, and timed sequential runs evict
    /// them at every wrap.
    pub invalidate: bool,
    /// fio's `fadvise_hint`: RANDOM or SEQUENTIAL advice on every file.
    pub fadvise_hint: bool,
}

/// The `layout` option resolved for `phase` on `target` (written when a table has no such
/// option).
fn layout_of(
    ctx: &CellContext,
    phase: DiskPhase,
    target: &std::path::Path,
) -> Result<FileState, EngineError> {
    let word = match ctx.spec.params.get("layout") {
        Some(_) => ctx.get_str("layout")?,
        None => "auto",
    };
    Layout::from_option(word, phase, is_block_device(target)).map_err(EngineError::Usage)
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
        let layout = layout_of(ctx, phase, &target)?;
        let cfg = DiskConfig {
            layout,
            phase,
            procs: ctx.get_u64("procs")? as usize,
            bs_bytes: ctx.get_u64("bs")?,
            size_bytes: ctx.get_u64("size")?,
            direct: ctx.get_bool("direct")?,
            fsync: ctx.get_bool("fsync")?,
            ioengine: ctx.get_str("ioengine")?.to_string(),
            iodepth: u32::try_from(ctx.get_u64("iodepth")?).unwrap_or(u32::MAX),
            iodepth_batch: match ctx.spec.params.get("iodepth_batch") {
                Some(_) => u32::try_from(ctx.get_u64("iodepth_batch")?).unwrap_or(u32::MAX),
                None => 1,
            },
            rwmixread: u32::try_from(ctx.get_u64("rwmixread")?).unwrap_or(101),
            timed: ctx.get_bool("timed")?,
            min_window: match ctx.spec.params.get("min_window_ms") {
                Some(_) => Duration::from_millis(ctx.get_u64("min_window_ms")?),
                None => Duration::ZERO,
            },
            target,
            destructive: flag(ctx, "destructive", false)?,
            invalidate: flag(ctx, "invalidate", true)?,
            fixedbufs: flag(ctx, "fixedbufs", true)?,
            hugebufs: flag(ctx, "hugebufs", true)?,
            fadvise_hint: flag(ctx, "fadvise_hint", true)?,
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

    /// Files whose first writes are inside the window (fallocated or sparse) change state as
    /// they are written: a second pass would measure something else.
    fn layout_allows_repeats(&self) -> bool {
        matches!(self.layout, FileState::Created | FileState::Written) || self.phase == DiskPhase::Write
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
        !self.timed
            && !self.min_window.is_zero()
            && (self.direct || !self.phase.cold())
            && self.layout_allows_repeats()
    }

    /// The io_uring queue of each worker.
    pub fn queue(&self) -> super::io::Queue {
        super::io::Queue {
            depth: self.iodepth,
            submit_batch: self.iodepth_batch,
            fixed_bufs: self.fixedbufs,
            huge_bufs: self.hugebufs,
        }
    }

    /// The page cache is dropped for the files before the window (as fio's `invalidate`).
    pub fn starts_uncached(&self) -> bool {
        self.invalidate && !self.direct && self.phase.starts_uncached()
    }

    /// A timed sequential run evicts its file each time it wraps to the start, as fio does
    /// for a time-based job (`invalidate`): every pass then reads or writes through to the
    /// device instead of finding the previous pass in the cache.
    pub fn evicts_on_wrap(&self) -> bool {
        self.timed && self.invalidate && !self.direct && !self.phase.is_random()
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
