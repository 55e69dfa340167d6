//! Helpers for integration tests: locate the binary, give each test its own store, and
//! serialise every test that runs workloads (they share the machine's CPUs and hotplug).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};

static MACHINE: Mutex<()> = Mutex::new(());

/// Held by every test that runs `racehorse run`: they change or depend on machine state.
pub fn machine_lock() -> MutexGuard<'static, ()> {
    MACHINE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Path of the built `racehorse` binary (target/<profile>/racehorse, next to the test's deps dir).
pub fn bin() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe.parent().and_then(Path::parent).expect("target profile dir");
    let p = dir.join("racehorse");
    assert!(
        p.is_file(),
        "{} not built; run `cargo build --workspace --bins` first (scripts/test.sh does)",
        p.display()
    );
    p
}

/// A temporary store and work dir for one test.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        Sandbox { dir: tempfile::tempdir().expect("tempdir") }
    }
    pub fn db(&self) -> PathBuf {
        self.dir.path().join("rh.db")
    }
    pub fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }
    /// Where this sandbox's racehorse keeps its restore state and machine lock.
    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }
    /// `racehorse --db <db> ARGS`, with the restore state and the machine lock in the
    /// sandbox (so that a developer's own run elsewhere on the machine does not refuse it).
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(bin());
        c.arg("--db").arg(self.db()).args(args);
        c.env_remove("RACEHORSE_DB");
        c.env("RACEHORSE_STATE_DIR", self.state_dir());
        c
    }
    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("spawn racehorse")
    }
    /// The cells of run `label`, from `racehorse export LABEL --format json`.
    pub fn cells(&self, label: &str) -> Vec<serde_json::Value> {
        let export: serde_json::Value =
            serde_json::from_slice(&self.run(&["export", label, "--format", "json"]).stdout).expect("json");
        export["cells"].as_array().expect("cells").clone()
    }
}

pub fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

pub fn online_cpus() -> String {
    std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default().trim().to_string()
}

/// True when running as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// True when this process may hotplug cpu1 (root on a machine with cpu1/online).
pub fn can_hotplug() -> bool {
    is_root() && Path::new("/sys/devices/system/cpu/cpu1/online").exists()
}

/// A 32 MiB loop device, detached on drop.
pub struct Loop {
    pub dev: String,
    _dir: tempfile::TempDir,
}

impl Loop {
    pub fn new() -> Option<Loop> {
        let dir = tempfile::tempdir().ok()?;
        let img = dir.path().join("img");
        std::fs::File::create(&img).ok()?.set_len(32 << 20).ok()?;
        let out = std::process::Command::new("losetup").args(["-f", "--show"]).arg(&img).output().ok()?;
        let dev = String::from_utf8_lossy(&out.stdout).trim().trim_start_matches("/dev/").to_string();
        (out.status.success() && !dev.is_empty()).then_some(Loop { dev, _dir: dir })
    }
    pub fn queue(&self, file: &str) -> String {
        format!("/sys/block/{}/queue/{file}", self.dev)
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup").arg("-d").arg(format!("/dev/{}", self.dev)).status();
    }
}
