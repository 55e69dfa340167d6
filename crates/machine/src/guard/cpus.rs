//! CPUs in use: a count (`set_cpus`) or an exact list (`set_cpu_list`), by hotplug (cpuN/online)
//! or by pinning the calling thread (affinity).

use super::{cpus_in, get_affinity, gettid, set_affinity, Guard, Setting};
use crate::cpuctl::{format_cpu_list, online_cpus, online_file, possible_cpus, CpuMethod};
use crate::error::MachineError;
use crate::root::{read_trim, write_ctl};
use crate::state;

/// What an error about a CPU that cannot go offline suggests.
#[derive(Clone, Copy)]
enum Asked {
    /// A CPU count: use the affinity method.
    Count,
    /// A CPU list: include that CPU, or use the affinity method.
    List,
}

impl Guard {
    /// Makes `n` CPUs available: Hotplug onlines the first `n` possible CPUs and offlines the rest
    /// (highest first); Affinity pins the calling thread (and threads it spawns later) to the
    /// first `n` CPUs of its original mask.
    pub fn set_cpus(&mut self, n: u32) -> Result<CpuMethod, MachineError> {
        if n == 0 {
            return Err(MachineError::Invalid("cannot run on 0 CPUs; ask for at least 1".into()));
        }
        let n = n as usize;
        match self.method {
            CpuMethod::Hotplug => {
                let possible = possible_cpus(&self.root)?;
                if n > possible.len() {
                    return Err(MachineError::Invalid(format!(
                        "cannot use {n} CPUs: this machine has {} possible CPUs ({})",
                        possible.len(),
                        format_cpu_list(&possible)
                    )));
                }
                self.hotplug(&possible[..n], &possible, Asked::Count)?;
            }
            CpuMethod::Affinity => {
                let (original, usable) = self.usable_cpus()?;
                if n > usable.len() {
                    return Err(MachineError::Invalid(format!(
                        "cannot use {n} CPUs: only {} are online and allowed to this process ({})",
                        usable.len(),
                        format_cpu_list(&usable)
                    )));
                }
                self.pin(&usable[..n], original)?;
            }
        }
        Ok(self.method)
    }

    /// Makes exactly `cpus` available. Hotplug: those CPUs online, every other possible CPU
    /// offline (a CPU without an online file, such as cpu0, must be in the list). Affinity:
    /// the calling thread is pinned to them; each must be online and in its original mask.
    pub fn set_cpu_list(&mut self, cpus: &[u32]) -> Result<CpuMethod, MachineError> {
        let mut want = cpus.to_vec();
        want.sort_unstable();
        want.dedup();
        if want.is_empty() {
            return Err(MachineError::Invalid(
                "cannot run on an empty CPU list; name at least one CPU".into(),
            ));
        }
        match self.method {
            CpuMethod::Hotplug => {
                let possible = possible_cpus(&self.root)?;
                let bad: Vec<u32> = want.iter().copied().filter(|c| !possible.contains(c)).collect();
                if !bad.is_empty() {
                    return Err(MachineError::Invalid(format!(
                        "CPUs {} do not exist on this machine; choose among its possible CPUs ({})",
                        format_cpu_list(&bad),
                        format_cpu_list(&possible)
                    )));
                }
                self.hotplug(&want, &possible, Asked::List)?;
            }
            CpuMethod::Affinity => {
                let (original, usable) = self.usable_cpus()?;
                let bad: Vec<u32> = want.iter().copied().filter(|c| !usable.contains(c)).collect();
                if !bad.is_empty() {
                    return Err(MachineError::Invalid(format!(
                        "CPUs {} are not online and allowed to this process; choose among {}",
                        format_cpu_list(&bad),
                        format_cpu_list(&usable)
                    )));
                }
                self.pin(&want, original)?;
            }
        }
        Ok(self.method)
    }

    /// Onlines `on` (sorted) and offlines every other CPU of `possible`, highest first. Originals
    /// are recorded before any write.
    fn hotplug(&mut self, on: &[u32], possible: &[u32], asked: Asked) -> Result<(), MachineError> {
        let is_on = |cpu: u32| read_trim(&online_file(&self.root, cpu)).map(|v| v == "1");
        let mut plan: Vec<(u32, &str)> = Vec::new();
        for &cpu in on {
            // No online file (None): a CPU that cannot be hot-removed (cpu0) is always online.
            if is_on(cpu) == Some(false) {
                plan.push((cpu, "1"));
            }
        }
        for &cpu in possible.iter().rev().filter(|c| !on.contains(c)) {
            match is_on(cpu) {
                Some(true) => plan.push((cpu, "0")),
                Some(false) => {}
                None => {
                    let hint = match asked {
                        Asked::Count => "use the affinity method instead (cpu_control = affinity)",
                        Asked::List => {
                            "include it in the CPU list or use the affinity method (cpu_control = affinity)"
                        }
                    };
                    return Err(MachineError::NotPermitted(format!(
                        "cpu{cpu} has no online file and cannot be taken offline; {hint}"
                    )));
                }
            }
        }
        for &(cpu, new) in &plan {
            let orig = if new == "1" { "0" } else { "1" };
            self.saved.online.entry(cpu).or_insert_with(|| orig.to_string());
        }
        if !plan.is_empty() {
            state::store(&self.state_file, &self.saved)?;
        }
        for &(cpu, _) in &plan {
            let orig = self.saved.online.get(&cpu).cloned().unwrap_or_default();
            self.log.note(Setting::Online(cpu), orig);
        }
        for (cpu, value) in plan {
            write_ctl(&online_file(&self.root, cpu), value)?;
        }
        Ok(())
    }

    /// The original affinity mask and its CPUs that are online.
    fn usable_cpus(&self) -> Result<(libc::cpu_set_t, Vec<u32>), MachineError> {
        let original = match &self.affinity {
            Some((_, set)) => *set,
            None => get_affinity()?,
        };
        let online = online_cpus(&self.root).unwrap_or_default();
        let usable =
            cpus_in(&original).into_iter().filter(|c| online.is_empty() || online.contains(c)).collect();
        Ok((original, usable))
    }

    /// Pins the calling thread to `cpus`, remembering `original` the first time.
    fn pin(&mut self, cpus: &[u32], original: libc::cpu_set_t) -> Result<(), MachineError> {
        // SAFETY: cpu_set_t is plain data; CPU_SET indexes are CPU numbers below its capacity
        // (they come from the original mask).
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &cpu in cpus {
            unsafe { libc::CPU_SET(cpu as usize, &mut set) };
        }
        if self.affinity.is_none() {
            self.affinity = Some((gettid(), original));
        }
        set_affinity(0, &set).map_err(|e| MachineError::io("sched_setaffinity", e))
    }
}

#[cfg(test)]
mod tests {
    use crate::cpuctl::{online_file, CpuMethod};
    use crate::guard::Guard;
    use crate::testutil::{read, writable_fixture};

    fn onlines(root: &crate::root::SysRoot, cpus: &[u32]) -> Vec<String> {
        cpus.iter().map(|&c| read(&online_file(root, c))).collect()
    }

    #[test]
    fn cpu_list_on_baremetal4_hotplug() {
        let (_d, root, state) = writable_fixture("baremetal4");
        let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
        assert_eq!(g.set_cpu_list(&[2, 0]).expect("list"), CpuMethod::Hotplug);
        assert_eq!(onlines(&root, &[1, 2, 3]), ["0", "1", "0"]);
        assert!(read(&state).contains("\"online\""), "recorded before the change");
        g.set_cpu_list(&[0, 3, 3]).expect("duplicates are fine");
        assert_eq!(onlines(&root, &[1, 2, 3]), ["0", "0", "1"]);
        let e = g.set_cpu_list(&[1, 4]).expect_err("cpu4 does not exist");
        assert!(e.to_string().contains("CPUs 4 do not exist") && e.to_string().contains("0-3"), "{e}");
        let e = g.set_cpu_list(&[1, 2]).expect_err("cpu0 has no online file");
        assert!(e.to_string().contains("cpu0") && e.to_string().contains("include it"), "{e}");
        assert!(g.set_cpu_list(&[]).is_err());
        assert_eq!(onlines(&root, &[1, 2, 3]), ["0", "0", "1"], "errors change nothing");
        g.restore().expect("restore");
        assert_eq!(onlines(&root, &[1, 2, 3]), ["1", "1", "1"]);
        assert_eq!(g.verify_restored(), Ok(3), "cpu1, cpu3, then cpu2 were changed");
        assert!(!state.exists());
    }

    #[test]
    fn cpu_list_on_vm2_and_count_unchanged() {
        let (_d, root, state) = writable_fixture("vm2");
        let mut g = Guard::new(root.clone(), state).expect("guard");
        g.set_cpu_list(&[0]).expect("cpu0 only");
        assert_eq!(read(&online_file(&root, 1)), "0");
        g.set_cpu_list(&[0, 1]).expect("both");
        assert_eq!(read(&online_file(&root, 1)), "1");
        g.set_cpus(1).expect("count");
        assert_eq!(read(&online_file(&root, 1)), "0");
        let e = g.set_cpus(3).expect_err("too many");
        assert!(e.to_string().contains("2 possible CPUs (0-1)"), "{e}");
        drop(g);
        assert_eq!(read(&online_file(&root, 1)), "1", "restored on drop");
    }

    #[test]
    fn cpu_list_by_affinity_stays_within_the_mask() {
        let (_d, root, state) = writable_fixture("vm2");
        std::thread::spawn(move || {
            let mut g = Guard::new(root, state).expect("guard");
            g.set_method(CpuMethod::Affinity);
            let before = crate::guard::current_affinity().expect("mask");
            // The fixture has CPUs 0-1 online.
            let Some(&last) = before.iter().rfind(|&&c| c <= 1) else {
                racehorse_testkit::skip!("this process may run on neither CPU 0 nor 1 ({before:?})");
                return;
            };
            assert_eq!(g.set_cpu_list(&[last]).expect("pin"), CpuMethod::Affinity);
            assert_eq!(crate::guard::current_affinity().expect("mask"), vec![last]);
            let e = g.set_cpu_list(&[4095]).expect_err("not in the mask");
            assert!(e.to_string().contains("not online and allowed"), "{e}");
            g.restore().expect("restore");
            assert_eq!(crate::guard::current_affinity().expect("mask"), before);
        })
        .join()
        .expect("thread");
    }
}
