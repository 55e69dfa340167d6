//! The throw-away PostgreSQL server of an `oltp` or `sysbench` cell (`pg=auto`): a
//! [`racehorse_pg::Cluster`] and, for the low-hit case (`server_mem`), a memory cgroup for the
//! server only (not racehorse), so its buffer pool plus the page cache of its files must fit a
//! limit smaller than the tables. The cluster's errors become [`EngineError`]s here.
//!
//! The cgroup is `<racehorse's memory cgroup>/racehorse-pg-<pid>-<n>`, limited to `bytes`
//! (swap limited too), and the postmaster with its processes at that moment moves in; the
//! backends it forks later are born inside. When the server is dropped it stops first; then
//! the processes still in the cgroup move back and the cgroup is removed. Cgroups of dead runs
//! (no process left) are removed when the next one is made. Root only; cgroup v1 (`memory`
//! hierarchy) or v2 where the parent allows a child with the memory controller.

use crate::EngineError;
use racehorse_machine::{detect_memory_cgroup, SysRoot};
use racehorse_pg::{Cluster, ClusterError, ClusterOptions, PgConfig};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

static SEQ: AtomicU32 = AtomicU32::new(0);

impl From<ClusterError> for EngineError {
    fn from(e: ClusterError) -> Self {
        match e {
            ClusterError::ToolMissing { tool, hint } => EngineError::ToolMissing { tool, hint },
            ClusterError::Io { context, path, source } => EngineError::Io { context, path, source },
            ClusterError::Failed(why) => EngineError::Failed(why),
        }
    }
}

/// A running throw-away server, with its memory cgroup when limited. The fields drop in
/// order: the server stops before its cgroup is removed, so the cgroup is empty by then.
pub struct PgServer {
    cluster: Cluster,
    cgroup: Option<ServerCgroup>,
}

impl PgServer {
    /// Starts a cluster under `parent` (a fresh directory of the cell) and, with
    /// `memory_limit_bytes`, moves it into a memory cgroup of that limit (root).
    pub fn start(
        parent: &Path,
        opts: &ClusterOptions,
        memory_limit_bytes: Option<u64>,
    ) -> Result<PgServer, EngineError> {
        let cluster = Cluster::start(parent, opts)?;
        let mut server = PgServer { cluster, cgroup: None };
        if let Some(bytes) = memory_limit_bytes {
            let cg = ServerCgroup::create(bytes)?;
            let pid = server.cluster.postmaster_pid().expect("started");
            let mut pids = vec![pid];
            pids.extend(children(pid));
            cg.add(&pids)?;
            server.cgroup = Some(cg);
        }
        Ok(server)
    }

    /// How to reach the server.
    pub fn config(&self) -> &PgConfig {
        &self.cluster.config
    }

    /// The postmaster's pid (its children are the backends).
    pub fn postmaster_pid(&self) -> Option<i32> {
        self.cluster.postmaster_pid()
    }

    /// The server's memory cgroup limit in force, if any.
    pub fn memory_limit_bytes(&self) -> Option<u64> {
        self.cgroup.as_ref().and_then(ServerCgroup::limit_bytes)
    }

    /// The most memory the server's cgroup has held, if it has one.
    pub fn memory_peak_bytes(&self) -> Option<u64> {
        self.cgroup.as_ref().and_then(ServerCgroup::peak_bytes)
    }
}

/// The current children of `pid`.
fn children(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    tasks
        .flatten()
        .flat_map(|t| {
            std::fs::read_to_string(t.path().join("children"))
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect()
}

/// A memory cgroup holding the server's processes.
struct ServerCgroup {
    dir: PathBuf,
    parent: PathBuf,
    version: u32,
}

fn write(path: &Path, text: &str) -> Result<(), EngineError> {
    std::fs::write(path, text)
        .map_err(|e| EngineError::io("cannot set up the server's memory cgroup", path, e))
}

fn pids_in(dir: &Path) -> Vec<i32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Removes `racehorse-pg-<pid>-*` cgroups under `parent` whose run is gone and that hold no process.
fn sweep(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) =
            name.strip_prefix("racehorse-pg-").and_then(|r| r.split('-').next()?.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id()
            && !Path::new(&format!("/proc/{pid}")).exists()
            && pids_in(&e.path()).is_empty()
        {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

impl ServerCgroup {
    /// Creates the cgroup with its limit (nothing is in it yet).
    fn create(limit_bytes: u64) -> Result<ServerCgroup, EngineError> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err(EngineError::Usage(
                "server_mem needs root (it makes a memory cgroup for the server)".into(),
            ));
        }
        let cg = detect_memory_cgroup(&SysRoot::host())
            .map_err(|e| EngineError::Failed(format!("server_mem: {e}")))?;
        sweep(&cg.dir);
        let name = format!("racehorse-pg-{}-{}", std::process::id(), SEQ.fetch_add(1, Ordering::Relaxed));
        let dir = cg.dir.join(name);
        std::fs::create_dir(&dir)
            .map_err(|e| EngineError::io("cannot create the server's memory cgroup", &dir, e))?;
        let made = ServerCgroup { dir: dir.clone(), parent: cg.dir.clone(), version: cg.version };
        if cg.version == 1 {
            write(&dir.join("memory.limit_in_bytes"), &limit_bytes.to_string())?;
            // Without swap accounting the file is absent; the limit then covers memory only.
            if dir.join("memory.memsw.limit_in_bytes").exists() {
                write(&dir.join("memory.memsw.limit_in_bytes"), &limit_bytes.to_string())?;
            }
        } else {
            write(&dir.join("memory.max"), &limit_bytes.to_string()).map_err(|e| {
                EngineError::Failed(format!(
                    "{e}; on cgroup v2 the memory controller must be enabled for children of {} \
                     (echo +memory > cgroup.subtree_control, possible only when it holds no process)",
                    cg.dir.display()
                ))
            })?;
            let _ = std::fs::write(dir.join("memory.swap.max"), "0");
        }
        Ok(made)
    }

    /// Moves `pids` (the postmaster and its current children) into the cgroup.
    fn add(&self, pids: &[i32]) -> Result<(), EngineError> {
        let procs = self.dir.join("cgroup.procs");
        for pid in pids {
            match std::fs::write(&procs, pid.to_string()) {
                // A child that exited meanwhile (a backend whose session just ended).
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                Err(e) => {
                    return Err(EngineError::io("cannot move the server into its memory cgroup", &procs, e))
                }
                Ok(()) => {}
            }
        }
        Ok(())
    }

    /// The most memory the cgroup has held (v1 memory.max_usage_in_bytes, v2 memory.peak).
    fn peak_bytes(&self) -> Option<u64> {
        let file = if self.version == 1 { "memory.max_usage_in_bytes" } else { "memory.peak" };
        std::fs::read_to_string(self.dir.join(file)).ok()?.trim().parse().ok()
    }

    /// The limit the kernel reports back.
    fn limit_bytes(&self) -> Option<u64> {
        let file = if self.version == 1 { "memory.limit_in_bytes" } else { "memory.max" };
        std::fs::read_to_string(self.dir.join(file)).ok()?.trim().parse().ok()
    }
}

impl Drop for ServerCgroup {
    fn drop(&mut self) {
        for pid in pids_in(&self.dir) {
            let _ = std::fs::write(self.parent.join("cgroup.procs"), pid.to_string());
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}
