//! Proof of restoration: the Guard logs every setting it changed with its original value (the
//! log outlives `restore`) and `verify_restored` reads them all back.

use super::Guard;
use crate::cpuctl::online_file;
use crate::knobs::selected_value;
use crate::state::{saved_file_path, sysctl_path};
use std::path::{Path, PathBuf};

/// A setting the Guard changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Setting {
    /// cpuN/online.
    Online(u32),
    /// A dotted sysctl name.
    Sysctl(String),
    /// A sysfs file (host path, as in the state file).
    File(String),
}

/// Settings changed during a Guard's life, each with the value it had first.
#[derive(Debug, Default)]
pub(crate) struct ChangeLog {
    entries: Vec<(Setting, String)>,
    /// Name of the child memory cgroup used ("racehorse-<pid>"), if any.
    cgroup: Option<String>,
}

impl ChangeLog {
    /// Remembers `setting` with `original` unless it is already logged (the first original wins).
    pub(crate) fn note(&mut self, setting: Setting, original: String) {
        if !self.entries.iter().any(|(s, _)| *s == setting) {
            self.entries.push((setting, original));
        }
    }

    /// Remembers that this process was moved into the memory cgroup `child`.
    pub(crate) fn note_cgroup(&mut self, child: &Path) {
        self.cgroup = child.file_name().map(|n| n.to_string_lossy().into_owned());
    }
}

/// Whitespace-insensitive form of a value ("4096\t16384" and "4096 16384" are equal).
fn normal(v: &str) -> String {
    v.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Guard {
    /// After `restore`: reads back every setting this Guard ever changed (CPU online files,
    /// sysctls, sysfs files — the selected word of choice files) and, if a memory cgroup was
    /// used, checks that proc/self/cgroup no longer names it. Ok(number of settings checked),
    /// or one line per setting that differs from its value before the run.
    pub fn verify_restored(&self) -> Result<usize, Vec<String>> {
        let mut bad = Vec::new();
        for (setting, original) in &self.log.entries {
            let (name, path): (String, Result<PathBuf, String>) = match setting {
                Setting::Online(cpu) => (format!("cpu{cpu}/online"), Ok(online_file(&self.root, *cpu))),
                Setting::Sysctl(n) => (n.clone(), sysctl_path(&self.root, n).map_err(|e| e.to_string())),
                Setting::File(host) => {
                    (host.clone(), saved_file_path(&self.root, host).map_err(|e| e.to_string()))
                }
            };
            let now =
                path.and_then(|p| std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display())));
            match now {
                Ok(text) if normal(&selected_value(&text)) == normal(original) => {}
                Ok(text) => {
                    bad.push(format!("{name} is {}, was {original} before the run", selected_value(&text)))
                }
                Err(e) => {
                    bad.push(format!("{name} cannot be read back ({e}); it was {original} before the run"))
                }
            }
        }
        let mut checked = self.log.entries.len();
        if let Some(child) = &self.log.cgroup {
            checked += 1;
            let file = self.root.proc("self/cgroup");
            match std::fs::read_to_string(&file) {
                Ok(text) => {
                    let inside = text
                        .lines()
                        .filter_map(|l| l.splitn(3, ':').nth(2))
                        .find(|p| p.split('/').any(|c| c == child));
                    if let Some(path) = inside {
                        bad.push(format!(
                            "this process is still in memory cgroup {path}; it should have left {child}"
                        ));
                    }
                }
                Err(e) => bad.push(format!(
                    "cannot read {} to check the memory cgroup {child} was left: {e}",
                    file.display()
                )),
            }
        }
        if bad.is_empty() {
            Ok(checked)
        } else {
            Err(bad)
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::guard::Guard;
    use crate::testutil::{read, writable_fixture};

    #[test]
    fn changes_behind_the_guards_back_are_reported() {
        let (_d, root, state) = writable_fixture("knobs");
        let sched = root.sys("block/vda/queue/scheduler");
        let mut g = Guard::new(root.clone(), state).expect("guard");
        assert_eq!(g.verify_restored(), Ok(0), "nothing changed yet");
        g.set_sysctl("vm.swappiness", "10").expect("sysctl");
        g.set_files(&[(sched.clone(), "bfq".into())]).expect("files");
        g.set_cpu_list(&[0]).expect("cpus");
        g.restore().expect("restore");
        assert_eq!(read(&sched), "mq-deadline", "a plain file gets the selected word back");
        assert_eq!(g.verify_restored(), Ok(3));
        std::fs::write(root.proc("sys/vm/swappiness"), "10\n").expect("w");
        std::fs::write(&sched, "mq-deadline kyber [bfq] none\n").expect("w");
        let lines = g.verify_restored().expect_err("two mismatches");
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[0], "vm.swappiness is 10, was 60 before the run");
        assert_eq!(lines[1], "/sys/block/vda/queue/scheduler is bfq, was mq-deadline before the run");
        std::fs::remove_file(crate::cpuctl::online_file(&root, 1)).expect("rm");
        let lines = g.verify_restored().expect_err("three");
        assert!(lines[2].contains("cpu1/online cannot be read back"), "{lines:?}");
    }

    #[test]
    fn a_cgroup_still_named_in_proc_self_cgroup_is_reported() {
        let (_d, root, state) = writable_fixture("cgroup-v2");
        let mut g = Guard::new(root.clone(), state).expect("guard");
        g.limit_memory(64 << 20).expect("limit");
        g.restore().expect("restore");
        assert_eq!(g.verify_restored(), Ok(1), "the fixture's proc/self/cgroup never named the child");
        let child = format!("racehorse-{}", std::process::id());
        std::fs::write(root.proc("self/cgroup"), format!("0::/user.slice/racehorse.scope/{child}\n"))
            .expect("w");
        let lines = g.verify_restored().expect_err("still inside");
        assert!(lines[0].contains(&child) && lines[0].contains("still in memory cgroup"), "{lines:?}");
    }
}
