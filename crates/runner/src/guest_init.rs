//! racehorse as the init of its KVM guests (`racehorse guest-init`, started by the kernel
//! as process 1): mounts /proc, /sys, /dev, /tmp and /run, loads the channel's modules,
//! brings loopback up, runs the one cell of /job.json, and sends over the virtio-serial
//! port `RH READY`, `RH T0` and `RH T1` at the measured window's edges (so that the host
//! reads its own CPU at the same moments) and `RH RESULT <cell as JSON>`; then powers off.

use crate::exec::{run_alone, Runner};
use crate::guest::{Job, INSIDE_GUEST, JOB_FILE};
use crate::guest_channel::{self, send};
use crate::guest_vm::PORT_NAME;
use crate::plan::{EngineRef, PlannedCell};
use racehorse_engines::RealClock;
use racehorse_machine::guard::Guard;
use racehorse_machine::kvm::image::MODULES_LIST;
use racehorse_machine::SysRoot;
use std::ffi::CString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What stopped racehorse's init in the guest. It is sent to the host (`RH ERROR …`), which
/// fails the cell with it.
#[derive(Debug, thiserror::Error)]
enum InitError {
    /// A step of the guest's setup failed: what was being done, and the kernel's answer.
    #[error("{doing}: {source}")]
    Setup { doing: String, source: std::io::Error },
    /// The channel's port did not appear in time.
    #[error("no virtio-serial port named {port} within {timeout_s} s", port = PORT_NAME)]
    NoPort { timeout_s: u64 },
    /// The job file is missing or does not parse.
    #[error("/{job}: {0}", job = JOB_FILE)]
    Job(String),
    /// The cell could not be run or its result written: why.
    #[error("{0}")]
    Cell(String),
}

impl InitError {
    fn setup(doing: impl std::fmt::Display) -> impl FnOnce(std::io::Error) -> InitError {
        let doing = doing.to_string();
        move |source| InitError::Setup { doing, source }
    }
}

fn cstr(s: &str) -> Result<CString, InitError> {
    CString::new(s).map_err(|e| InitError::Setup { doing: format!("the name {s:?}"), source: e.into() })
}

fn mount(fstype: &str, target: &str) -> Result<(), InitError> {
    let _ = std::fs::create_dir_all(target);
    let (src, dir, fs) = (cstr(fstype)?, cstr(target)?, cstr(fstype)?);
    // SAFETY: every pointer is a NUL-terminated string that outlives the call; data is null.
    let rc = unsafe { libc::mount(src.as_ptr(), dir.as_ptr(), fs.as_ptr(), 0, std::ptr::null()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(InitError::setup(format_args!("mounting {fstype} on {target}"))(std::io::Error::last_os_error()))
    }
}

fn mount_all() -> Result<(), InitError> {
    for (fs, at) in [("proc", "/proc"), ("sysfs", "/sys"), ("devtmpfs", "/dev"), ("tmpfs", "/tmp")] {
        mount(fs, at)?;
    }
    mount("tmpfs", "/run")?;
    mount("tmpfs", "/dev/shm")
}

/// Loads the modules listed in the image, in order (one already loaded is fine).
fn load_modules() -> Result<(), InitError> {
    let list = std::fs::read_to_string(format!("/{MODULES_LIST}")).unwrap_or_default();
    for m in list.lines().filter(|l| !l.is_empty()) {
        let f = File::open(m).map_err(InitError::setup(m))?;
        let params = cstr("")?;
        use std::os::fd::AsRawFd;
        // SAFETY: finit_module reads the open file and the empty parameter string.
        let rc = unsafe { libc::syscall(libc::SYS_finit_module, f.as_raw_fd(), params.as_ptr(), 0) };
        let err = std::io::Error::last_os_error();
        if rc != 0 && err.raw_os_error() != Some(libc::EEXIST) {
            return Err(InitError::setup(format_args!("loading {m}"))(err));
        }
    }
    Ok(())
}

/// The device of the virtio-serial port named racehorse, waiting up to `timeout` for it.
fn find_port(timeout: Duration) -> Result<PathBuf, InitError> {
    let until = Instant::now() + timeout;
    loop {
        for e in std::fs::read_dir("/sys/class/virtio-ports").into_iter().flatten().flatten() {
            let name = std::fs::read_to_string(e.path().join("name")).unwrap_or_default();
            let dev = Path::new("/dev").join(e.file_name());
            if name.trim() == PORT_NAME && dev.exists() {
                return Ok(dev);
            }
        }
        if Instant::now() > until {
            return Err(InitError::NoPort { timeout_s: timeout.as_secs() });
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Brings the loopback interface up (the net engine's client and server talk over it).
fn loopback_up() -> Result<(), InitError> {
    // SAFETY: a plain socket for the interface ioctls, closed below; `ifr` is plain data of
    // the size the ioctls expect, its name NUL-terminated.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0);
        if fd < 0 {
            return Err(InitError::setup("socket")(std::io::Error::last_os_error()));
        }
        let mut ifr: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo".iter().enumerate() {
            ifr.ifr_name[i] = *b as libc::c_char;
        }
        let mut rc = libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut ifr as *mut libc::ifreq);
        if rc == 0 {
            ifr.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            rc = libc::ioctl(fd, libc::SIOCSIFFLAGS, &ifr as *const libc::ifreq);
        }
        let err = std::io::Error::last_os_error();
        libc::close(fd);
        if rc == 0 {
            Ok(())
        } else {
            Err(InitError::setup("bringing lo up")(err))
        }
    }
}

/// Runs the job's cell and returns it as JSON.
fn run_job() -> Result<String, InitError> {
    let text = std::fs::read_to_string(format!("/{JOB_FILE}")).map_err(|e| InitError::Job(e.to_string()))?;
    let job: Job = serde_json::from_str(&text).map_err(|e| InitError::Job(e.to_string()))?;
    let engine = EngineRef::find(&job.spec.workload).map_err(|e| InitError::Cell(e.to_string()))?;
    let cell = PlannedCell {
        index: 0,
        engine,
        cpus: job.cpus,
        cpu_list: None,
        runtime: Duration::from_nanos(job.runtime_ns),
        warmup: Duration::from_nanos(job.warmup_ns),
        variant: 0,
        spec: job.spec,
    };
    let runner = Runner {
        root: SysRoot::host(),
        clock: Arc::new(RealClock::default()),
        abort: Arc::new(AtomicBool::new(false)),
        work_root: PathBuf::from("/tmp/racehorse"),
        sample_interval: None,
        drop_caches: false,
        profile: None,
        noise_threshold: 0.05,
        warm_up: false,
    };
    std::fs::create_dir_all(&runner.work_root)
        .map_err(InitError::setup(format_args!("creating {}", runner.work_root.display())))?;
    let mut guard = Guard::new(SysRoot::host(), PathBuf::from("/run/racehorse/restore.json"))
        .map_err(|e| InitError::Cell(e.to_string()))?;
    let result = run_alone(&runner, &cell, &mut guard);
    guard.restore().map_err(|e| InitError::Cell(e.to_string()))?;
    serde_json::to_string(&result).map_err(|e| InitError::Cell(e.to_string()))
}

fn setup() -> Result<(), InitError> {
    mount_all()?;
    load_modules()?;
    let port = find_port(Duration::from_secs(10))?;
    let f = std::fs::OpenOptions::new().write(true).open(&port).map_err(InitError::setup(port.display()))?;
    guest_channel::open(f);
    send("READY");
    loopback_up()
}

/// Ends the guest: QEMU runs with -no-reboot, so a reboot ends it.
fn power_off() -> ! {
    std::thread::sleep(Duration::from_millis(100));
    // SAFETY: sync and reboot have no memory preconditions; as process 1 in a guest, ending
    // the machine is the intent.
    unsafe {
        libc::sync();
        libc::reboot(libc::RB_AUTOBOOT);
    }
    std::process::exit(1)
}

/// `racehorse guest-init`. Refused (exit 2) unless this is process 1: it mounts and reboots.
pub fn main() -> i32 {
    if std::process::id() != 1 {
        eprintln!(
            "error: guest-init is racehorse's init inside its KVM guests (process 1), not a command to run"
        );
        return 2;
    }
    INSIDE_GUEST.store(true, Ordering::Relaxed);
    std::panic::set_hook(Box::new(|info| {
        send(&format!("ERROR racehorse panicked in the guest: {}", info.to_string().replace('\n', " ")));
        eprintln!("{info}");
    }));
    let outcome = std::panic::catch_unwind(|| setup().and_then(|()| run_job()));
    match outcome {
        Ok(Ok(json)) => send(&format!("RESULT {json}")),
        Ok(Err(e)) => {
            eprintln!("racehorse guest-init: {e}");
            send(&format!("ERROR {}", e.to_string().replace('\n', " ")));
        }
        Err(_) => {}
    }
    power_off()
}
