//! `racehorse plugd`: run the hotplug daemon (foreground or detached), replay a trace, record
//! one, check a config, or restore after a killed daemon.

use crate::args_plugd::{BackendArg, MemoryArg, PlugdArgs, PlugdCmd};
use crate::{CmdResult, Failure};
use racehorse_machine::SysRoot;
use racehorse_plugd::detach::{detach, Ready};
use racehorse_plugd::log::Log;
use racehorse_plugd::{Backend, Exit, Flags, MemoryMode, Options, Paths};
use racehorse_runner::duration::parse_duration;
use std::path::PathBuf;

fn exit(e: Exit) -> Failure {
    Failure { code: e.code, error: anyhow::anyhow!("{}", e.msg) }
}

fn paths(a: &PlugdArgs) -> Paths {
    let d = Paths::default_paths();
    Paths {
        lock: a.lock_file.clone().unwrap_or(d.lock),
        pid: a.pid_file.clone().unwrap_or(d.pid),
        state: a.state_file.clone().unwrap_or(d.state),
    }
}

/// /proc and /sys, or the fake machine given with --sysroot.
fn root(a: &PlugdArgs) -> Result<SysRoot, Failure> {
    match &a.sysroot {
        None => Ok(SysRoot::host()),
        Some(d) if d.join("proc").is_dir() && d.join("sys").is_dir() => Ok(SysRoot::at(d)),
        Some(d) => Err(Failure::usage(format!("--sysroot {}: needs proc/ and sys/ inside", d.display()))),
    }
}

/// `racehorse plugd`; `verbose` is the global -v (or plugd's hidden cpuplugd-style -V).
pub fn plugd(a: &PlugdArgs, verbose: bool) -> CmdResult {
    let root = root(a)?;
    match &a.cmd {
        Some(PlugdCmd::Check { file }) => {
            racehorse_plugd::check::check(file, &root, &mut std::io::stdout()).map_err(exit)?;
            Ok(0)
        }
        Some(PlugdCmd::Record { output, interval, count }) => {
            record(&root, output.as_ref(), interval, *count)
        }
        Some(PlugdCmd::Restore { state_file }) => {
            let file = state_file.clone().unwrap_or(Paths::default_paths().state);
            match racehorse_machine::recover(&root, &file).map_err(|e| anyhow::anyhow!("{e}"))? {
                Some(what) => println!("{what}"),
                None => {
                    println!("nothing to restore ({} is absent or its daemon still runs)", file.display())
                }
            }
            Ok(0)
        }
        None => daemon(a, root, verbose || a.verbose_cpuplugd),
    }
}

fn record(root: &SysRoot, output: Option<&PathBuf>, interval: &str, count: Option<u64>) -> CmdResult {
    let every = parse_duration(interval)
        .filter(|d| !d.is_zero())
        .ok_or_else(|| Failure::usage(format!("--interval {interval}: expected e.g. 1s or 500ms")))?;
    let stop = racehorse_machine::install_signal_flag().map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut out: Box<dyn std::io::Write> = match output {
        Some(p) => Box::new(
            std::fs::File::create(p)
                .map_err(|e| Failure::usage(format!("cannot write {}: {e}", p.display())))?,
        ),
        None => Box::new(std::io::stdout()),
    };
    let n = racehorse_plugd::replay::record(root, &mut out, every, count, &stop)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(p) = output {
        eprintln!("recorded {n} samples to {}", p.display());
    }
    Ok(0)
}

fn replay(config: &std::path::Path, trace: &std::path::Path) -> CmdResult {
    let cfg = racehorse_plugd::load(config).map_err(Failure::usage)?;
    let samples = racehorse_plugd::replay::read_trace(trace).map_err(Failure::usage)?;
    let s = racehorse_plugd::replay::replay(&cfg, &samples, &mut std::io::stdout()).map_err(exit)?;
    println!(
        "{} samples: {} plugs, {} unplugs, {} skipped; {:.2} CPUs on average",
        s.samples, s.plugs, s.unplugs, s.skipped, s.mean_cpus
    );
    Ok(0)
}

/// The machine lock a daemon holds: none on a fake machine (--sysroot), none for a daemon a
/// run started as a variant (`RACEHORSE_UNDER_RUN` names that run, which holds the lock),
/// else the default one, shared with `racehorse run`.
fn machine_lock(a: &PlugdArgs) -> Option<PathBuf> {
    if a.sysroot.is_some() {
        return None;
    }
    let lock = racehorse_machine::lock::default_lock_file();
    let under = std::env::var("RACEHORSE_UNDER_RUN").ok().and_then(|v| v.parse::<u32>().ok());
    match under {
        Some(pid) if racehorse_machine::lock::holder(&lock).starts_with(&format!("pid {pid}:")) => None,
        _ => Some(lock),
    }
}

fn daemon(a: &PlugdArgs, root: SysRoot, verbose: bool) -> CmdResult {
    let Some(config) = &a.config else {
        return Err(Failure::usage(
            "racehorse plugd needs -c FILE (a cpuplugd.conf); see `racehorse plugd --help` and docs/plugd.md",
        ));
    };
    if let Some(trace) = &a.replay {
        return replay(config, trace);
    }
    let backend = match (a.backend, &a.cgroup) {
        (BackendArg::Sysfs, None) => Backend::Sysfs,
        (BackendArg::Cpuset, Some(dir)) => Backend::Cpuset(dir.clone()),
        (BackendArg::Cpuset, None) => return Err(Failure::usage("--backend cpuset needs --cgroup DIR")),
        (BackendArg::Sysfs, Some(_)) => return Err(Failure::usage("--cgroup goes with --backend cpuset")),
    };
    // Bad configs are refused before detaching, so the error reaches the terminal (exit 2).
    racehorse_plugd::load(config).map_err(Failure::usage)?;
    let mut ready =
        if a.foreground { Ready::none() } else { detach().map_err(|e| anyhow::anyhow!("{e}"))? };
    let log = if a.foreground { Log::stderr(verbose) } else { Log::to_syslog(verbose) };
    let flags = Flags::from_signals().map_err(|e| anyhow::anyhow!("signal handlers: {e}"))?;
    let opts = Options {
        config: config.clone(),
        root,
        backend,
        memory: match a.memory {
            MemoryArg::Auto => MemoryMode::Auto,
            MemoryArg::Off => MemoryMode::Off,
            MemoryArg::Blocks => MemoryMode::Blocks,
        },
        exclude: a.exclude.clone(),
        paths: paths(a),
        max_intervals: None,
        interval: None,
        machine_lock: machine_lock(a),
    };
    racehorse_plugd::run(opts, log, &flags, &mut |r| ready.report(r)).map_err(exit)?;
    Ok(0)
}
