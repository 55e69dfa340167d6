//! Test "hosts" for the fleet test: network namespaces rh-fleet-N on a private bridge
//! (10.213.0.0/24 for ssh, 10.213.1.0/24 for the data plane), each with its own sshd (a
//! per-test config, host key and authorized key in a temp dir), its own hostname (a UTS
//! namespace) and its own directories. Dropping the [`Fleet`] kills every process in the
//! namespaces and removes them, the bridge and what it made, on every path.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The root namespace's side of the hosts' network.
pub const BRIDGE: &str = "rh-fleet-br";
const NS_PREFIX: &str = "rh-fleet-";

/// One namespace "host".
pub struct Host {
    /// The inventory name (h1, h2 …).
    pub name: String,
    /// The namespace, which is also the host's hostname (rh-fleet-1 …).
    pub ns: String,
    /// The ssh (management) address and the data-plane address.
    pub ssh_addr: String,
    pub data_addr: String,
    /// The host's own directory: ssh/, home/, state/, bin/, tmp/.
    pub dir: PathBuf,
    sshd: Option<Child>,
}

/// Four (or more) hosts and the key Ansible logs in with.
pub struct Fleet {
    pub dir: tempfile::TempDir,
    pub hosts: Vec<Host>,
    pub key: PathBuf,
    made_run_sshd: bool,
}

/// Runs a command; Err with its output when it fails.
pub fn sh(cmd: &mut Command) -> Result<String, String> {
    let o = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    if o.status.success() {
        Ok(text)
    } else {
        Err(format!("{cmd:?}: {}: {text}", o.status))
    }
}

fn ip(args: &[&str]) -> Result<String, String> {
    sh(Command::new("ip").args(args))
}

/// The pids of every process in a namespace (`ip netns pids`).
pub fn ns_pids(ns: &str) -> Vec<i32> {
    ip(&["netns", "pids", ns]).unwrap_or_default().split_whitespace().filter_map(|p| p.parse().ok()).collect()
}

fn comm(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default().trim().to_string()
}

fn kill(pid: i32) {
    // SAFETY: kill has no memory preconditions; the pid came from the namespace's list.
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

/// Kills every process in the namespace and waits (up to 5 s) until none is left.
fn empty_namespace(ns: &str) {
    let t0 = Instant::now();
    loop {
        let pids = ns_pids(ns);
        if pids.is_empty() || t0.elapsed() > Duration::from_secs(5) {
            return;
        }
        pids.into_iter().for_each(kill);
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Namespaces and the bridge a killed earlier run of this test left behind.
fn sweep_leftovers() {
    for line in ip(&["netns", "list"]).unwrap_or_default().lines() {
        let ns = line.split_whitespace().next().unwrap_or("");
        if ns.starts_with(NS_PREFIX) {
            empty_namespace(ns);
            let _ = ip(&["netns", "del", ns]);
        }
    }
    for veth in links() {
        let _ = ip(&["link", "del", &veth]);
    }
    let _ = ip(&["link", "del", BRIDGE]);
}

/// Links of the root namespace named rh-fleet-* (the bridge and the hosts' veth ends).
fn links() -> Vec<String> {
    let text = ip(&["-br", "link"]).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(|n| n.split('@').next().unwrap_or(n).to_string())
        .filter(|n| n.starts_with(NS_PREFIX))
        .collect()
}

fn keygen(path: &Path) -> Result<(), String> {
    sh(Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "rh-fleet-test", "-f"])
        .arg(path))
    .map(|_| ())
}

impl Fleet {
    /// Makes `n` hosts, h1..hN, each with sshd listening on its ssh address.
    pub fn start(n: usize) -> Result<Fleet, String> {
        sweep_leftovers();
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let made_run_sshd = !Path::new("/run/sshd").exists();
        if made_run_sshd {
            // sshd's privilege separation directory (the openssh-server service makes it at boot).
            std::fs::create_dir_all("/run/sshd").map_err(|e| format!("/run/sshd: {e}"))?;
            std::fs::set_permissions("/run/sshd", std::fs::Permissions::from_mode(0o755))
                .map_err(|e| e.to_string())?;
        }
        let key = dir.path().join("id_ed25519");
        let mut fleet = Fleet { dir, hosts: Vec::new(), key, made_run_sshd };
        keygen(&fleet.key)?;
        ip(&["link", "add", BRIDGE, "type", "bridge"])?;
        ip(&["addr", "add", "10.213.0.1/24", "dev", BRIDGE])?;
        ip(&["addr", "add", "10.213.1.1/24", "dev", BRIDGE])?;
        ip(&["link", "set", BRIDGE, "up"])?;
        for i in 1..=n {
            fleet.add_host(i)?;
        }
        for i in 0..n {
            fleet.start_sshd(i)?;
        }
        for h in &fleet.hosts {
            wait_listening(&h.ssh_addr, 22)?;
        }
        Ok(fleet)
    }

    fn add_host(&mut self, i: usize) -> Result<(), String> {
        let ns = format!("{NS_PREFIX}{i}");
        let veth = format!("rh-fleet-v{i}");
        let (ssh_addr, data_addr) = (format!("10.213.0.{}", 10 + i), format!("10.213.1.{}", 10 + i));
        let dir = self.dir.path().join("hosts").join(format!("h{i}"));
        for sub in ["ssh", "home", "state", "bin", "tmp"] {
            std::fs::create_dir_all(dir.join(sub)).map_err(|e| e.to_string())?;
        }
        ip(&["netns", "add", &ns])?;
        // From here on the host is in the list the drop guard cleans.
        self.hosts.push(Host {
            name: format!("h{i}"),
            ns: ns.clone(),
            ssh_addr: ssh_addr.clone(),
            data_addr: data_addr.clone(),
            dir,
            sshd: None,
        });
        ip(&["link", "add", &veth, "type", "veth", "peer", "name", "eth0", "netns", &ns])?;
        ip(&["link", "set", &veth, "master", BRIDGE, "up"])?;
        ip(&["-n", &ns, "addr", "add", &format!("{ssh_addr}/24"), "dev", "eth0"])?;
        ip(&["-n", &ns, "addr", "add", &format!("{data_addr}/24"), "dev", "eth0"])?;
        ip(&["-n", &ns, "link", "set", "eth0", "up"])?;
        ip(&["-n", &ns, "link", "set", "lo", "up"])?;
        Ok(())
    }

    /// Starts the host's sshd in its namespace, under its own hostname (a new UTS namespace
    /// that every ssh session inherits), with a config, host key and authorized key of its own.
    fn start_sshd(&mut self, i: usize) -> Result<(), String> {
        let pubkey = std::fs::read_to_string(self.key.with_extension("pub")).map_err(|e| e.to_string())?;
        let h = &mut self.hosts[i];
        let ssh = h.dir.join("ssh");
        keygen(&ssh.join("ssh_host_ed25519_key"))?;
        std::fs::write(ssh.join("authorized_keys"), pubkey).map_err(|e| e.to_string())?;
        let config = format!(
            "ListenAddress {addr}:22\nHostKey {dir}/ssh_host_ed25519_key\nAuthorizedKeysFile {dir}/authorized_keys\n\
             PidFile none\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPrintMotd no\nMaxSessions 50\n\
             MaxStartups 50\nSubsystem sftp internal-sftp\nLogLevel ERROR\n",
            addr = h.ssh_addr,
            dir = ssh.display()
        );
        let cfg = ssh.join("sshd_config");
        std::fs::write(&cfg, config).map_err(|e| e.to_string())?;
        let log = std::fs::File::create(ssh.join("sshd.log")).map_err(|e| e.to_string())?;
        // `ip netns exec` and `unshare` exec without forking, so the child is sshd itself.
        let child = Command::new("ip")
            .args(["netns", "exec", &h.ns, "unshare", "--uts", "--", "sh", "-c"])
            .arg("hostname \"$1\" && exec /usr/sbin/sshd -D -e -f \"$2\"")
            .args(["sh", &h.ns])
            .arg(&cfg)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("starting sshd for {}: {e}", h.name))?;
        h.sshd = Some(child);
        Ok(())
    }

    /// The sshd processes in host `i`'s namespace (the listener and its sessions).
    pub fn sshd_pids(&self, i: usize) -> Vec<i32> {
        ns_pids(&self.hosts[i].ns).into_iter().filter(|p| comm(*p) == "sshd").collect()
    }
}

/// Waits until something accepts TCP connections on addr:port (from the root namespace).
fn wait_listening(addr: &str, port: u16) -> Result<(), String> {
    let sa: std::net::SocketAddr = format!("{addr}:{port}").parse().map_err(|e| format!("{addr}: {e}"))?;
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(20) {
        if std::net::TcpStream::connect_timeout(&sa, Duration::from_millis(300)).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!("nothing listens on {sa} after 20 s"))
}

/// Processes whose command line starts with `prefix` (read from /proc/*/cmdline).
pub fn processes_named(prefix: &str) -> Vec<i32> {
    let procs = std::fs::read_dir("/proc").into_iter().flatten().flatten();
    procs
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmd).starts_with(prefix)
        })
        .collect()
}

impl Fleet {
    /// Where Ansible keeps its ssh ControlPersist sockets (ANSIBLE_SSH_CONTROL_PATH_DIR).
    pub fn control_dir(&self) -> PathBuf {
        self.dir.path().join("cp")
    }

    /// The command-line prefix of the ssh master processes ControlPersist leaves running.
    pub fn masters_prefix(&self) -> String {
        format!("ssh: {}/", self.control_dir().display())
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        // ControlPersist masters outlive ansible-playbook by design; they are ours to end.
        processes_named(&self.masters_prefix()).into_iter().for_each(kill);
        for h in &mut self.hosts {
            empty_namespace(&h.ns);
            if let Some(mut c) = h.sshd.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
            // The veth first: deleting it removes both ends at once, while the kernel frees a
            // deleted namespace (and the veth end in it) asynchronously, seconds later.
            let _ = ip(&["link", "del", &format!("rh-fleet-v{}", h.name.trim_start_matches('h'))]);
            let _ = ip(&["netns", "del", &h.ns]);
        }
        let _ = ip(&["link", "del", BRIDGE]);
        if self.made_run_sshd {
            let _ = std::fs::remove_dir("/run/sshd");
        }
    }
}

/// What the fleet left: namespaces and links named rh-fleet-* (empty when all is gone).
pub fn leftovers() -> Vec<String> {
    let mut left: Vec<String> = ip(&["netns", "list"])
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(NS_PREFIX))
        .map(str::to_string)
        .collect();
    left.extend(links());
    left
}
