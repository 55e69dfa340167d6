//! The `paging` engine, seed 001's thrasher: one or more threads touch pages of a region
//! uniformly at random while the racehorse process is held to a memory limit below the
//! region's size (a memory cgroup the runner sets for the cell), so most touches fault and
//! the kernel keeps moving pages in and out (to swap, a zram swap made for the cell, or the
//! region's file). A unit is one touch; the engine also reports the
//! pages moved per touch from /proc/vmstat at the window's edges, and `n_page_moved` so the
//! runner adds the CPU per page moved (total and kernel).

mod region;

use crate::info::{shortcuts, EngineInfo};
use crate::support::rng::SplitMix64;
use crate::{
    AreaRule, Caps, CellContext, Control, Engine, EngineError, Figure, MemoryLimit, OptKind, OptionSpec,
    Phase, Recorder, SummaryArea, WorkerMeter, Workload,
};
use racehorse_core::WorkUnit;
use racehorse_machine::meminfo::read_meminfo;
use racehorse_machine::vmstat::{read_vmstat, VmStat};
use racehorse_machine::zram::zram_available;
use racehorse_machine::SysRoot;
use region::{page_size, Region};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

pub struct Paging;

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "region",
        kind: OptKind::Size { min: 1 << 20, max: 1 << 40 },
        default: "480m",
        help: "bytes of memory the thrasher touches (seed 001: 480 MB)",
    },
    OptionSpec {
        name: "limit",
        kind: OptKind::Size { min: 16 << 20, max: 1 << 40 },
        default: "180m",
        help: "memory limit for racehorse during the cell, below region (seed 001: about 180 MB of frames)",
    },
    OptionSpec {
        name: "backing",
        kind: OptKind::Choice(&["auto", "anon", "zram", "file"]),
        default: "auto",
        help: "anon: anonymous memory paged to the machine's swap; zram: the same, to a zram swap device \
               racehorse sets up for the cell and removes; file: a shared mapping of a file in the work \
               directory, paged from the disk; auto: anon when swap is on, else zram when the module \
               is loaded, else file",
    },
    OptionSpec {
        name: "writes",
        kind: OptKind::Int { min: 0, max: 100 },
        default: "0",
        help: "percent of touches that write the page (dirtying it) rather than read it",
    },
    OptionSpec {
        name: "threads",
        kind: OptKind::Int { min: 1, max: 256 },
        default: "1",
        help: "threads touching the region at once",
    },
];

/// Which memory the region is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backing {
    Anon,
    Zram,
    File,
}

#[derive(Debug, Clone, PartialEq)]
struct Setup {
    region: u64,
    limit: u64,
    backing: Backing,
    writes_pct: u64,
    threads: u64,
}

fn swap_on() -> bool {
    read_meminfo(&SysRoot::host()).is_ok_and(|m| m.swap_total_bytes > 0)
}

/// tmpfs and ramfs hold file pages in memory: without swap they cannot be paged out.
fn memory_filesystem(dir: &Path) -> bool {
    const TMPFS: i64 = 0x0102_1994;
    const RAMFS: i64 = 0x8584_58f6;
    let mut at = Some(dir);
    while let Some(d) = at {
        if let Ok(c) = std::ffi::CString::new(d.as_os_str().as_encoded_bytes()) {
            // SAFETY: a valid C string and a zeroed statfs buffer of the right type.
            let mut s: libc::statfs = unsafe { std::mem::zeroed() };
            if unsafe { libc::statfs(c.as_ptr(), &mut s) } == 0 {
                return matches!(s.f_type as i64, TMPFS | RAMFS);
            }
        }
        at = d.parent();
    }
    false
}

fn setup(ctx: &CellContext) -> Result<Setup, EngineError> {
    let swap = swap_on();
    let zram = zram_available(&SysRoot::host());
    let backing = match ctx.get_str("backing")? {
        "anon" => Backing::Anon,
        "zram" => Backing::Zram,
        "file" => Backing::File,
        _ if swap => Backing::Anon,
        _ if zram => Backing::Zram,
        _ => Backing::File,
    };
    let s = Setup {
        region: ctx.get_u64("region")?,
        limit: ctx.get_u64("limit")?,
        backing,
        writes_pct: ctx.get_u64("writes")?,
        threads: ctx.get_u64("threads")?,
    };
    if s.limit >= s.region {
        return Err(EngineError::Usage(format!(
            "paging: limit ({} MiB) must be below region ({} MiB), or nothing pages",
            s.limit >> 20,
            s.region >> 20
        )));
    }
    if s.backing == Backing::Anon && !swap {
        return Err(EngineError::Usage(
            "paging: backing=anon needs swap (none is on: see swapon --show; zram works), or use backing=file"
                .into(),
        ));
    }
    if s.backing == Backing::Zram && !zram {
        return Err(EngineError::Usage(
            "paging: backing=zram needs the zram module (modprobe zram), or use backing=file".into(),
        ));
    }
    if s.backing == Backing::File && !swap && memory_filesystem(&ctx.work_dir) {
        return Err(EngineError::Usage(format!(
            "paging: {} is on tmpfs/ramfs, whose pages cannot leave memory without swap; choose a disk \
             directory with --dir",
            ctx.work_dir.display()
        )));
    }
    Ok(s)
}

/// Seed 001's paging figures over the window, from /proc/vmstat.
const FIGURES: &[Figure] = &[
    Figure::cpu_per("n_page_moved", "CPU per page moved", "cpu_s/page"),
    Figure::lower("moves_per_touch", "moves per touch", "moves/touch"),
    Figure::info("pages_in_per_touch", "pages in per touch", "pages/touch"),
    Figure::info("pages_out_per_touch", "pages out per touch", "pages/touch"),
    Figure::info("major_faults_per_touch", "major faults per touch", "faults/touch"),
    Figure::info("swap_ins_per_touch", "swap-ins per touch", "pages/touch"),
    Figure::info("swap_outs_per_touch", "swap-outs per touch", "pages/touch"),
    Figure::info("file_backed", "file-backed region", "1 = yes"),
];

/// What `Paging` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "paging",
    about: "seed 001's thrasher: touch random pages of a region larger than the memory limit; touches/s",
    area: "Paging",
    summary_area: AreaRule::Fixed(SummaryArea::Paging),
    unit: WorkUnit::Ops,
    caps: Caps { needs_disk: true, changes_machine: true, ..Caps::NONE },
    options: OPTIONS,
    figures: FIGURES,
    shortcuts: &[shortcuts::THREADS],
};

impl Engine for Paging {
    fn info(&self) -> &'static EngineInfo {
        &INFO
    }
    fn check(&self) -> Result<(), EngineError> {
        let root = SysRoot::host();
        racehorse_machine::detect_memory_cgroup(&root).map(|_| ()).map_err(|e| {
            EngineError::Usage(format!(
                "paging needs a memory cgroup to hold racehorse below the region's size: {e}"
            ))
        })
    }
    fn validate(&self, ctx: &CellContext) -> Result<(), EngineError> {
        // Root: the generic check of `changes_machine` (`crate::ready`).
        self.check()?;
        setup(ctx).map(|_| ())
    }
    fn memory_limit(&self, ctx: &CellContext) -> Result<Option<MemoryLimit>, EngineError> {
        let s = setup(ctx)?;
        let anon = s.backing != Backing::File;
        // Room for every page of the region (random data barely compresses).
        let zram_bytes = (s.backing == Backing::Zram).then_some(s.region);
        Ok(Some(MemoryLimit { bytes: s.limit, allow_swap: anon, zram_bytes }))
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        let s = setup(ctx)?;
        let len = (s.region as usize / page_size()) * page_size();
        let region = match s.backing {
            Backing::Anon | Backing::Zram => Region::anonymous(len)?,
            Backing::File => Region::file_backed(&ctx.work_dir.join("paging.dat"), len)?,
        };
        Ok(Box::new(Cell { setup: s, region }))
    }
}

struct Cell {
    setup: Setup,
    region: Region,
}

/// The thrasher loop of one thread until the window closes.
fn thrash(region: &Region, s: &Setup, seed: u64, ctl: &Control, rec: &Recorder) {
    let mut meter = WorkerMeter::new();
    let mut rng = SplitMix64::new(seed);
    let pages = region.pages() as u64;
    let mut sink = 0u8;
    while meter.tick(ctl) {
        // A batch between phase checks keeps the check off the touch's cost.
        for _ in 0..64 {
            let page = rng.below(pages) as usize;
            let write = s.writes_pct > 0 && rng.below(100) < s.writes_pct;
            let t0 = Instant::now();
            sink ^= region.touch(page, write);
            meter.count(ctl, "touch", t0.elapsed().as_nanos() as u64, 1.0, 0, 0);
        }
    }
    std::hint::black_box(sink);
    meter.finish(rec);
}

/// Paging figures over the window from two /proc/vmstat readings.
fn record_moves(rec: &Recorder, a: VmStat, b: VmStat, touches: f64, file_backed: bool) {
    let page_kb = (page_size() / 1024).max(1) as f64;
    let pages_in = b.pgpgin_kb.saturating_sub(a.pgpgin_kb) as f64 / page_kb;
    let pages_out = b.pgpgout_kb.saturating_sub(a.pgpgout_kb) as f64 / page_kb;
    let per = |n: f64| if touches > 0.0 { n / touches } else { 0.0 };
    rec.set_extra("n_page_moved", pages_in + pages_out);
    rec.set_extra("moves_per_touch", per(pages_in + pages_out));
    rec.set_extra("pages_in_per_touch", per(pages_in));
    rec.set_extra("pages_out_per_touch", per(pages_out));
    rec.set_extra("major_faults_per_touch", per(b.pgmajfault.saturating_sub(a.pgmajfault) as f64));
    rec.set_extra("swap_ins_per_touch", per(b.pswpin_pages.saturating_sub(a.pswpin_pages) as f64));
    rec.set_extra("swap_outs_per_touch", per(b.pswpout_pages.saturating_sub(a.pswpout_pages) as f64));
    rec.set_extra("file_backed", if file_backed { 1.0 } else { 0.0 });
}

impl Workload for Cell {
    fn run(&mut self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        let failed = AtomicBool::new(false);
        let root = SysRoot::host();
        let mut readings: Vec<VmStat> = Vec::new();
        let mut vm_error = None;
        let driven = std::thread::scope(|scope| {
            for t in 0..self.setup.threads {
                let (region, s) = (&self.region, &self.setup);
                scope.spawn(move || thrash(region, s, 0x9e37_79b9 + t, ctl, rec));
            }
            ctl.drive_window_observed(&failed, &mut |_: Phase| match read_vmstat(&root) {
                Ok(v) => readings.push(v),
                Err(e) => vm_error = Some(e),
            })
        });
        driven?;
        if let Some(e) = vm_error {
            return Err(EngineError::Failed(format!("reading /proc/vmstat at the window's edges: {e}")));
        }
        if let [a, b] = readings[..] {
            record_moves(rec, a, b, rec.totals().units, self.setup.backing == Backing::File);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
