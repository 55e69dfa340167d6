//! `--pg auto`: a throw-away PostgreSQL cluster made with the distribution's binaries
//! (Debian: `/usr/lib/postgresql/<version>/bin`): `initdb` into a directory of the cell, the
//! postmaster started as our child on a free 127.0.0.1 port (TCP only unless a Unix socket in
//! the cluster's directory is asked for; TLS when given a certificate), SCRAM-SHA-256 with a
//! random password, and on every path a fast shutdown and the removal of its files.
//!
//! PostgreSQL refuses to run as root: as root the cluster belongs to the `postgres` user (or
//! `nobody` where there is none) and both programs run under that user. The postmaster gets
//! SIGQUIT (immediate shutdown) if racehorse dies, and PostgreSQL itself shuts down within a
//! minute once its data directory is removed (the runner sweeps dead runs' cell directories).

use crate::client::{PgConfig, PgConn, PgError};
use racehorse_core::text::bounded_output;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Settings of the throw-away server.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterOptions {
    pub shared_buffers_bytes: u64,
    pub max_connections: u32,
    /// Extra `name=value` server settings.
    pub settings: Vec<(String, String)>,
    /// Also listen on a Unix socket in the cluster's directory ([`Cluster::socket_dir`]).
    pub unix_socket: bool,
    /// Serve TLS (ssl = on) with this certificate and key, PEM files copied into the cluster.
    pub tls_cert_key: Option<(PathBuf, PathBuf)>,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions {
            shared_buffers_bytes: 128 << 20,
            max_connections: 100,
            settings: Vec::new(),
            unix_socket: false,
            tls_cert_key: None,
        }
    }
}

/// Why a throw-away cluster could not be made or started.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// The server's programs are not installed; the hint says how to get them.
    #[error("'{tool}' is not installed: {hint}")]
    ToolMissing { tool: String, hint: String },
    #[error("{context} ({path}): {source}")]
    Io {
        context: String,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Failed(String),
}

impl ClusterError {
    fn io(context: &str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ClusterError::Io { context: context.into(), path: path.into(), source }
    }
}

/// A running throw-away cluster; dropping it stops the server and removes its files.
pub struct Cluster {
    root: PathBuf,
    child: Option<Child>,
    socket_dir: Option<PathBuf>,
    pub config: PgConfig,
}

const INSTALL_HINT: &str =
    "install PostgreSQL's server binaries (Debian/Ubuntu: apt-get install postgresql) or \
     set RACEHORSE_PG_BIN to the directory holding initdb and postgres, or pass --pg DSN of a running server";

/// The directory with `initdb` and `postgres`: $RACEHORSE_PG_BIN, else the newest
/// `/usr/lib/postgresql/<version>/bin`, else PATH.
pub fn bin_dir() -> Result<PathBuf, ClusterError> {
    bin_dir_from(std::env::var_os("RACEHORSE_PG_BIN"))
}

/// [`bin_dir`] with the value of RACEHORSE_PG_BIN given.
pub(crate) fn bin_dir_from(env: Option<std::ffi::OsString>) -> Result<PathBuf, ClusterError> {
    let usable = |d: &Path| d.join("initdb").is_file() && d.join("postgres").is_file();
    if let Some(d) = env {
        let d = PathBuf::from(d);
        return if usable(&d) {
            Ok(d)
        } else {
            Err(ClusterError::ToolMissing {
                tool: "initdb/postgres".into(),
                hint: format!(
                    "RACEHORSE_PG_BIN={} holds no initdb and postgres; {INSTALL_HINT}",
                    d.display()
                ),
            })
        };
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, d)| usable(d))
        .collect();
    versions.sort();
    if let Some((_, d)) = versions.pop() {
        return Ok(d);
    }
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).find(|d| usable(d)).ok_or_else(
        || ClusterError::ToolMissing { tool: "initdb/postgres".into(), hint: INSTALL_HINT.into() },
    )
}

/// The user the server runs as when we are root: `postgres`, else `nobody`.
fn server_user() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    for name in [c"postgres", c"nobody"] {
        // SAFETY: getpwnam takes a NUL-terminated name; the result is read at once.
        let pw = unsafe { libc::getpwnam(name.as_ptr()) };
        if !pw.is_null() {
            // SAFETY: non-null pointer from getpwnam.
            return Some(unsafe { ((*pw).pw_uid, (*pw).pw_gid) });
        }
    }
    Some((65534, 65534))
}

/// The first directory above `path` that `uid`/`gid` may not search (by its mode bits), with
/// its mode and owner: the reason a server run as another user cannot reach its files.
pub(crate) fn closed_ancestor(path: &Path, uid: u32, gid: u32) -> Option<(PathBuf, u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    path.ancestors().skip(1).find_map(|dir| {
        let m = std::fs::metadata(dir).ok()?;
        let bit = if m.uid() == uid {
            0o100
        } else if m.gid() == gid {
            0o010
        } else {
            0o001
        };
        (m.mode() & bit == 0).then(|| (dir.to_path_buf(), m.mode() & 0o7777, m.uid()))
    })
}

/// A port on 127.0.0.1 that nobody listens on right now.
fn free_port() -> Result<u16, ClusterError> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| ClusterError::Failed(format!("no free loopback port for PostgreSQL: {e}")))
}

/// 18 random bytes from the kernel, in hex (36 characters).
fn random_password() -> Result<String, ClusterError> {
    let mut buf = [0u8; 18];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut buf))
        .map_err(|e| ClusterError::Failed(format!("cannot read /dev/urandom: {e}")))?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// The last lines of a server log, for error messages.
fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    bounded_output(&lines[lines.len().saturating_sub(6)..].join(" | "))
}

impl Cluster {
    /// Creates and starts a cluster under `parent` (a fresh directory of the cell).
    pub fn start(parent: &Path, opts: &ClusterOptions) -> Result<Cluster, ClusterError> {
        let bin = bin_dir()?;
        let root = parent.join("pg-auto");
        std::fs::create_dir(&root)
            .map_err(|e| ClusterError::io("cannot create the cluster directory", &root, e))?;
        // From here on, dropping the Cluster removes `root` (and stops the server if started).
        let mut cluster = Cluster {
            root: root.clone(),
            child: None,
            socket_dir: opts.unix_socket.then(|| root.clone()),
            config: PgConfig::parse("sslmode=disable").expect("defaults"),
        };
        let owner = server_user();
        if let Some((uid, gid)) = owner {
            // The server user must reach the cluster through the cell directory.
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o711));
            std::os::unix::fs::chown(&root, Some(uid), Some(gid)).map_err(|e| {
                ClusterError::io("cannot give the cluster directory to the server user", &root, e)
            })?;
        }
        let password = random_password()?;
        let pwfile = root.join("pw");
        std::fs::write(&pwfile, &password)
            .map_err(|e| ClusterError::io("cannot write the password file", &pwfile, e))?;
        let log = root.join("postgres.log");
        std::fs::write(&log, "").map_err(|e| ClusterError::io("cannot create the server log", &log, e))?;
        if let Some((uid, gid)) = owner {
            for f in [&pwfile, &log] {
                std::os::unix::fs::chown(f, Some(uid), Some(gid))
                    .map_err(|e| ClusterError::io("cannot give a cluster file to the server user", f, e))?;
            }
        }
        if let Some((cert, key)) = &opts.tls_cert_key {
            install_tls_files(&root, cert, key, owner)?;
        }
        let data = root.join("data");
        cluster.initdb(&bin, &data, &pwfile, owner)?;
        let port = free_port()?;
        cluster.config = PgConfig {
            port,
            user: "racehorse".into(),
            password: Some(password),
            dbname: "postgres".into(),
            ..cluster.config.clone()
        };
        cluster.spawn_server(&bin, &data, &log, port, opts, owner)?;
        cluster.wait_ready(&log)?;
        Ok(cluster)
    }

    fn as_owner(cmd: &mut Command, owner: Option<(u32, u32)>) {
        if let Some((uid, gid)) = owner {
            cmd.uid(uid).gid(gid).env("HOME", "/");
        }
        cmd.env("LC_ALL", "C").env_remove("PGDATA");
    }

    fn initdb(
        &self,
        bin: &Path,
        data: &Path,
        pwfile: &Path,
        owner: Option<(u32, u32)>,
    ) -> Result<(), ClusterError> {
        let mut cmd = Command::new(bin.join("initdb"));
        cmd.arg("-D").arg(data).args([
            "-U",
            "racehorse",
            "--auth=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C",
            "-N",
        ]);
        cmd.arg(format!("--pwfile={}", pwfile.display()));
        Self::as_owner(&mut cmd, owner);
        let out = cmd
            .stdin(Stdio::null())
            .output()
            .map_err(|e| ClusterError::io("cannot run initdb", bin.join("initdb"), e))?;
        if !out.status.success() {
            let hint = owner
                .and_then(|(uid, gid)| closed_ancestor(data, uid, gid))
                .map(|(dir, mode, by)| {
                    format!(
                        "; the server runs as uid {} and cannot enter {} (mode {mode:04o}, owner uid {by}): \
                         let it in (chmod o+x {}) or give racehorse a --dir it can reach",
                        owner.map_or(0, |o| o.0),
                        dir.display(),
                        dir.display()
                    )
                })
                .unwrap_or_default();
            return Err(ClusterError::Failed(format!(
                "initdb failed ({}): {}{hint}",
                out.status,
                bounded_output(String::from_utf8_lossy(&out.stderr).trim())
            )));
        }
        Ok(())
    }

    fn spawn_server(
        &mut self,
        bin: &Path,
        data: &Path,
        log: &Path,
        port: u16,
        opts: &ClusterOptions,
        owner: Option<(u32, u32)>,
    ) -> Result<(), ClusterError> {
        let logf = std::fs::OpenOptions::new()
            .append(true)
            .open(log)
            .map_err(|e| ClusterError::io("cannot open the server log", log, e))?;
        let mut cmd = Command::new(bin.join("postgres"));
        cmd.arg("-D").arg(data);
        let socket_dir = self.socket_dir.as_ref().map(|d| d.display().to_string()).unwrap_or_default();
        let mut settings = vec![
            ("listen_addresses".to_string(), "127.0.0.1".to_string()),
            ("port".into(), port.to_string()),
            ("unix_socket_directories".into(), socket_dir),
            ("max_connections".into(), opts.max_connections.to_string()),
            ("shared_buffers".into(), format!("{}kB", (opts.shared_buffers_bytes / 1024).max(128))),
        ];
        if opts.tls_cert_key.is_some() {
            settings.push(("ssl".into(), "on".into()));
            settings.push(("ssl_cert_file".into(), self.root.join("server.crt").display().to_string()));
            settings.push(("ssl_key_file".into(), self.root.join("server.key").display().to_string()));
        }
        settings.extend(opts.settings.iter().cloned());
        for (k, v) in settings {
            cmd.arg("-c").arg(format!("{k}={v}"));
        }
        Self::as_owner(&mut cmd, owner);
        cmd.stdin(Stdio::null())
            .stdout(logf.try_clone().map_err(|e| ClusterError::io("log", log, e))?)
            .stderr(logf);
        // SAFETY: prctl is async-signal-safe; runs in the child after setuid (which would
        // clear the parent-death signal), before exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGQUIT) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child =
            cmd.spawn().map_err(|e| ClusterError::io("cannot start postgres", bin.join("postgres"), e))?;
        self.child = Some(child);
        Ok(())
    }

    /// Polls until the server accepts our login (30 s at most).
    fn wait_ready(&mut self, log: &Path) -> Result<(), ClusterError> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut cfg = self.config.clone();
        cfg.connect_timeout = Duration::from_secs(2);
        loop {
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                self.child = None;
                return Err(ClusterError::Failed(format!(
                    "postgres exited at start ({status}): {}",
                    log_tail(log)
                )));
            }
            match PgConn::connect(&cfg) {
                Ok(_) => return Ok(()),
                Err(PgError::Auth { reason, .. }) => {
                    return Err(ClusterError::Failed(format!("cannot log in to the new cluster: {reason}")))
                }
                Err(e) if Instant::now() > deadline => {
                    return Err(ClusterError::Failed(format!(
                        "postgres did not start in 30 s: {e}; log: {}",
                        log_tail(log)
                    )))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// The postmaster's pid (its children are the backends).
    pub fn postmaster_pid(&self) -> Option<i32> {
        self.child.as_ref().map(|c| c.id() as i32)
    }

    /// Where the cluster lives.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory of the server's Unix socket, when it has one.
    pub fn socket_dir(&self) -> Option<&Path> {
        self.socket_dir.as_deref()
    }

    /// Fast shutdown (SIGINT), SIGKILL after 10 s; then the files go.
    fn shutdown(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            let deadline = Instant::now() + Duration::from_secs(10);
            while child.try_wait().ok().flatten().is_none() {
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Copies the TLS certificate and key into the cluster as server.crt and server.key, readable
/// by the server user only (PostgreSQL refuses a key others can read).
fn install_tls_files(
    root: &Path,
    cert: &Path,
    key: &Path,
    owner: Option<(u32, u32)>,
) -> Result<(), ClusterError> {
    use std::os::unix::fs::PermissionsExt;
    for (from, name) in [(cert, "server.crt"), (key, "server.key")] {
        let to = root.join(name);
        std::fs::copy(from, &to)
            .map_err(|e| ClusterError::io("cannot copy a TLS file into the cluster", from, e))?;
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| ClusterError::io("cannot set the mode of a TLS file", &to, e))?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&to, Some(uid), Some(gid))
                .map_err(|e| ClusterError::io("cannot give a TLS file to the server user", &to, e))?;
        }
    }
    Ok(())
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.shutdown();
    }
}
