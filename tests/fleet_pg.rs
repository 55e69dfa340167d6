//! A real PostgreSQL for the fleet test: the distribution's initdb and postgres (as the
//! `postgres` user when the test runs as root), a cluster in a temp dir, trust authentication
//! on 127.0.0.1 only, and a database `fleet`. Dropping [`Pg`] shuts the server down (SIGINT,
//! then SIGKILL) and removes the cluster's files, on every path.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Pg {
    pub dir: tempfile::TempDir,
    pub bin: PathBuf,
    pub port: u16,
    child: Option<Child>,
    owner: Option<(u32, u32)>,
}

/// The newest /usr/lib/postgresql/<version>/bin holding initdb, else $RACEHORSE_PG_BIN.
pub fn pg_bin() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("RACEHORSE_PG_BIN").map(PathBuf::from) {
        return d.join("initdb").is_file().then_some(d);
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, d)| d.join("initdb").is_file())
        .collect();
    found.sort();
    found.pop().map(|(_, d)| d)
}

/// The `postgres` user's uid and gid when we are root (PostgreSQL refuses to run as root).
fn owner() -> Option<(u32, u32)> {
    if !crate::common::is_root() {
        return None;
    }
    // SAFETY: getpwnam takes a NUL-terminated name; the result is read at once.
    let pw = unsafe { libc::getpwnam(c"postgres".as_ptr()) };
    // SAFETY: a non-null pointer from getpwnam.
    (!pw.is_null()).then(|| unsafe { ((*pw).pw_uid, (*pw).pw_gid) })
}

impl Pg {
    pub fn start() -> Result<Pg, String> {
        let bin = pg_bin().ok_or("no PostgreSQL server binaries (initdb) found")?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let owner = owner();
        if crate::common::is_root() && owner.is_none() {
            return Err("running as root and there is no `postgres` user to run the server as".into());
        }
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).map_err(|e| e.to_string())?;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let mut pg = Pg { dir, bin, port, child: None, owner };
        let data = pg.dir.path().join("data");
        let mut initdb = pg.command("initdb");
        initdb.arg("-D").arg(&data).args(["-U", "racehorse", "-A", "trust", "-E", "UTF8", "--no-sync"]);
        crate::fleet_hosts::sh(&mut initdb)?;
        let log = std::fs::File::create(pg.dir.path().join("postgres.log")).map_err(|e| e.to_string())?;
        if let Some((uid, gid)) = owner {
            let _ = std::os::unix::fs::chown(pg.dir.path().join("postgres.log"), Some(uid), Some(gid));
        }
        let mut server = pg.command("postgres");
        server
            .arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string(), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
            .arg("-c")
            .arg(format!("unix_socket_directories={}", pg.dir.path().display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        pg.child = Some(server.spawn().map_err(|e| format!("starting postgres: {e}"))?);
        pg.create_db()?;
        Ok(pg)
    }

    /// One of the cluster's programs, run as the cluster's owner.
    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(self.bin.join(program));
        if let Some((uid, gid)) = self.owner {
            c.uid(uid).gid(gid).env("HOME", self.dir.path());
        }
        c.current_dir(self.dir.path());
        c
    }

    /// Creates the database `fleet` once the server accepts connections (up to 30 s).
    fn create_db(&self) -> Result<(), String> {
        let t0 = Instant::now();
        loop {
            let mut c = self.command("createdb");
            c.args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "racehorse", "fleet"]);
            match crate::fleet_hosts::sh(&mut c) {
                Ok(_) => return Ok(()),
                Err(e) if t0.elapsed() > Duration::from_secs(30) => {
                    let log =
                        std::fs::read_to_string(self.dir.path().join("postgres.log")).unwrap_or_default();
                    return Err(format!("PostgreSQL did not come up in 30 s: {e}\nlog: {log}"));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(200)),
            }
        }
    }

    pub fn dsn(&self) -> String {
        format!("postgres://racehorse@127.0.0.1:{}/fleet", self.port)
    }

    /// One SQL query through psql, its rows as text (`-At`), or Err when psql fails.
    pub fn query(&self, sql: &str) -> Result<String, String> {
        let mut c = self.command("psql");
        c.args([
            "-h",
            "127.0.0.1",
            "-p",
            &self.port.to_string(),
            "-U",
            "racehorse",
            "-d",
            "fleet",
            "-At",
            "-c",
            sql,
        ]);
        crate::fleet_hosts::sh(&mut c)
    }

    /// The server's pid while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else { return };
        // SIGINT: PostgreSQL's fast shutdown; SIGKILL when it takes longer than 10 s.
        // SAFETY: kill has no memory preconditions; the pid is our child's.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}
