//! The `smallread` engine, seed 001's XEDIT read loop: each client loads a small file (400 KB
//! by default) again and again: open, read it whole in `bs` records into a buffer that may
//! start `misalign` bytes off a page boundary, close. A transaction is one whole load;
//! throughput is loads per second and the runner's CPU per transaction is the study's "CPU
//! time per XEDIT file load". Direct I/O by default (the study ran with the minidisk cache
//! off), so every load reaches the device.

use crate::info::{shortcuts, EngineInfo};
use crate::support::direct_io::{open_file, AlignedBuf, OpenMode};
use crate::support::pace::{self, PaceSpec, PaceTally, Pacer};
use crate::{
    AreaRule, Caps, CellContext, Control, Engine, EngineError, OptKind, OptionSpec, Recorder, SummaryArea,
    WorkerMeter, Workload,
};
use racehorse_core::WorkUnit;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

pub struct SmallRead;

/// The option table with `rate` and `qos` (loads can be paced).
static PACED_OPTIONS: [OptionSpec; OPTIONS.len() + 2] = pace::with_pace_options(OPTIONS);

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "size",
        kind: OptKind::Size { min: 4096, max: 1 << 30 },
        default: "400k",
        help: "file size in bytes (a multiple of 4k with direct I/O); seed 001: 100 blocks of 4 KB",
    },
    OptionSpec {
        name: "bs",
        kind: OptKind::Size { min: 512, max: 16 << 20 },
        default: "64k",
        help: "bytes per read call (record size; the last record may be shorter)",
    },
    OptionSpec {
        name: "misalign",
        kind: OptKind::Int { min: 0, max: 4095 },
        default: "0",
        help: "bytes the read buffer starts past a page boundary (a multiple of 512 with direct I/O)",
    },
    OptionSpec {
        name: "direct",
        kind: OptKind::Bool,
        default: "true",
        help: "O_DIRECT (every load reaches the device) or through the page cache",
    },
    OptionSpec {
        name: "clients",
        kind: OptKind::Int { min: 1, max: 1024 },
        default: "1",
        help: "concurrent readers, each with its own file",
    },
];

/// One cell's settings, checked.
#[derive(Debug, Clone, PartialEq)]
struct Setup {
    size: u64,
    bs: u64,
    misalign: usize,
    direct: bool,
    clients: u64,
}

fn setup(ctx: &CellContext) -> Result<Setup, EngineError> {
    let s = Setup {
        size: ctx.get_u64("size")?,
        bs: ctx.get_u64("bs")?,
        misalign: ctx.get_u64("misalign")? as usize,
        direct: ctx.get_bool("direct")?,
        clients: ctx.get_u64("clients")?,
    };
    let aligned = s.size.is_multiple_of(4096) && s.bs.is_multiple_of(512) && s.misalign.is_multiple_of(512);
    if s.direct && !aligned {
        return Err(EngineError::Usage(format!(
            "direct I/O needs size a multiple of 4k and bs and misalign multiples of 512 (got size {}, bs {}, \
             misalign {}); use direct=false to study unaligned buffers through the page cache",
            s.size, s.bs, s.misalign
        )));
    }
    Ok(s)
}

/// What `SmallRead` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "smallread",
    about:
        "seed 001's XEDIT loop: load a small file (open, read whole, close) again and again; transactions/s",
    area: "Disk I/O",
    summary_area: AreaRule::Fixed(SummaryArea::DiskIo),
    unit: WorkUnit::Transactions,
    caps: Caps { needs_disk: true, paced: true, ..Caps::NONE },
    options: &PACED_OPTIONS,
    figures: &pace::FIGURES,
    shortcuts: &[shortcuts::CLIENTS],
};

impl Engine for SmallRead {
    fn info(&self) -> &'static EngineInfo {
        &INFO
    }
    fn validate(&self, ctx: &CellContext) -> Result<(), EngineError> {
        setup(ctx)?;
        PaceSpec::of(ctx).map(|_| ())
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        let s = setup(ctx)?;
        let pace = PaceSpec::of(ctx)?;
        let content = AlignedBuf::new(s.size as usize)?;
        let mut files = Vec::new();
        for c in 0..s.clients {
            let path = ctx.work_dir.join(format!("smallread-{c}.dat"));
            let mut f = std::fs::File::create(&path)
                .map_err(|e| EngineError::io("cannot create the file to load", &path, e))?;
            f.write_all(content.as_slice()).and_then(|_| f.sync_all()).map_err(|e| {
                EngineError::io("cannot write the file to load; is the target full?", &path, e)
            })?;
            files.push(path);
        }
        // The direct open is tried here, so a filesystem without O_DIRECT fails before the window.
        open_file(&files[0], OpenMode { direct: s.direct, ..OpenMode::default() })?;
        Ok(Box::new(Cell { setup: s, files, pace }))
    }
}

struct Cell {
    setup: Setup,
    files: Vec<PathBuf>,
    pace: PaceSpec,
}

/// One whole load of `path`; the bytes read.
fn load(path: &PathBuf, s: &Setup, buf: &mut AlignedBuf) -> Result<u64, EngineError> {
    let f = open_file(path, OpenMode { direct: s.direct, ..OpenMode::default() })?;
    let slot = &mut buf.as_mut_slice()[s.misalign..];
    let mut done = 0u64;
    while done < s.size {
        let want = (s.size - done).min(s.bs) as usize;
        let n = f
            .read_at(&mut slot[..want], done)
            .map_err(|e| EngineError::io("reading the file to load", path, e))?;
        if n == 0 {
            return Err(EngineError::Failed(format!("{} ended early, at {done} bytes", path.display())));
        }
        done += n as u64;
    }
    Ok(done)
}

impl Workload for Cell {
    fn run(&mut self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        let failed = AtomicBool::new(false);
        let error = std::sync::Mutex::new(None);
        let tally = PaceTally::default();
        let driven = std::thread::scope(|scope| {
            for (i, path) in self.files.iter().enumerate() {
                let (s, failed, error, tally) = (&self.setup, &failed, &error, &tally);
                let (pace, workers) = (&self.pace, self.files.len());
                scope.spawn(move || {
                    let mut meter = WorkerMeter::new();
                    let mut pacer = Pacer::new(pace, i, workers, ctl);
                    let outcome = AlignedBuf::new(s.bs as usize + s.misalign).and_then(|mut buf| {
                        while meter.tick(ctl) && !failed.load(Ordering::Relaxed) {
                            let Some(t0) = pacer.next(ctl, &mut meter) else { continue };
                            let bytes = load(path, s, &mut buf)?;
                            let ns = pacer.done(ctl, &meter, t0);
                            meter.count(ctl, "load", ns, 1.0, bytes, 0);
                        }
                        Ok(())
                    });
                    if let Err(e) = outcome {
                        failed.store(true, Ordering::Relaxed);
                        error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                    }
                    meter.finish(rec);
                    pacer.finish(tally);
                });
            }
            ctl.drive_window_until_failed(&failed)
        });
        // A worker's own error says more than "a worker failed".
        if let Some(e) = error.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(e);
        }
        driven?;
        pace::record(rec, &self.pace, &tally, ctl);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RealClock, Totals};
    use racehorse_core::{CellSpec, Params, Value};
    use std::sync::Arc;
    use std::time::Duration;

    struct NoHooks;
    impl crate::WindowHooks for NoHooks {}

    fn ctx(dir: &std::path::Path, opts: &[(&str, Value)]) -> CellContext {
        let mut params = Params::new();
        for o in OPTIONS {
            params.insert(o.name.into(), o.parse_text(o.default).expect("default"));
        }
        // (rate and qos have no default: absent = flat out.)
        for (k, v) in opts {
            params.insert((*k).into(), v.clone());
        }
        let spec = CellSpec { workload: "smallread".into(), params, variant: "default".into(), rep: 1 };
        CellContext { spec, work_dir: dir.to_path_buf(), cpus: 1, env: Default::default() }
    }

    fn run(c: &CellContext) -> (Result<(), EngineError>, Totals) {
        let mut cell = SmallRead.prepare(c).expect("prepare");
        let ctl = Control::new(
            Duration::from_millis(20),
            Duration::from_millis(300),
            Arc::new(RealClock::default()),
            Box::new(NoHooks),
            Default::default(),
        );
        let rec = Recorder::new();
        let res = cell.run(&ctl, &rec);
        (res, rec.totals())
    }

    #[test]
    fn loads_are_counted_whole_cached_direct_and_misaligned() {
        let dir = tempfile::tempdir_in("/var/tmp").expect("tmp");
        for opts in [
            vec![("direct", Value::Bool(false)), ("misalign", Value::Int(3)), ("bs", Value::Int(10_000))],
            vec![("direct", Value::Bool(true)), ("misalign", Value::Int(512)), ("clients", Value::Int(2))],
        ] {
            let (res, t) = run(&ctx(dir.path(), &opts));
            res.expect("run");
            assert!(t.units >= 1.0, "{opts:?}: some loads in 300 ms");
            assert_eq!(
                t.bytes_read,
                t.units as u64 * 400 * 1024,
                "{opts:?}: every load reads the whole file"
            );
            assert_eq!(t.latencies["load"].count, t.units as u64);
        }
    }

    #[test]
    fn paced_loads_keep_their_rate_and_record_the_qos() {
        let dir = tempfile::tempdir_in("/var/tmp").expect("tmp");
        let opts = [
            ("direct", Value::Bool(false)),
            ("clients", Value::Int(2)),
            ("rate", Value::Float(200.0)),
            ("qos", Value::Str("p99<=10s".into())),
        ];
        let (res, t) = run(&ctx(dir.path(), &opts));
        res.expect("run");
        // 200/s over a 300 ms window: 60 loads, give or take the window's edges.
        let achieved = t.extra["pace_achieved_per_s"];
        assert!((170.0..=230.0).contains(&achieved), "{achieved}");
        assert_eq!(t.extra["pace_target_per_s"], 200.0);
        assert_eq!(t.extra["qos_held"], 1.0);
        assert_eq!(t.latencies["load"].count as f64, t.units, "every load timed from its intended start");
        let e =
            SmallRead.validate(&ctx(dir.path(), &[("qos", Value::Str("p95".into()))])).expect_err("bad qos");
        assert!(matches!(e, EngineError::Usage(_)) && e.to_string().contains("PERCENTILE<=DURATION"), "{e}");
    }

    #[test]
    fn impossible_settings_are_refused_with_the_reason() {
        let dir = tempfile::tempdir().expect("tmp");
        let e =
            SmallRead.validate(&ctx(dir.path(), &[("misalign", Value::Int(100))])).expect_err("unaligned");
        assert!(e.to_string().contains("direct=false"), "{e}");
        let gone = dir.path().join("missing");
        let e = SmallRead.prepare(&ctx(&gone, &[])).err().expect("no such directory");
        assert!(e.to_string().contains("cannot create the file to load"), "{e}");
    }
}
