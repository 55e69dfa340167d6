//! One micro cell: the checked settings, the benchmark body built outside the window, the
//! timing inside it on one pinned CPU, and the figures recorded (units by kind, lmbench's
//! unit as an extra).

use super::caches::{self, Level};
use super::chase::Chase;
use super::mem::{MemBench, MemOp};
use super::record::Outcome;
use super::syscalls::Body;
use super::timing::{self, Method, Timed};
use super::{child, files, kind_of, pipes, procs, record, syscalls, Kind};
use crate::{CellContext, Control, EngineError, Recorder, Workload};
use racehorse_machine::SysRoot;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A cell's settings, checked.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Setup {
    pub bench: String,
    /// Working set in bytes (bandwidth, chase, mmap).
    pub size: usize,
    pub fds: usize,
    pub stride: usize,
    pub method: Method,
}

fn usage(msg: String) -> EngineError {
    EngineError::Usage(msg)
}

/// The working set of `level` on this machine (sysfs of the first CPU).
fn level_size(level: &str, size: u64) -> Result<u64, EngineError> {
    let Some(l) = Level::parse(level) else { return Ok(size) };
    let levels =
        caches::from_sysfs(&SysRoot::host(), 0).map_err(|e| usage(format!("micro: cache sizes: {e}")))?;
    caches::working_set(&levels, l).map_err(|e| usage(format!("micro: level={level}: {e}")))
}

impl Setup {
    pub fn of(ctx: &CellContext) -> Result<Setup, EngineError> {
        let bench = ctx.get_str("bench")?.to_string();
        let kind = kind_of(&bench);
        let size = match kind {
            Kind::Bandwidth | Kind::Chase if bench != "caches" => {
                level_size(ctx.get_str("level")?, ctx.get_u64("size")?)?
            }
            _ => ctx.get_u64("size")?,
        };
        let copies =
            if bench.starts_with("bw_") && MemOp::parse(&bench[3..]).is_some_and(|o| o.uses_two_buffers()) {
                2
            } else {
                1
            };
        // A level's working set is what the benchmark touches: a copy's two buffers share it
        // (at level=size, `size` is per buffer, as bw_mem's argument).
        let size = if copies == 2 && Level::parse(ctx.get_str("level")?).is_some() {
            (size / 2).max(512) / 512 * 512
        } else {
            size
        };
        let avail = racehorse_machine::meminfo::read_meminfo(&SysRoot::host())
            .map(|m| m.available_bytes)
            .unwrap_or(u64::MAX);
        if size.saturating_mul(copies) > avail / 2 {
            return Err(usage(format!(
                "micro: {bench} needs {} MiB, more than half of the {} MiB available; choose a smaller size",
                (size * copies) >> 20,
                avail >> 20
            )));
        }
        let minimum = kind == Kind::Chase;
        let method = Method {
            tries: ctx.get_u64("tries")? as usize,
            enough: Duration::from_millis(ctx.get_u64("enough_ms")?),
            warmup: Duration::from_millis(ctx.get_u64("enough_ms")?.min(50)),
            minimum,
        };
        // The reported figure's tries last `min_window_ms` together; the cache sweep's points
        // keep `enough_ms` (the sweep's window is long already, and it has 30-odd points).
        let method = if bench == "caches" {
            method
        } else {
            method.stretched(Duration::from_millis(ctx.get_u64("min_window_ms")?))
        };
        Ok(Setup {
            bench,
            size: size as usize,
            fds: ctx.get_u64("fds")? as usize,
            stride: ctx.get_u64("stride")? as usize,
            method,
        })
    }
}

pub(crate) struct Cell {
    setup: Setup,
    dir: PathBuf,
}

impl Cell {
    pub fn new(setup: Setup, dir: PathBuf) -> Cell {
        Cell { setup, dir }
    }
}

/// A small file for stat/open/select (lmbench passes one of its own).
fn small_file(dir: &Path) -> Result<PathBuf, String> {
    let f = dir.join("micro-small");
    std::fs::write(&f, b"racehorse").map_err(|e| format!("cannot write {}: {e}", f.display()))?;
    Ok(f)
}

/// The body of a latency benchmark and the bodies of its baselines (see record::latency).
fn latency_bodies(s: &Setup, dir: &Path) -> Result<(Body, Vec<Body>), String> {
    let one = |b: Body| (b, Vec::new());
    Ok(match s.bench.as_str() {
        "null" => one(syscalls::null()),
        "read" => one(syscalls::read_write(false)?),
        "write" => one(syscalls::read_write(true)?),
        "stat" => one(syscalls::stat(&small_file(dir)?, false)?),
        "fstat" => one(syscalls::stat(&small_file(dir)?, true)?),
        "open_close" => one(syscalls::open_close(&small_file(dir)?)?),
        "select_file" => one(syscalls::select(s.fds, &small_file(dir)?, false)?),
        "select_tcp" => one(syscalls::select(s.fds, &small_file(dir)?, true)?),
        "sig_install" => one(procs::sig_install()?),
        "sig_catch" => (procs::sig_catch(false)?, vec![procs::sig_catch(true)?]),
        // lmbench: the fault loop less a caught signal (itself less a sent one), so that only
        // the fault remains; the prot body itself subtracts its mprotect calls where it needs them.
        "prot_fault" => (
            procs::prot_fault(false)?,
            vec![procs::prot_fault(true)?, procs::sig_catch(false)?, procs::sig_catch(true)?],
        ),
        "fork" => one(procs::fork(procs::Child::Exit)?),
        "fork_exec" => one(procs::fork(procs::Child::Exec)?),
        "fork_sh" => one(procs::fork(procs::Child::Shell)?),
        "pipe" => one(pipes::round_trip()?),
        "ctx" => (pipes::round_trip()?, vec![pipes::write_read()?]),
        "mmap" => {
            let f = dir.join("micro-mmap");
            files::make_file(&f, s.size)?;
            one(files::mmap_latency(&f, s.size)?)
        }
        other => return Err(format!("{other} is not a latency benchmark")),
    })
}

/// A bandwidth body and the bytes one iteration moves.
fn bandwidth_body(s: &Setup, dir: &Path) -> Result<(Body, u64), String> {
    if let Some(op) = s.bench.strip_prefix("bw_").and_then(MemOp::parse) {
        let mut b = MemBench::new(op, s.size)?;
        let bytes = b.bytes_per_pass();
        return Ok((
            Box::new(move |n| {
                black_box(b.run(n));
            }),
            bytes,
        ));
    }
    let f = dir.join("micro-file");
    files::make_file(&f, s.size)?;
    let body = match s.bench.as_str() {
        "file_rd" => files::file_read(&f, s.size, false)?,
        "file_rd_o2c" => files::file_read(&f, s.size, true)?,
        "mmap_rd" => files::mmap_read(&f, s.size, false)?,
        "mmap_rd_o2c" => files::mmap_read(&f, s.size, true)?,
        other => return Err(format!("{other} is not a bandwidth benchmark")),
    };
    Ok((body, s.size as u64))
}

/// The chase of `size` bytes: random for chase_rand and for the cache sweep (a sequential
/// ring is hidden by the prefetchers, so its curve barely shows the levels).
fn chase_body(size: usize, s: &Setup) -> Result<Body, String> {
    let mut c = Chase::new(size, s.stride, s.bench != "chase")?;
    Ok(Box::new(move |n| {
        black_box(c.run(n));
    }))
}

impl Workload for Cell {
    fn run(&mut self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        let _pin = crate::support::forked::Pinned::to_last_cpu();
        let (s, dir) = (&self.setup, &self.dir);
        ctl.begin_measure();
        let measured = if child::wants_fresh_process(&s.bench) {
            child::in_fresh_process(s, dir)
        } else {
            child::in_child(|| measure(s, dir))
        };
        ctl.end_measure();
        let out = measured.map_err(|e| {
            ctl.stop();
            EngineError::Failed(format!("skipped: {} cannot run here: {e}", s.bench))
        })?;
        for n in &out.notes {
            eprintln!("micro {}: {n}", s.bench);
        }
        out.submit(ctl, rec);
        Ok(())
    }
}

/// Builds the benchmark's bodies and times them (in the measuring child).
pub(crate) fn measure(s: &Setup, dir: &Path) -> Result<Outcome, String> {
    Ok(match kind_of(&s.bench) {
        Kind::Latency => {
            let (mut body, base) = latency_bodies(s, dir)?;
            record::latency(s, &mut body, base)
        }
        Kind::Bandwidth => {
            let (mut body, bytes) = bandwidth_body(s, dir)?;
            record::bandwidth(s, &mut body, bytes)
        }
        Kind::Chase if s.bench == "caches" => record::caches(s, &|size| chase_body(size, s))?,
        Kind::Chase => {
            let mut body = chase_body(s.size, s)?;
            record::chase(s, &mut body)
        }
    })
}

/// Times `body` by `m`: ns per iteration, the clock's cost subtracted, the loop's not (the
/// latency figures subtract it with their baselines, see [`record::latency`]; the unrolled
/// bandwidth and chase kernels' loop cost per pass or load is negligible, and subtracting a
/// whole loop iteration per load made the chase read 0.3 ns fast).
pub(crate) fn timed(m: &Method, body: &mut Body) -> Timed {
    timing::time(m, &mut |n| body(n))
}
