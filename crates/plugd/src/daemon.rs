//! The daemon: load and check the config, take the lock, enforce CPU_MIN/CPU_MAX, then every
//! UPDATE seconds sample, decide and change at most one CPU (and one memory step). SIGTERM and
//! SIGINT restore what it found and exit 0; SIGHUP reloads the config (an invalid new config
//! keeps the old one and says why); a fatal error restores and exits 1.

use crate::cpus::{CpuBackend, CpusetCpus, SysfsCpus};
use crate::decide::{balloon_target, block_step, cpu_step, BlockStep, CpuLimits, CpuStep, MemRules};
use crate::lifecycle::{acquire, Paths};
use crate::log::Log;
use crate::memory::{CmmPages, MemBlocks};
use crate::sample::{read_sample, Needs};
use crate::values::History;
use racehorse_machine::{Guard, SysRoot};
use racehorse_rules::{parse_config, Config, Name};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which CPUs the daemon sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// Real hotplug of cpuN/online (root).
    Sysfs,
    /// The cpuset.cpus of this cgroup directory.
    Cpuset(PathBuf),
}

/// Which memory the daemon sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryMode {
    /// The CMM balloon when /proc/sys/vm/cmm_pages exists, else none.
    Auto,
    Off,
    /// sysfs memory blocks (opt-in: offlining memory on a host is invasive).
    Blocks,
}

#[derive(Debug, Clone)]
pub struct Options {
    pub config: PathBuf,
    pub root: SysRoot,
    pub backend: Backend,
    pub memory: MemoryMode,
    /// CPUs never touched, besides the kernel's isolated and nohz_full ones.
    pub exclude: Vec<u32>,
    pub paths: Paths,
    /// Stop after this many intervals (tests); None = until a signal.
    pub max_intervals: Option<u64>,
    /// Replaces UPDATE's seconds (tests).
    pub interval: Option<Duration>,
    /// The machine lock to hold while running (one racehorse changes the machine at a time);
    /// None for a fake machine, or for a daemon that a run started as a variant and whose
    /// run holds the lock.
    pub machine_lock: Option<PathBuf>,
}

/// Set by signal handlers; checked by the loop.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    pub stop: Arc<AtomicBool>,
    pub reload: Arc<AtomicBool>,
    /// Read end of a socket a signal handler writes to: the loop sleeps a whole interval in
    /// poll(2) and wakes at once on a signal. Without it, it sleeps in 100 ms slices.
    pub wake: Option<Arc<std::os::unix::net::UnixStream>>,
}

impl Flags {
    /// Flags set by SIGTERM/SIGINT (stop) and SIGHUP (reload), with a wake-up socket.
    pub fn from_signals() -> std::io::Result<Flags> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let flags = Flags::default();
        let (rx, tx) = std::os::unix::net::UnixStream::pair()?;
        rx.set_nonblocking(true)?;
        for (sig, flag) in [(SIGTERM, &flags.stop), (SIGINT, &flags.stop), (SIGHUP, &flags.reload)] {
            // The flag first: the loop woken by the socket then sees it set.
            signal_hook::flag::register(sig, flag.clone())?;
            signal_hook::low_level::pipe::register(sig, tx.try_clone()?)?;
        }
        Ok(Flags { wake: Some(Arc::new(rx)), ..flags })
    }

    /// Sleeps until `until` or a signal; true when asked to stop.
    fn sleep_until(&self, until: Instant) -> bool {
        use std::io::Read;
        use std::os::unix::io::AsRawFd;
        loop {
            if self.stop.load(Ordering::SeqCst) {
                return true;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() || self.reload.load(Ordering::SeqCst) {
                return false;
            }
            match &self.wake {
                Some(sock) => {
                    let mut fd = libc::pollfd { fd: sock.as_raw_fd(), events: libc::POLLIN, revents: 0 };
                    let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
                    // SAFETY: one valid pollfd; EINTR and timeouts just loop.
                    unsafe { libc::poll(&mut fd, 1, ms) };
                    let mut buf = [0u8; 64];
                    while matches!((&**sock).read(&mut buf), Ok(n) if n > 0) {}
                }
                None => std::thread::sleep(left.min(Duration::from_millis(100))),
            }
        }
    }
}

/// How the daemon ended badly: exit code (2 = bad config or usage, 1 = runtime) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    pub code: u8,
    pub msg: String,
}

fn usage(msg: impl Into<String>) -> Exit {
    Exit { code: 2, msg: msg.into() }
}

fn fatal(msg: impl Into<String>) -> Exit {
    Exit { code: 1, msg: msg.into() }
}

/// Reads and parses a config file; errors read `FILE:LINE:COL: message`.
pub fn load(path: &Path) -> Result<Config, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_config(&text).map_err(|e| format!("{}:{}:{}: {}", path.display(), e.line, e.column, e.message))
}

/// The files a config needs sampled.
pub fn needs(cfg: &Config) -> Needs {
    let names = cfg.names();
    let scalar = |n: &str| names.contains_key(&Name::Scalar(n.into()));
    Needs {
        meminfo: scalar("freemem") || names.keys().any(|n| matches!(n, Name::Meminfo(_))),
        vmstat: scalar("swaprate") || scalar("apcr") || names.keys().any(|n| matches!(n, Name::Vmstat(_))),
    }
}

/// CPUs the kernel keeps to itself: isolated and nohz_full.
fn kernel_excluded(root: &SysRoot) -> Vec<u32> {
    ["devices/system/cpu/isolated", "devices/system/cpu/nohz_full"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(root.sys(f)).ok())
        .filter_map(|t| racehorse_machine::parse_cpu_list(t.trim()).ok())
        .flatten()
        .collect()
}

enum Mem {
    Off,
    Cmm(CmmPages),
    Blocks(MemBlocks),
}

struct Daemon {
    opts: Options,
    cfg: Config,
    log: Log,
    guard: Guard,
    cpus: Box<dyn CpuBackend>,
    mem: Mem,
    history: History,
    needs: Needs,
    instance: crate::lifecycle::Instance,
    /// Held for the daemon's life; released when it exits (or dies).
    _machine: Option<racehorse_machine::MachineLock>,
}

/// Runs the daemon until a signal (or `max_intervals`); `ready` is called once the limits
/// are enforced (the detached parent then exits 0). Everything changed is put back on return.
pub fn run(
    opts: Options,
    log: Log,
    flags: &Flags,
    ready: &mut dyn FnMut(Result<(), String>),
) -> Result<(), Exit> {
    let mut d = match start(opts, log) {
        Ok(d) => d,
        Err(e) => {
            ready(Err(e.msg.clone()));
            return Err(e);
        }
    };
    let started = d.enforce_limits();
    ready(started.clone().map_err(|e| e.msg));
    let result = started.and_then(|_| d.main_loop(flags));
    let restored = d.guard.restore();
    match (&result, restored) {
        (_, Err(e)) => {
            d.log.error(format!("could not restore everything: {e}; run `racehorse plugd restore`"))
        }
        (Ok(()), Ok(())) => d.log.info("stopped; the CPUs and memory found at start are restored"),
        (Err(_), Ok(())) => d.log.info("restored the CPUs and memory found at start"),
    }
    result
}

fn start(opts: Options, log: Log) -> Result<Daemon, Exit> {
    let cfg = load(&opts.config).map_err(usage)?;
    for w in &cfg.warnings {
        log.info(format!("note: {w}"));
    }
    // Every meminfo.X and vmstat.X the rules read must exist on this kernel (upstream exits
    // at run time instead); the error gives FILE:LINE:COL and close names.
    crate::check::check_fields(&opts.config, &cfg, &opts.root)?;
    let (instance, note) = acquire(&opts.paths).map_err(fatal)?;
    if let Some(n) = note {
        log.info(n);
    }
    let machine = match &opts.machine_lock {
        Some(path) => Some(
            racehorse_machine::MachineLock::acquire(path, "racehorse plugd (the hotplug daemon)")
                .map_err(|e| fatal(e.to_string()))?,
        ),
        None => None,
    };
    match racehorse_machine::recover(&opts.root, &opts.paths.state) {
        Ok(Some(what)) => log.info(what),
        Ok(None) => {}
        Err(e) => return Err(fatal(format!("restoring what a killed plugd left: {e}"))),
    }
    let guard = Guard::new(opts.root.clone(), opts.paths.state.clone()).map_err(|e| fatal(e.to_string()))?;
    let mut exclude = opts.exclude.clone();
    exclude.extend(kernel_excluded(&opts.root));
    let cpus: Box<dyn CpuBackend> = match &opts.backend {
        Backend::Sysfs => {
            Box::new(SysfsCpus::new(opts.root.clone(), exclude).map_err(|e| fatal(e.to_string()))?)
        }
        Backend::Cpuset(dir) => {
            Box::new(CpusetCpus::new(&opts.root, dir, exclude).map_err(|e| usage(e.to_string()))?)
        }
    };
    let mem = memory_backend(&opts, &cfg, &log)?;
    if !cfg.cpu_control() && matches!(mem, Mem::Off) {
        return Err(usage(
            "nothing to control: CPU control needs CPU_MIN, CPU_MAX, HOTPLUG and HOTUNPLUG; memory control needs \
             CMM_MIN, CMM_MAX, CMM_INC, MEMPLUG, MEMUNPLUG and /proc/sys/vm/cmm_pages (or --memory blocks)",
        ));
    }
    let history = History::new(cfg.history_depth());
    let needs = needs(&cfg);
    Ok(Daemon { opts, cfg, log, guard, cpus, mem, history, needs, instance, _machine: machine })
}

fn memory_backend(opts: &Options, cfg: &Config, log: &Log) -> Result<Mem, Exit> {
    if !cfg.memory_rules() || opts.memory == MemoryMode::Off {
        return Ok(Mem::Off);
    }
    match opts.memory {
        MemoryMode::Blocks => {
            MemBlocks::new(&opts.root).map(Mem::Blocks).map_err(|e| usage(format!("--memory blocks: {e}")))
        }
        _ if CmmPages::available(&opts.root) => Ok(Mem::Cmm(CmmPages { root: opts.root.clone() })),
        _ => {
            log.info(
                "memory control off: no /proc/sys/vm/cmm_pages (use --memory blocks for sysfs memory blocks)",
            );
            Ok(Mem::Off)
        }
    }
}

impl Daemon {
    fn limits(&self) -> Result<CpuLimits, Exit> {
        let present = self.cpus.present().map_err(|e| fatal(e.to_string()))?;
        let min = self.cfg.cpu_min.unwrap_or(1);
        let max = match self.cfg.cpu_max.unwrap_or(0) {
            0 => present,
            m => m,
        };
        if min > present {
            return Err(fatal(format!("CPU_MIN is {min} but only {present} CPUs are present")));
        }
        Ok(CpuLimits { min, max })
    }

    fn online(&self) -> Result<u32, Exit> {
        self.cpus.online().map(|v| v.len() as u32).map_err(|e| fatal(e.to_string()))
    }

    /// Brings the CPU count into [CPU_MIN, CPU_MAX], one CPU at a time, and the balloon into
    /// [CMM_MIN, CMM_MAX].
    fn enforce_limits(&mut self) -> Result<(), Exit> {
        if self.cfg.cpu_control() {
            let lim = self.limits()?;
            let log = self.log.clone();
            let mut note = |m: String| log.debug(m);
            while self.online()? < lim.min {
                match self.cpus.plug(&mut self.guard, &mut note).map_err(|e| fatal(e.to_string()))? {
                    Some(c) => self.log.info(format!("cpu{c} plugged to reach CPU_MIN {}", lim.min)),
                    None => {
                        return Err(fatal(format!("cannot reach CPU_MIN {}: no CPU can be plugged", lim.min)))
                    }
                }
            }
            while self.online()? > lim.max {
                match self.cpus.unplug(&mut self.guard, &mut note).map_err(|e| fatal(e.to_string()))? {
                    Some(c) => self.log.info(format!("cpu{c} unplugged to respect CPU_MAX {}", lim.max)),
                    None => break,
                }
            }
            self.log.info(format!(
                "managing CPUs with {}: {} online, limits {}..{}, every {} s; first decision after {} samples",
                self.cpus.name(),
                self.online()?,
                lim.min,
                lim.max,
                self.cfg.update_s.unwrap_or(1),
                self.history.depth() + 1
            ));
        }
        if let Mem::Cmm(c) = &self.mem {
            let (min, max) = (self.cfg.cmm_min.unwrap_or(0), self.cfg.cmm_max.unwrap_or(0));
            let now = c.pages().map_err(|e| fatal(e.to_string()))?;
            let clamped = now.clamp(min, max.max(min));
            if clamped != now {
                c.set(&mut self.guard, clamped).map_err(|e| fatal(e.to_string()))?;
            }
        }
        self.instance.write_pid().map_err(fatal)
    }

    fn interval(&self) -> Duration {
        self.opts.interval.unwrap_or(Duration::from_secs(self.cfg.update_s.unwrap_or(1).max(1)))
    }

    fn main_loop(&mut self, flags: &Flags) -> Result<(), Exit> {
        let mut done = 0u64;
        loop {
            if flags.reload.swap(false, Ordering::SeqCst) {
                self.reload()?;
            }
            self.step()?;
            done += 1;
            if self.opts.max_intervals.is_some_and(|m| done >= m) {
                return Ok(());
            }
            if flags.sleep_until(Instant::now() + self.interval()) {
                self.log.info("signal received: stopping");
                return Ok(());
            }
        }
    }

    /// SIGHUP: parse the file again; a good config replaces the old one (history restarts
    /// when its depth changed, limits are enforced again); a bad one is logged and ignored.
    fn reload(&mut self) -> Result<(), Exit> {
        let next = load(&self.opts.config).and_then(|c| {
            crate::check::check_fields(&self.opts.config, &c, &self.opts.root).map(|_| c).map_err(|e| e.msg)
        });
        match next {
            Err(e) => {
                self.log.error(format!("reload refused, keeping the running config: {e}"));
                Ok(())
            }
            Ok(cfg) => {
                let present = self.cpus.present().map_err(|e| fatal(e.to_string()))?;
                if cfg.cpu_control() && cfg.cpu_min.unwrap_or(1) > present {
                    self.log.error(format!(
                        "reload refused, keeping the running config: CPU_MIN is {} but only {present} CPUs are present",
                        cfg.cpu_min.unwrap_or(1)
                    ));
                    return Ok(());
                }
                if cfg.history_depth() != self.history.depth() {
                    self.history = History::new(cfg.history_depth());
                }
                if matches!(self.mem, Mem::Off) {
                    self.mem = memory_backend(&self.opts, &cfg, &self.log)?;
                }
                self.needs = needs(&cfg);
                self.cfg = cfg;
                self.log.info(format!("reloaded {}", self.opts.config.display()));
                if let Err(e) = self.enforce_limits() {
                    self.log.error(format!("after the reload: {}; running on", e.msg));
                }
                Ok(())
            }
        }
    }

    /// One interval: sample, then a CPU step and a memory step.
    fn step(&mut self) -> Result<(), Exit> {
        let online = self.online()?;
        let present = self.cpus.present().map_err(|e| fatal(e.to_string()))?;
        let s =
            read_sample(&self.opts.root, self.needs, online, present).map_err(|e| fatal(e.to_string()))?;
        self.history.push(s);
        if !self.history.ready() {
            return Ok(());
        }
        if self.cfg.cpu_control() {
            self.cpu_interval(online)?;
        }
        self.memory_interval()
    }

    fn cpu_interval(&mut self, online: u32) -> Result<(), Exit> {
        let lim = self.limits()?;
        let (Some(hp), Some(hu)) = (&self.cfg.hotplug, &self.cfg.hotunplug) else { return Ok(()) };
        let step = match cpu_step(&hp.expr, &hu.expr, &self.history, online, lim) {
            Ok(s) => s,
            Err(e) => {
                self.log.info(format!("skipping this interval's CPU step: {e}"));
                return Ok(());
            }
        };
        self.log.debug(format!("onumcpus {online}: {step:?}"));
        let log = self.log.clone();
        let mut note = |m: String| log.debug(m);
        let changed = match step {
            CpuStep::Plug => self.cpus.plug(&mut self.guard, &mut note),
            CpuStep::Unplug => self.cpus.unplug(&mut self.guard, &mut note),
            CpuStep::Hold => return Ok(()),
        };
        match changed {
            Ok(Some(c)) => self.log.info(format!(
                "{} cpu{c} ({} → {})",
                if step == CpuStep::Plug { "plugged" } else { "unplugged" },
                online,
                self.online()?
            )),
            Ok(None) => self.log.debug("no CPU could be changed"),
            Err(e) => self.log.error(format!("CPU step failed: {e}")),
        }
        Ok(())
    }

    fn memory_interval(&mut self) -> Result<(), Exit> {
        let c = &self.cfg;
        let (Some(mp), Some(mu), Some(inc)) = (&c.memplug, &c.memunplug, &c.cmm_inc) else { return Ok(()) };
        let dec = c.cmm_dec.as_ref().unwrap_or(inc);
        let r = MemRules {
            memplug: &mp.expr,
            memunplug: &mu.expr,
            inc: &inc.expr,
            dec: &dec.expr,
            min: c.cmm_min.unwrap_or(0),
            max: c.cmm_max.unwrap_or(0),
        };
        let log = self.log.clone();
        let outcome = match &mut self.mem {
            Mem::Off => return Ok(()),
            Mem::Cmm(cmm) => cmm_step(cmm, &r, &self.history, &mut self.guard),
            Mem::Blocks(b) => blocks_step(b, &r, &self.history, &mut self.guard, &log),
        };
        match outcome {
            Ok(m) if !m.is_empty() => log.info(m),
            Ok(_) => {}
            Err(e) => log.error(format!("memory step failed: {e}")),
        }
        Ok(())
    }
}

/// What a memory step did ("" = nothing), or the error of a failed change.
type MemOutcome = Result<String, racehorse_machine::MachineError>;

fn skipped(e: racehorse_rules::EvalError) -> MemOutcome {
    Ok(format!("skipping this interval's memory step: {e}"))
}

fn cmm_step(cmm: &CmmPages, r: &MemRules<'_>, h: &History, g: &mut Guard) -> MemOutcome {
    let now = cmm.pages()?;
    match balloon_target(r, h, now) {
        Err(e) => skipped(e),
        Ok(next) if next == now => Ok(String::new()),
        Ok(next) => cmm.set(g, next).map(|_| format!("cmm_pages {now} → {next}")),
    }
}

fn blocks_step(b: &mut MemBlocks, r: &MemRules<'_>, h: &History, g: &mut Guard, log: &Log) -> MemOutcome {
    match block_step(r, h, b.pages(), b.block_pages) {
        Err(e) => skipped(e),
        Ok(BlockStep::Hold) => Ok(String::new()),
        Ok(BlockStep::Offline) => b
            .offline_one(g, &mut |m| log.debug(m))
            .map(|o| o.map_or("no memory block could go offline".into(), |n| format!("memory{n} offline"))),
        Ok(BlockStep::Online) => {
            b.online_one(g).map(|o| o.map_or(String::new(), |n| format!("memory{n} online")))
        }
    }
}

#[cfg(test)]
#[path = "daemon_tests.rs"]
mod tests;
