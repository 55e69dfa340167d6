//! Cells in real KVM guests through the binary (`-o where=guest`): a fileserver cell stores
//! the host CPU split into Total, Hypervisor and Guest; a busy vCPU accounts about one guest
//! CPU second per second; a killed racehorse leaves no QEMU behind once `restore` ran; and
//! without KVM the run is refused before any window (exit 2), never emulated.

use crate::common::{bin, machine_lock, text, Sandbox};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// Why QEMU cannot use KVM here, or None. Only a missing or unusable /dev/kvm skips: QEMU
/// and the guest kernel are installed by scripts/test.sh, so their absence fails the tests.
fn no_kvm() -> Option<String> {
    let kvm = std::fs::OpenOptions::new().read(true).write(true).open("/dev/kvm");
    kvm.err().map(|e| format!("/dev/kvm cannot be opened for reading and writing: {e}"))
}

/// True when this host's KVM is PVM (kvm_pvm), which cannot boot a distribution kernel.
fn pvm() -> bool {
    std::path::Path::new("/sys/module/kvm_pvm").exists()
        && !["kvm_intel", "kvm_amd"].iter().any(|m| std::path::Path::new("/sys/module").join(m).exists())
}

/// Why a guest cannot boot here, or None: no usable KVM, or PVM without a PVM guest kernel
/// in $RACEHORSE_GUEST_KERNEL.
fn no_guest() -> Option<String> {
    no_kvm().or_else(|| {
        (pvm() && std::env::var_os("RACEHORSE_GUEST_KERNEL").is_none()).then(|| {
            "KVM here is PVM (kvm_pvm), which boots only PVM guest kernels; set RACEHORSE_GUEST_KERNEL to one"
                .to_string()
        })
    })
}

/// The newest installed kernel (QEMU starts with it even where it cannot boot).
fn newest_kernel() -> PathBuf {
    let mut k: Vec<PathBuf> = std::fs::read_dir("/boot")
        .expect("/boot")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("vmlinuz-")))
        .collect();
    k.sort();
    k.pop().expect("a kernel in /boot: scripts/test.sh installs linux-image-cloud-amd64")
}

/// The guest image cache shared by these tests (building it strips the debug binary).
fn cache_dir() -> PathBuf {
    bin().parent().expect("profile dir").join("guest-cache")
}

fn guest_cmd(sb: &Sandbox, args: &[&str], mem_mib: u32) -> Command {
    let mut c = sb.cmd(args);
    c.env("RACEHORSE_CACHE_DIR", cache_dir()).env("RACEHORSE_GUEST_MEM_MIB", mem_mib.to_string());
    c
}

fn f(v: &serde_json::Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
}

#[test]
fn without_kvm_a_guest_cell_is_refused_before_the_window() {
    let sb = Sandbox::new();
    let o = sb
        .cmd(&["run", "null", "-o", "where=guest", "--runtime", "1s", "--quiet"])
        .env("RACEHORSE_KVM_DEVICE", sb.dir.path().join("no-kvm"))
        .output()
        .expect("spawn");
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("where=guest needs KVM") && t.contains("no emulated fallback"), "{t}");
    assert!(t.contains("no-kvm"), "names the device: {t}");
    let list = text(&sb.run(&["list"]));
    assert!(!list.contains("null"), "nothing was recorded: {list}");
    let bad = text(&sb.run(&["run", "null", "-o", "where=moon", "--quiet"]));
    assert!(bad.contains("expected host or guest"), "{bad}");
    if pvm() {
        // A KVM that cannot boot the installed kernel is refused too, not left to time out.
        let o = sb.run(&["run", "null", "-o", "where=guest", "--runtime", "1s", "--quiet"]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{t}");
        assert!(t.contains("PVM") && t.contains("RACEHORSE_GUEST_KERNEL"), "{t}");
    }
}

#[test]
fn a_fileserver_cell_in_a_guest_stores_the_cpu_split() {
    if let Some(why) = no_guest() {
        racehorse_testkit::skip!("{why}");
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    let work = sb.work();
    // All CPUs (the default): fewer would take a CPU offline on a shared root machine.
    let args = ["run", "fileserver", "-o", "where=host,guest", "--runtime", "3s", "--warmup", "1s"];
    let o = guest_cmd(&sb, &args, 768)
        .args(["--reps", "1", "--no-warm-up", "--quiet", "--label", "fs", "--dir"])
        .arg(&work)
        .output()
        .expect("spawn");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let cells = sb.cells("fs");
    assert_eq!(cells.len(), 2, "{cells:?}");
    let guest = cells.iter().find(|c| c["params"]["where"] == "guest").expect("guest cell");
    let host = cells.iter().find(|c| c["params"]["where"] == "host").expect("host cell");
    assert!(host["virt"].is_null(), "bare metal has no split");
    let v = &guest["virt"];
    let (total, guest_s, hyp) = (f(v, "total_s"), f(v, "guest_s"), f(v, "hypervisor_s"));
    assert!(f(guest, "units") > 0.0 && guest_s > 0.1, "{v}");
    assert!((total - guest_s - hyp).abs() < 1e-6 && hyp >= 0.0, "Total = Guest + Hypervisor: {v}");
    assert!((f(v, "total_s") - f(&guest["cpu"], "total_s")).abs() < 1e-9, "the cell's CPU is the host's");
    let boot_s = f(v, "boot_ns") / 1e9;
    println!("guest boot {boot_s:.2} s; split {v}");
    assert!(boot_s > 0.0 && boot_s < 20.0, "guests boot in seconds: {boot_s}");
    let cmp = text(&sb.run(&["compare", "fs", "--by", "where=host"]));
    assert!(cmp.contains("Hypervisor CPU/unit") && cmp.contains("Guest CPU/unit"), "{cmp}");
    println!("{cmp}");
}

#[test]
fn a_busy_vcpu_accounts_about_one_guest_cpu_second_per_second() {
    if let Some(why) = no_guest() {
        racehorse_testkit::skip!("{why}");
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    // compute pins its kernels to the last vCPU: one of the guest's vCPUs is busy for the
    // whole window, the other idles (an idle vCPU halts: no guest time).
    let args = ["run", "compute", "-o", "case=sort", "-o", "reps=40", "-o", "where=guest"];
    let o = guest_cmd(&sb, &args, 512)
        .args(["--reps", "1", "--no-warm-up", "--quiet", "--label", "burn"])
        .output()
        .expect("spawn");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let cells = sb.cells("burn");
    let v = &cells[0]["virt"];
    let window_s = f(&cells[0], "window_s");
    let host_window_s = f(v, "host_window_ns") / 1e9;
    let per_s = f(v, "guest_s") / host_window_s;
    println!(
        "burner: window {window_s:.2} s (host {host_window_s:.2} s), guest {:.2} CPU-s/s, hypervisor {:.3} CPU-s/s, \
         QEMU process {:.2} CPU-s/s",
        per_s,
        f(v, "hypervisor_s") / host_window_s,
        f(v, "qemu_s") / host_window_s
    );
    assert!(host_window_s > 1.0, "a window long enough for tick resolution: {v}");
    // One tick (10 ms) at each edge and a guest kernel's own idle moments: within 15%.
    assert!((0.85..=1.1).contains(&per_s), "about one guest CPU-s per s: {per_s} ({v})");
}

fn qemu_alive(pid: i32) -> bool {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    comm.starts_with("qemu") && !stat.contains(") Z")
}

/// Starts a long guest cell and returns racehorse and QEMU's pid once the guest is recorded.
fn start_long_guest(sb: &Sandbox, no_pdeathsig: bool) -> (std::process::Child, i32) {
    let args = ["run", "null", "-o", "where=guest", "--runtime", "60s", "--no-warm-up", "--quiet"];
    let mut cmd = guest_cmd(sb, &args, 512);
    // Named explicitly: QEMU starts with it and is killed before the guest need have booted
    // (under PVM it never would).
    cmd.env("RACEHORSE_GUEST_KERNEL", newest_kernel());
    if no_pdeathsig {
        cmd.env("RACEHORSE_TEST_NO_PDEATHSIG", "1");
    }
    let mut child = cmd.spawn().expect("spawn");
    let state = sb.state_dir().join("restore.json");
    let start = Instant::now();
    let pid = loop {
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&state).unwrap_or_default()).unwrap_or_default();
        if let Some(pid) = json["guests"][0]["pid"].as_i64() {
            break pid as i32;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("no guest recorded in {}", state.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(1500)); // into the guest's boot
    (child, pid)
}

#[test]
fn a_killed_run_leaves_no_guest() {
    if let Some(why) = no_kvm() {
        racehorse_testkit::skip!("{why}");
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    // Without PR_SET_PDEATHSIG, only the state file can end the guest: `restore` must.
    let (mut rh, qemu) = start_long_guest(&sb, true);
    assert!(qemu_alive(qemu));
    rh.kill().expect("SIGKILL racehorse");
    rh.wait().expect("reap");
    std::thread::sleep(Duration::from_millis(300));
    assert!(qemu_alive(qemu), "QEMU outlives a SIGKILLed racehorse when nothing else stops it");
    let o = sb.run(&["restore"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("killed guest qemu"), "{t}");
    assert!(!qemu_alive(qemu), "restore killed QEMU {qemu}");

    // As racehorse runs normally: QEMU dies with it (PR_SET_PDEATHSIG), the next start has
    // nothing left to kill.
    let (mut rh, qemu) = start_long_guest(&sb, false);
    rh.kill().expect("SIGKILL racehorse");
    rh.wait().expect("reap");
    let start = Instant::now();
    while qemu_alive(qemu) && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!qemu_alive(qemu), "QEMU {qemu} ended with racehorse");
    let again = sb.run(&["restore"]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
}

/// A QEMU wrapper that swaps `-enable-kvm -cpu …` for TCG: a harness check of everything but
/// KVM (the image, racehorse as init, the channel, the stored split) on hosts whose KVM
/// cannot boot the guest (PVM). racehorse itself never falls back to emulation.
fn tcg_wrapper(dir: &std::path::Path) -> PathBuf {
    let script = dir.join("qemu-tcg.sh");
    let text = "#!/bin/bash\nout=()\nskip=0\nfor a in \"$@\"; do\n  if [ $skip = 1 ]; then skip=0; continue; fi\n  \
                case \"$a\" in\n    -enable-kvm) ;;\n    -cpu) skip=1 ;;\n    *) out+=(\"$a\") ;;\n  esac\ndone\n\
                exec qemu-system-x86_64 -accel tcg -cpu max \"${out[@]}\"\n";
    std::fs::write(&script, text).expect("write wrapper");
    let status = Command::new("chmod").arg("+x").arg(&script).status().expect("chmod");
    assert!(status.success());
    script
}

#[test]
fn a_guest_cell_runs_end_to_end_with_qemu_emulating_as_a_harness_check() {
    if no_kvm().is_some() || !pvm() {
        // With hardware KVM the tests above boot real guests; without /dev/kvm the run is refused.
        racehorse_testkit::skip!("only where KVM is PVM (this check stands in for the boots it cannot do)");
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    let args = ["run", "null", "-o", "where=guest", "--runtime", "2s", "--warmup", "1s", "--no-warm-up"];
    let o = guest_cmd(&sb, &args, 512)
        .env("RACEHORSE_QEMU", tcg_wrapper(sb.dir.path()))
        .env("RACEHORSE_GUEST_KERNEL", newest_kernel())
        .args(["--quiet", "--label", "tcg", "--dir"])
        .arg(sb.work())
        .output()
        .expect("spawn");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let cells = sb.cells("tcg");
    let c = &cells[0];
    assert_eq!(c["status"], "ok", "{c}");
    assert!((f(c, "units") / f(c, "window_s") - 1000.0).abs() < 50.0, "the guest's null cell: {c}");
    let v = &c["virt"];
    println!("guest under TCG: boot {:.1} s, split {v}", f(v, "boot_ns") / 1e9);
    assert!(f(v, "boot_ns") > 0.0 && f(v, "total_s") > 0.0, "{v}");
    // Emulated vCPUs never enter guest mode: no guest time, shown as below resolution, not 0.
    assert_eq!(f(v, "guest_s"), 0.0, "{v}");
    assert!(c["quality"]["below_resolution"]["guest cpu"].is_string(), "{c}");
    assert!(v["per_unit"]["guest_s"].is_null() && v["per_unit"]["hypervisor_s"].is_null(), "{v}");
}
