//! CPU backends: `sysfs` hotplugs real CPUs (cpuN/online), `cpuset` resizes a cgroup's
//! cpuset.cpus (replay only counts, see replay.rs). Changes go through the machine Guard, so the
//! CPUs found at start come back on exit, on errors and, from the state file, after SIGKILL.
//! Plugging takes the lowest eligible CPU, unplugging the highest, in numeric order; a CPU
//! without an `online` file, an excluded CPU or one whose `configure` is 0 is never touched,
//! and a write that fails moves on to the next candidate.

use racehorse_machine::cpuctl::{format_cpu_list, online_file, parse_cpu_list, possible_cpus};
use racehorse_machine::{Guard, MachineError, SysRoot};
use std::path::PathBuf;

/// A change made: which CPU, or why none.
pub type Changed = Result<Option<u32>, MachineError>;

/// Something whose number of CPUs the daemon sizes.
pub trait CpuBackend {
    fn name(&self) -> &'static str;
    /// CPUs in use now (sorted).
    fn online(&self) -> Result<Vec<u32>, MachineError>;
    /// The pool CPU_MAX = 0 stands for.
    fn present(&self) -> Result<u32, MachineError>;
    /// Adds one CPU; Ok(None) when no CPU is eligible. Messages of failed candidates go to `log`.
    fn plug(&mut self, g: &mut Guard, log: &mut dyn FnMut(String)) -> Changed;
    fn unplug(&mut self, g: &mut Guard, log: &mut dyn FnMut(String)) -> Changed;
}

/// Real CPU hotplug through /sys/devices/system/cpu.
pub struct SysfsCpus {
    root: SysRoot,
    exclude: Vec<u32>,
    /// Present CPUs, read once (CPU_MAX = 0 stands for them).
    present: u32,
}

impl SysfsCpus {
    pub fn new(root: SysRoot, exclude: Vec<u32>) -> Result<SysfsCpus, MachineError> {
        let present = match std::fs::read_to_string(root.sys("devices/system/cpu/present")) {
            Ok(t) => parse_cpu_list(&t)?.len() as u32,
            Err(_) => possible_cpus(&root)?.len() as u32,
        };
        Ok(SysfsCpus { root, exclude, present })
    }

    /// CPUs the daemon may switch: with an online file, not excluded, configured.
    fn switchable(&self) -> Result<Vec<(u32, bool)>, MachineError> {
        let mut out = Vec::new();
        for cpu in possible_cpus(&self.root)? {
            let file = online_file(&self.root, cpu);
            let Ok(state) = std::fs::read_to_string(&file) else { continue };
            let configure = self.root.sys(format!("devices/system/cpu/cpu{cpu}/configure"));
            let standby = std::fs::read_to_string(configure).map(|t| t.trim() == "0").unwrap_or(false);
            if self.exclude.contains(&cpu) || standby {
                continue;
            }
            out.push((cpu, state.trim() == "1"));
        }
        Ok(out)
    }

    fn switch(&self, g: &mut Guard, want_on: bool, log: &mut dyn FnMut(String)) -> Changed {
        let online = self.online()?;
        let mut candidates: Vec<u32> =
            self.switchable()?.into_iter().filter(|(_, on)| *on != want_on).map(|(c, _)| c).collect();
        if !want_on {
            candidates.reverse();
            if online.len() <= 1 {
                return Ok(None);
            }
        }
        // One CPU's online file at a time, through the Guard: CPUs that are possible but not
        // present (no cpuN directory) are never touched.
        let value = if want_on { "1" } else { "0" };
        for cpu in candidates {
            match g.set_files(&[(online_file(&self.root, cpu), value.to_string())]) {
                Ok(()) => return Ok(Some(cpu)),
                Err(e) => log(format!("cpu{cpu}: {e}; trying the next CPU")),
            }
        }
        Ok(None)
    }
}

impl CpuBackend for SysfsCpus {
    fn name(&self) -> &'static str {
        "sysfs"
    }
    /// The kernel's online list (one read per interval); in a fixture tree, which nothing
    /// keeps in sync, from each cpuN: online when its `online` file reads 1 or is absent.
    fn online(&self) -> Result<Vec<u32>, MachineError> {
        if self.root.is_host() {
            return racehorse_machine::online_cpus(&self.root);
        }
        let mut out = Vec::new();
        for cpu in possible_cpus(&self.root)? {
            if !self.root.sys(format!("devices/system/cpu/cpu{cpu}")).is_dir() {
                continue;
            }
            match std::fs::read_to_string(online_file(&self.root, cpu)) {
                Ok(t) if t.trim() != "1" => {}
                _ => out.push(cpu),
            }
        }
        Ok(out)
    }
    fn present(&self) -> Result<u32, MachineError> {
        Ok(self.present)
    }
    fn plug(&mut self, g: &mut Guard, log: &mut dyn FnMut(String)) -> Changed {
        self.switch(g, true, log)
    }
    fn unplug(&mut self, g: &mut Guard, log: &mut dyn FnMut(String)) -> Changed {
        self.switch(g, false, log)
    }
}

/// A cgroup's cpuset: for containers and for sizing one service without touching the host.
pub struct CpusetCpus {
    /// The cgroup's cpuset.cpus file (v2 or v1).
    pub file: PathBuf,
    /// CPUs it may use (the machine's online CPUs when the daemon started).
    pub pool: Vec<u32>,
    pub exclude: Vec<u32>,
}

impl CpusetCpus {
    /// `cgroup` is the cgroup directory (e.g. /sys/fs/cgroup/myservice).
    pub fn new(
        root: &SysRoot,
        cgroup: &std::path::Path,
        exclude: Vec<u32>,
    ) -> Result<CpusetCpus, MachineError> {
        let file = cgroup.join("cpuset.cpus");
        if !file.is_file() {
            return Err(MachineError::Invalid(format!(
                "{} has no cpuset.cpus; enable the cpuset controller for it (cgroup v2: add +cpuset to the \
                 parent's cgroup.subtree_control) or give a cpuset cgroup",
                cgroup.display()
            )));
        }
        let pool = racehorse_machine::online_cpus(root)?;
        Ok(CpusetCpus { file, pool, exclude })
    }

    fn write(&self, g: &mut Guard, cpus: &[u32]) -> Result<(), MachineError> {
        g.set_files(&[(self.file.clone(), format_cpu_list(cpus))])
    }
}

impl CpuBackend for CpusetCpus {
    fn name(&self) -> &'static str {
        "cpuset"
    }
    fn online(&self) -> Result<Vec<u32>, MachineError> {
        let text = std::fs::read_to_string(&self.file).map_err(|e| MachineError::io(&self.file, e))?;
        if text.trim().is_empty() {
            return Ok(self.pool.clone());
        }
        parse_cpu_list(&text)
    }
    fn present(&self) -> Result<u32, MachineError> {
        Ok(self.pool.len() as u32)
    }
    fn plug(&mut self, g: &mut Guard, _log: &mut dyn FnMut(String)) -> Changed {
        let mut set = self.online()?;
        let Some(cpu) = self.pool.iter().copied().find(|c| !set.contains(c) && !self.exclude.contains(c))
        else {
            return Ok(None);
        };
        set.push(cpu);
        set.sort_unstable();
        self.write(g, &set).map(|_| Some(cpu))
    }
    fn unplug(&mut self, g: &mut Guard, _log: &mut dyn FnMut(String)) -> Changed {
        let set = self.online()?;
        let Some(cpu) = set.iter().rev().copied().find(|c| !self.exclude.contains(c)) else {
            return Ok(None);
        };
        if set.len() <= 1 {
            return Ok(None);
        }
        let rest: Vec<u32> = set.into_iter().filter(|&c| c != cpu).collect();
        self.write(g, &rest).map(|_| Some(cpu))
    }
}
