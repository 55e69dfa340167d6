//! KVM guests on this host: whether KVM can be used (no emulated fallback), the guest image
//! built from installed packages (`image`, `cpio`), and the CPU a QEMU process and its vCPU
//! threads used (guest_time, field 43 of /proc/PID/task/TID/stat).

use crate::pidstat::PidStat;
use std::path::{Path, PathBuf};

pub mod cpio;
pub mod image;

/// The KVM device: $RACEHORSE_KVM_DEVICE when set (tests point it at a missing path), else
/// /dev/kvm.
pub fn kvm_device() -> PathBuf {
    std::env::var_os("RACEHORSE_KVM_DEVICE")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/dev/kvm"))
}

/// Ok when `device` opens for reading and writing (what QEMU needs for -enable-kvm); else
/// why not, in words that say what to do.
pub fn check_kvm(device: &Path) -> Result<(), String> {
    match std::fs::OpenOptions::new().read(true).write(true).open(device) {
        Ok(_) => Ok(()),
        Err(e) => {
            let hint = match e.kind() {
                std::io::ErrorKind::NotFound => {
                    "KVM is not available here (no hardware virtualization, or the kvm module is not loaded)"
                }
                std::io::ErrorKind::PermissionDenied => "add this user to the kvm group or run as root",
                _ => "check the device",
            };
            Err(format!("{}: {e}; {hint}", device.display()))
        }
    }
}

/// Which KVM this host has, from the modules loaded under `sys_module` (/sys/module).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvmBackend {
    /// Hardware virtualization: kvm_intel (VMX) or kvm_amd (SVM).
    Hardware,
    /// PVM (kvm_pvm): a paravirtual KVM for nested clouds without hardware virtualization.
    /// It runs only kernels built as PVM guests; a distribution kernel hangs in early boot.
    Pvm,
    /// Neither is known (a device without a module racehorse knows).
    Unknown,
}

/// The KVM backend of this host.
pub fn kvm_backend(sys_module: &Path) -> KvmBackend {
    if ["kvm_intel", "kvm_amd"].iter().any(|m| sys_module.join(m).exists()) {
        KvmBackend::Hardware
    } else if sys_module.join("kvm_pvm").exists() {
        KvmBackend::Pvm
    } else {
        KvmBackend::Unknown
    }
}

/// Why a distribution kernel cannot boot under `backend`, if it cannot.
pub fn backend_refusal(backend: KvmBackend) -> Option<String> {
    (backend == KvmBackend::Pvm).then(|| {
        "KVM on this machine is PVM (module kvm_pvm, a nested paravirtual KVM), which boots only kernels \
         built as PVM guests: a Debian kernel hangs right after its real-mode setup there. Set \
         RACEHORSE_GUEST_KERNEL to a PVM guest kernel, or run on a host with hardware KVM (kvm_intel, kvm_amd)"
            .to_string()
    })
}

/// CPU of one QEMU process at one moment, in clock ticks (1/USER_HZ s).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QemuTicks {
    /// Sum of guest_time over the vCPU threads (`CPU n/KVM`).
    pub vcpu_guest: u64,
    /// Number of vCPU threads found.
    pub vcpus: u32,
    /// utime + stime of the whole process (guest time is inside utime).
    pub process: u64,
}

/// Reads the QEMU process `pid` under `proc_dir`: its vCPU threads' guest_time and its own
/// utime + stime. None when the process is gone.
pub fn qemu_ticks(proc_dir: &Path, pid: u32) -> Option<QemuTicks> {
    let dir = proc_dir.join(pid.to_string());
    let stat = PidStat::read(&dir.join("stat"))?;
    let mut out = QemuTicks { process: stat.own_ticks(), ..QemuTicks::default() };
    for task in std::fs::read_dir(dir.join("task")).ok()?.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !(comm.starts_with("CPU ") && comm.trim_end().ends_with("/KVM")) {
            continue;
        }
        if let Some(g) = PidStat::read(&task.path().join("stat")).and_then(|s| s.guest_ticks) {
            out.vcpu_guest += g;
            out.vcpus += 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// A stat line whose utime, stime and guest_time are the given ticks.
    fn stat(comm: &str, utime: u64, stime: u64, guest: u64) -> String {
        let mut f: Vec<String> = (3..=52).map(|_| "0".to_string()).collect();
        f[0] = "S".into();
        f[14 - 3] = utime.to_string();
        f[15 - 3] = stime.to_string();
        f[43 - 3] = guest.to_string();
        format!("77 ({comm}) {}\n", f.join(" "))
    }

    #[test]
    fn vcpu_guest_time_is_summed_over_the_kvm_threads_only() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("77");
        write(&p.join("stat"), &stat("qemu-system-x86", 500, 100, 420));
        for (tid, comm, g) in [(77, "qemu-system-x86", 0), (78, "CPU 0/KVM", 300), (79, "CPU 1/KVM", 120)] {
            write(&p.join(format!("task/{tid}/comm")), &format!("{comm}\n"));
            write(&p.join(format!("task/{tid}/stat")), &stat(comm, 1, 1, g));
        }
        let t = qemu_ticks(d.path(), 77).unwrap();
        assert_eq!(t, QemuTicks { vcpu_guest: 420, vcpus: 2, process: 600 });
        assert_eq!(qemu_ticks(d.path(), 78), None);
    }

    #[test]
    fn the_backend_is_read_from_the_loaded_modules() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(kvm_backend(d.path()), KvmBackend::Unknown);
        std::fs::create_dir(d.path().join("kvm_pvm")).unwrap();
        assert_eq!(kvm_backend(d.path()), KvmBackend::Pvm);
        assert!(backend_refusal(KvmBackend::Pvm).unwrap().contains("RACEHORSE_GUEST_KERNEL"));
        std::fs::create_dir(d.path().join("kvm_amd")).unwrap();
        assert_eq!(kvm_backend(d.path()), KvmBackend::Hardware);
        assert_eq!(backend_refusal(KvmBackend::Hardware), None);
    }

    #[test]
    fn a_missing_kvm_device_is_refused_with_a_reason() {
        let e = check_kvm(Path::new("/nonexistent/kvm")).unwrap_err();
        assert!(e.contains("/nonexistent/kvm") && e.contains("not available"), "{e}");
    }
}
