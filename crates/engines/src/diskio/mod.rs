//! The `diskio` engine: IOzone's phases (write, rewrite, read, reread, random read and
//! write) and fio-style mixed random I/O on one file per process, with psync or io_uring
//! at a queue depth, direct or buffered; throughput in bytes, CPU per KiB.

mod config;
mod fileops;
mod files;
pub mod io;
#[cfg(test)]
mod layout_tests;
pub mod pattern;
mod run;
#[cfg(test)]
mod tests;

use crate::info::{shortcuts, EngineInfo};
use crate::support::disk_options::OPTIONS;
use crate::{AreaRule, Caps, CellContext, Engine, EngineError, Figure, SummaryArea, Workload};
use racehorse_core::WorkUnit;
use std::sync::atomic::{AtomicU64, Ordering};

pub use config::DiskConfig;

pub struct DiskIo;

/// Distinguishes the directories of cells prepared by one process.
static NONCE: AtomicU64 = AtomicU64::new(0);

/// The figures a cell records beside its bytes (IOzone's throughput-mode pair, the deepest
/// queue, the files' layout before the window).
const FIGURES: &[Figure] = &[
    Figure::info("max_in_flight", "deepest queue reached", "I/Os"),
    Figure::info("io_buffer_huge_share", "I/O buffers in huge pages", "share"),
    Figure::info("wrap_evictions", "pages evicted on wrapping", "pages"),
    Figure::info("passes", "passes over the file per worker", "passes"),
    Figure::info("children_see_kib_per_s", "children see (IOzone)", "KiB/s"),
    Figure::info("parent_sees_kib_per_s", "parent sees (IOzone)", "KiB/s"),
    Figure::info("layout_mapped_bytes", "mapped at the start", "bytes"),
    Figure::info("layout_unwritten_bytes", "unwritten extents at the start", "bytes"),
    Figure::info("layout_cached_bytes", "in the page cache at the start", "bytes"),
];

/// What `DiskIo` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "diskio",
    about: "IOzone phases and fio-style random I/O: per-process files, psync or io_uring, direct or cached (KiB/s)",
    area: "Disk I/O",
    summary_area: AreaRule::Fixed(SummaryArea::DiskIo),
    unit: WorkUnit::Bytes,
    caps: Caps { needs_disk: true, ..Caps::NONE },
    options: OPTIONS,
    figures: FIGURES,
    shortcuts: &[shortcuts::DESTRUCTIVE],
};

impl Engine for DiskIo {
    fn info(&self) -> &'static EngineInfo {
        &INFO
    }
    fn drop_unused(&self, params: &mut racehorse_core::Params) {
        crate::support::disk_options::drop_unused_iomem_align(params, false);
    }
    fn validate(&self, ctx: &CellContext) -> Result<(), EngineError> {
        let cfg = DiskConfig::from_ctx(ctx)?;
        files::check_fits(&cfg)
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        let cfg = DiskConfig::from_ctx(ctx)?;
        if cfg.ioengine == "io_uring" {
            // Fails early, with the reason, where io_uring is disabled.
            io::engine("io_uring", cfg.bs_bytes as usize, cfg.queue())?;
        }
        let files = files::TestFiles::create(&cfg, NONCE.fetch_add(1, Ordering::Relaxed))?;
        files.prepare(&cfg)?;
        let (start_allocation, start_cached_bytes) = (files.allocation(), files.cached_bytes());
        Ok(Box::new(run::DiskCell { cfg, files, start_allocation, start_cached_bytes }))
    }
}
