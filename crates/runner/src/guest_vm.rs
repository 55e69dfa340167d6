//! One KVM guest seen from the host: QEMU started with the guest image (KVM only, no
//! network, no disk, a virtio-serial port as the result channel, the console in a file),
//! killed with racehorse (PR_SET_PDEATHSIG) and recorded in the Guard's state file, and the
//! channel's reader, which takes /proc/stat and the vCPU threads' guest time at the very
//! moment the guest says its window starts or ends.

use racehorse_machine::kvm::{qemu_ticks, QemuTicks};
use racehorse_machine::procstat::{read_stat, StatSnapshot};
use racehorse_machine::SysRoot;
use std::io::{BufRead, BufReader};
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// The name of the guest's virtio-serial port (the guest finds it in /sys/class/virtio-ports).
pub const PORT_NAME: &str = "racehorse";
/// Every line of the protocol starts with this; others (none expected) are ignored.
pub const LINE_PREFIX: &str = "RH ";

/// Why cells with `where = "guest"` cannot run here (a usage error): the piece that is
/// missing and what to install. There is no emulated fallback.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GuestRefusal {
    /// /dev/kvm is missing or closed to us, or this KVM backend cannot boot our guest: why.
    #[error("where=guest needs KVM, and {0}; there is no emulated fallback")]
    Kvm(String),
    /// QEMU is not installed.
    #[error(
        "where=guest needs KVM, and qemu-system-x86_64 is not on PATH (apt-get install \
         qemu-system-x86); there is no emulated fallback"
    )]
    NoQemu,
    /// No kernel to boot the guest with: why, and how to get one.
    #[error("where=guest needs KVM, and {0}; there is no emulated fallback")]
    NoKernel(String),
}

/// Why a guest did not start or could not be reached (its cell fails).
#[derive(Debug, thiserror::Error)]
pub enum VmError {
    /// A step on the guest's files, QEMU or the channel failed: what, and why.
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
    /// QEMU ended before it opened the channel: its status and last words.
    #[error("{0}")]
    Ended(String),
    /// QEMU did not open the channel in time.
    #[error("QEMU did not open the guest channel within {timeout_s} s")]
    NoChannel { timeout_s: u64 },
}

impl VmError {
    fn io(what: impl std::fmt::Display) -> impl FnOnce(std::io::Error) -> VmError {
        let what = what.to_string();
        move |source| VmError::Io { what, source }
    }
}

/// The host's readings at one window edge the guest signalled.
#[derive(Debug, Clone)]
pub struct HostEdge {
    pub at: Instant,
    pub stat: Option<StatSnapshot>,
    pub qemu: Option<QemuTicks>,
}

/// What the channel brought.
#[derive(Debug)]
pub enum FromGuest {
    Ready(Instant),
    Edge {
        start: bool,
        edge: HostEdge,
    },
    Result(String),
    Error(String),
    /// The guest closed the channel (powered off, or died).
    Closed,
}

/// How to start a guest.
pub struct VmSpec<'a> {
    pub kernel: &'a Path,
    pub initramfs: &'a Path,
    pub vcpus: u32,
    pub mem_mib: u64,
    /// QEMU's -cpu: [`cpu_model`].
    pub cpu_model: &'a str,
    /// Directory for the channel's socket, the console log and QEMU's own output.
    pub dir: &'a Path,
}

/// A started guest: QEMU, the listening channel, and where its logs go.
pub struct Vm {
    pub child: Child,
    pub started: Instant,
    listener: UnixListener,
    pub console: PathBuf,
    pub qemu_log: PathBuf,
}

/// The QEMU binary: $RACEHORSE_QEMU, else qemu-system-x86_64 on PATH.
pub fn qemu_binary() -> Option<PathBuf> {
    if let Some(q) = std::env::var_os("RACEHORSE_QEMU").filter(|q| !q.is_empty()) {
        return Some(PathBuf::from(q));
    }
    racehorse_machine::path::find_executable("qemu-system-x86_64")
}

/// The guest's CPU model: the host's (`host`); under PVM without the architecture
/// capabilities MSR, which PVM refuses to set (QEMU would abort at start).
pub fn cpu_model() -> &'static str {
    match racehorse_machine::kvm::kvm_backend(Path::new("/sys/module")) {
        racehorse_machine::kvm::KvmBackend::Pvm => "host,-arch-capabilities",
        _ => "host",
    }
}

/// The kernel command line: quiet serial console, reboot (QEMU exits: -no-reboot) on a
/// panic, racehorse as init in guest mode.
pub const CMDLINE: &str = "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/racehorse -- guest-init";

fn qemu_args(spec: &VmSpec<'_>, socket: &Path, console: &Path) -> Vec<String> {
    let d = |p: &Path| p.display().to_string();
    let mut a: Vec<String> =
        ["-enable-kvm", "-cpu", spec.cpu_model, "-nodefaults", "-no-user-config"].map(String::from).to_vec();
    a.extend(["-display".into(), "none".into()]);
    a.extend([
        "-no-reboot".into(),
        "-smp".into(),
        spec.vcpus.to_string(),
        "-m".into(),
        spec.mem_mib.to_string(),
    ]);
    a.extend(["-kernel".into(), d(spec.kernel), "-initrd".into(), d(spec.initramfs)]);
    a.extend(["-append".into(), CMDLINE.into(), "-serial".into(), format!("file:{}", d(console))]);
    a.extend(["-device".into(), "virtio-serial-pci".into()]);
    a.extend(["-chardev".into(), format!("socket,id=rh,path={}", d(socket))]);
    a.extend(["-device".into(), format!("virtserialport,chardev=rh,name={PORT_NAME}")]);
    a
}

/// Starts QEMU; it connects to the channel's socket, which listens before QEMU starts. QEMU
/// gets SIGKILL when racehorse ends, however it ends (unless $RACEHORSE_TEST_NO_PDEATHSIG is
/// set: a test that checks that recovery alone kills a left guest).
pub fn start(qemu: &Path, spec: &VmSpec<'_>) -> Result<Vm, VmError> {
    let socket = spec.dir.join("channel.sock");
    let console = spec.dir.join("console.log");
    let qemu_log = spec.dir.join("qemu.log");
    let _ = std::fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket).map_err(VmError::io(socket.display()))?;
    listener.set_nonblocking(true).map_err(VmError::io(socket.display()))?;
    let log = std::fs::File::create(&qemu_log).map_err(VmError::io(qemu_log.display()))?;
    let err = log.try_clone().map_err(VmError::io(qemu_log.display()))?;
    let mut cmd = Command::new(qemu);
    cmd.args(qemu_args(spec, &socket, &console)).stdin(Stdio::null()).stdout(log).stderr(err);
    if std::env::var_os("RACEHORSE_TEST_NO_PDEATHSIG").is_none() {
        // SAFETY: prctl and getppid are async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() == 1 {
                    return Err(std::io::Error::other("racehorse ended before QEMU started"));
                }
                Ok(())
            })
        };
    }
    let started = Instant::now();
    let child = cmd.spawn().map_err(VmError::io(format_args!("starting {}", qemu.display())))?;
    Ok(Vm { child, started, listener, console, qemu_log })
}

/// The last lines of a log file, for error messages.
pub fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    all[all.len().saturating_sub(lines)..].join(" | ")
}

impl Vm {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Why QEMU ended, if it has: its exit status and the last lines of its output.
    pub fn ended(&mut self) -> Option<String> {
        let status = self.child.try_wait().ok()??;
        Some(format!(
            "QEMU ended ({status}); its output: {}; the guest console: {}",
            tail(&self.qemu_log, 3),
            tail(&self.console, 5)
        ))
    }

    /// Waits until QEMU connects to the channel (it does so as it starts).
    pub fn connect(&mut self, timeout: Duration) -> Result<UnixStream, VmError> {
        let until = Instant::now() + timeout;
        loop {
            match self.listener.accept() {
                Ok((s, _)) => {
                    s.set_nonblocking(false).map_err(VmError::io("the guest channel"))?;
                    return Ok(s);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(VmError::io("the guest channel")(e)),
            }
            if let Some(why) = self.ended() {
                return Err(VmError::Ended(why));
            }
            if Instant::now() > until {
                return Err(VmError::NoChannel { timeout_s: timeout.as_secs() });
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Reads the channel on its own thread. A window edge is read on the host as soon as its
/// line arrives: /proc/stat first, then the QEMU threads.
pub fn read_channel(stream: UnixStream, root: SysRoot, qemu_pid: u32) -> Receiver<FromGuest> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let proc_dir = root.proc_dir.clone();
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            let Some(msg) = line.strip_prefix(LINE_PREFIX) else { continue };
            let ev = match msg.split_once(' ').unwrap_or((msg, "")) {
                ("T0" | "T1", _) => {
                    let stat = read_stat(&root).ok();
                    let qemu = qemu_ticks(&proc_dir, qemu_pid);
                    let edge = HostEdge { at: Instant::now(), stat, qemu };
                    FromGuest::Edge { start: msg.starts_with("T0"), edge }
                }
                ("READY", _) => FromGuest::Ready(Instant::now()),
                ("RESULT", json) => FromGuest::Result(json.to_string()),
                ("ERROR", text) => FromGuest::Error(text.to_string()),
                _ => continue,
            };
            if tx.send(ev).is_err() {
                return;
            }
        }
        let _ = tx.send(FromGuest::Closed);
    });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn the_command_line_is_kvm_only_without_network_or_disk() {
        let dir = Path::new("/w");
        let spec = VmSpec {
            kernel: Path::new("/k"),
            initramfs: Path::new("/i"),
            vcpus: 2,
            mem_mib: 768,
            cpu_model: "host",
            dir,
        };
        let a = qemu_args(&spec, Path::new("/w/s"), Path::new("/w/c")).join(" ");
        assert!(a.starts_with("-enable-kvm -cpu host -nodefaults"), "{a}");
        assert!(a.contains("-smp 2 -m 768") && a.contains("-kernel /k -initrd /i"), "{a}");
        assert!(!a.contains("-netdev") && !a.contains("-drive") && !a.contains("tcg"), "{a}");
        assert!(a.contains("virtserialport,chardev=rh,name=racehorse"), "{a}");
    }

    #[test]
    fn edges_are_read_when_their_line_arrives() {
        let (mut guest, host) = UnixStream::pair().unwrap();
        let rx = read_channel(host, SysRoot::host(), std::process::id());
        writeln!(guest, "kernel noise\nRH READY\nRH T0\nRH T1\nRH RESULT {{\"x\":1}}\nRH ERROR it broke")
            .unwrap();
        drop(guest);
        let got: Vec<FromGuest> = rx.iter().collect();
        assert!(matches!(got[0], FromGuest::Ready(_)), "{got:?}");
        let FromGuest::Edge { start: true, edge } = &got[1] else { panic!("{got:?}") };
        assert!(edge.stat.is_some(), "the host's /proc/stat at the edge");
        assert!(matches!(&got[2], FromGuest::Edge { start: false, .. }));
        assert!(matches!(&got[3], FromGuest::Result(j) if j == "{\"x\":1}"));
        assert!(matches!(&got[4], FromGuest::Error(e) if e == "it broke"));
        assert!(matches!(got[5], FromGuest::Closed));
    }
}
