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
use crate::{Caps, CellContext, Engine, EngineError, Workload};
use racehorse_core::WorkUnit;
use std::sync::atomic::{AtomicU64, Ordering};

pub use config::DiskConfig;

pub struct DiskIo;

/// Distinguishes the directories of cells prepared by one process.
static NONCE: AtomicU64 = AtomicU64::new(0);

/// What `DiskIo` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "diskio",
    about: "IOzone phases and fio-style random I/O: per-process files, psync or io_uring, direct or cached (KiB/s)",
    area: "Disk I/O",
    unit: WorkUnit::Bytes,
    caps: Caps { needs_disk: true, ..Caps::NONE },
    options: OPTIONS,
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
