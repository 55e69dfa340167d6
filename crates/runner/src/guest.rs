//! Cells run inside a KVM guest (`where = "guest"`): the checks before a run (KVM usable,
//! QEMU and a guest kernel installed; otherwise the run is refused, never emulated), and the
//! host's side of one guest cell: the image, QEMU recorded in the Guard, the job, the
//! window's edges read on the host when the guest signals them, and the stored result with
//! the host's CPU split into Total, Guest (vCPU guest_time) and Hypervisor (the rest).

use crate::exec::{tell, Emit, Runner};
use crate::guest_vm::{self, FromGuest, GuestRefusal, HostEdge, Vm, VmSpec};
use crate::leftovers::WorkDir;
use crate::plan::{Plan, PlannedCell};
use crate::suite::harness::WHERE;
use crate::window_check::cpu_resolution;
use racehorse_core::event::CellPhase;
use racehorse_core::virt::{VirtCpu, GUEST_CPU};
use racehorse_core::{CellResult, CellSpec, Event, Nanos, Value};
use racehorse_engines::EngineError;
use racehorse_machine::guard::Guard;
use racehorse_machine::kvm::{backend_refusal, check_kvm, image, kvm_backend, kvm_device};
use racehorse_machine::procstat::{cpu_usage, user_hz};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Guest memory unless $RACEHORSE_GUEST_MEM_MIB says otherwise.
pub const DEFAULT_MEM_MIB: u64 = 1024;
/// The longest a guest may take from QEMU's start to its first message.
const BOOT_TIMEOUT: Duration = Duration::from_secs(60);
/// Margin for a guest's cell beyond its warmup and window (prepare, cleanup, result).
const CELL_MARGIN: Duration = Duration::from_secs(120);

/// Set inside a guest (by `guest-init`): cells run here, whatever their `where`.
pub static INSIDE_GUEST: AtomicBool = AtomicBool::new(false);

/// True when `spec` runs in a guest from here.
pub fn wants_guest(spec: &CellSpec) -> bool {
    matches!(spec.params.get(WHERE), Some(Value::Str(s)) if s == "guest")
        && !INSIDE_GUEST.load(Ordering::Relaxed)
}

/// Guest memory in MiB.
fn mem_mib() -> u64 {
    std::env::var("RACEHORSE_GUEST_MEM_MIB").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_MEM_MIB)
}

/// Before anything runs: a plan with guest cells needs KVM, QEMU and a guest kernel. Each
/// missing piece is a refusal that says what to install; there is no emulated fallback.
pub fn check_ready(plan: &Plan) -> Result<(), GuestRefusal> {
    if !plan.cells.iter().any(|c| wants_guest(&c.spec)) {
        return Ok(());
    }
    check_kvm(&kvm_device()).map_err(GuestRefusal::Kvm)?;
    let own_kernel = std::env::var_os("RACEHORSE_GUEST_KERNEL").is_some_and(|k| !k.is_empty());
    if let Some(why) = backend_refusal(kvm_backend(Path::new("/sys/module"))).filter(|_| !own_kernel) {
        return Err(GuestRefusal::Kvm(why));
    }
    guest_vm::qemu_binary().ok_or(GuestRefusal::NoQemu)?;
    image::find_kernel().map_err(GuestRefusal::NoKernel)?;
    Ok(())
}

/// What the guest runs: one cell.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    pub spec: CellSpec,
    pub cpus: u32,
    pub warmup_ns: u64,
    pub runtime_ns: u64,
}

/// The file the job is in, in the guest's root.
pub const JOB_FILE: &str = "job.json";

fn failed(what: &str) -> impl Fn(String) -> EngineError + '_ {
    move |e| EngineError::Failed(format!("{what}: {e}"))
}

/// The initramfs for this guest: the cached image with the job appended as a second archive.
fn initramfs_with_job(
    dir: &std::path::Path,
    img: &image::GuestImage,
    job: &Job,
) -> Result<std::path::PathBuf, EngineError> {
    let json = serde_json::to_vec(job).map_err(|e| EngineError::Failed(e.to_string()))?;
    let mut bytes =
        std::fs::read(&img.initramfs).map_err(|e| failed("reading the guest image")(e.to_string()))?;
    bytes.extend(image::job_archive(JOB_FILE, &json).map_err(failed("the job archive"))?);
    let path = dir.join("initramfs.cpio");
    std::fs::write(&path, bytes).map_err(|e| failed("writing the guest's initramfs")(e.to_string()))?;
    Ok(path)
}

/// Host side of one guest cell; fills `result`. QEMU is recorded in the Guard at once and
/// ended (killed if need be) before this returns, on every path.
pub fn measure(
    runner: &Runner,
    cell: &PlannedCell,
    guard: &mut Guard,
    emit: &mut Emit,
    result: &mut CellResult,
) -> Result<(), EngineError> {
    tell(emit, Event::CellPhase { index: cell.index, phase: CellPhase::Prepare });
    let exe = std::env::current_exe().map_err(|e| failed("finding racehorse's own binary")(e.to_string()))?;
    let img = image::ensure(&image::cache_dir(), &exe).map_err(failed("building the guest image"))?;
    let dir = runner.work_root.join(format!("racehorse-{}-guest{}", std::process::id(), cell.index));
    // Removed on every path when this returns (QEMU has ended by then); a kill leaves it to
    // the next run's sweep (`leftovers`).
    let work = WorkDir::create(dir.clone()).map_err(|e| EngineError::io("the guest's directory", &dir, e))?;
    let dir = work.path();
    let job = Job {
        spec: cell.spec.clone(),
        cpus: cell.cpus,
        warmup_ns: cell.warmup.as_nanos() as u64,
        runtime_ns: cell.runtime.as_nanos() as u64,
    };
    let initramfs = initramfs_with_job(dir, &img, &job)?;
    let qemu =
        guest_vm::qemu_binary().ok_or_else(|| EngineError::Failed("qemu-system-x86_64 is gone".into()))?;
    let spec = VmSpec {
        kernel: &img.kernel,
        initramfs: &initramfs,
        vcpus: cell.cpus,
        mem_mib: mem_mib(),
        cpu_model: guest_vm::cpu_model(),
        dir,
    };
    let mut vm = guest_vm::start(&qemu, &spec).map_err(|e| failed("starting the guest")(e.to_string()))?;
    let pid = vm.pid();
    let recorded = guard.record_guest(pid).map_err(|e| failed("recording the guest")(e.to_string()));
    let outcome = recorded.and_then(|_| drive(runner, cell, &mut vm, emit, result, spec.mem_mib));
    let ended = guard.end_guest(pid).map_err(|e| failed("ending the guest")(e.to_string()));
    let _ = vm.child.wait();
    tell(emit, Event::CellPhase { index: cell.index, phase: CellPhase::Cleanup });
    outcome.and(ended)
}

/// The host's readings at the guest's edges and what the guest sent.
#[derive(Default)]
struct Received {
    boot: Option<Duration>,
    start: Option<HostEdge>,
    end: Option<HostEdge>,
    result: Option<String>,
}

/// Follows the guest from its start to its result (or its failure, a stop signal, a timeout).
fn drive(
    runner: &Runner,
    cell: &PlannedCell,
    vm: &mut Vm,
    emit: &mut Emit,
    result: &mut CellResult,
    mem_mib: u64,
) -> Result<(), EngineError> {
    let stream =
        vm.connect(Duration::from_secs(10)).map_err(|e| failed("the guest channel")(e.to_string()))?;
    let rx = guest_vm::read_channel(stream, runner.root.clone(), vm.pid());
    let mut got = Received::default();
    let deadline = vm.started + BOOT_TIMEOUT + cell.warmup + cell.runtime + CELL_MARGIN;
    while got.result.is_none() {
        if runner.abort.load(Ordering::Relaxed) {
            return Err(EngineError::Interrupted);
        }
        if got.boot.is_none() && vm.started.elapsed() > BOOT_TIMEOUT {
            return Err(EngineError::Failed(format!(
                "the guest did not boot within {} s; its console: {}",
                BOOT_TIMEOUT.as_secs(),
                guest_vm::tail(&vm.console, 5)
            )));
        }
        if Instant::now() > deadline {
            return Err(EngineError::Failed(format!(
                "the guest did not finish its cell in time; its console: {}",
                guest_vm::tail(&vm.console, 5)
            )));
        }
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(FromGuest::Ready(at)) => {
                got.boot = Some(at - vm.started);
                tell(emit, Event::CellPhase { index: cell.index, phase: CellPhase::Warmup });
            }
            Ok(FromGuest::Edge { start: true, edge }) => got.start = Some(edge),
            Ok(FromGuest::Edge { start: false, edge }) => got.end = Some(edge),
            Ok(FromGuest::Result(json)) => got.result = Some(json),
            Ok(FromGuest::Error(text)) => return Err(EngineError::Failed(format!("in the guest: {text}"))),
            Ok(FromGuest::Closed) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                std::thread::sleep(Duration::from_millis(200));
                let why = vm.ended().unwrap_or_else(|| "the guest closed its channel".into());
                return Err(EngineError::Failed(format!("the guest ended without a result: {why}")));
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
    let guest: CellResult = serde_json::from_str(got.result.as_deref().unwrap_or_default())
        .map_err(|e| EngineError::Failed(format!("the guest's result: {e}")))?;
    fill(result, guest, &got, cell.cpus, mem_mib)
}

/// The stored cell: the guest's units, window and latencies; the host's CPU in the window
/// as `cpu`, and its split in `virt`; each part marked when below its resolution.
fn fill(
    result: &mut CellResult,
    guest: CellResult,
    got: &Received,
    vcpus: u32,
    mem_mib: u64,
) -> Result<(), EngineError> {
    result.status = guest.status;
    result.error = guest.error.clone();
    result.units = guest.units;
    result.window = guest.window;
    result.ops = guest.ops;
    result.bytes_read = guest.bytes_read;
    result.bytes_written = guest.bytes_written;
    result.workload_cpu = guest.workload_cpu;
    result.latencies = guest.latencies;
    result.extra.extend(guest.extra);
    result.settings.extend(guest.settings);
    for (name, why) in guest.quality.below_resolution {
        // The guest's own CPU view is kept in `virt.guest_view`; its resolution is not the host's.
        if name != racehorse_core::quality::CPU {
            result.quality.below_resolution.insert(name, why);
        }
    }
    if result.status != racehorse_core::CellStatus::Ok {
        return Ok(());
    }
    let (Some(a), Some(b)) = (&got.start, &got.end) else {
        return Err(EngineError::Failed("the guest never signalled its window's edges".into()));
    };
    let (Some(s0), Some(s1), Some(q0), Some(q1)) = (&a.stat, &b.stat, a.qemu, b.qemu) else {
        return Err(EngineError::Failed(
            "the host's /proc readings at the guest's window are missing".into(),
        ));
    };
    let hz = user_hz();
    result.cpu = cpu_usage(&s0.cpu, &s1.cpu, hz);
    let total_s = result.cpu.total_s();
    let ticks = |x: u64, y: u64| y.saturating_sub(x) as f64 / hz.max(1) as f64;
    let (guest_s, hypervisor_s) = VirtCpu::split(total_s, ticks(q0.vcpu_guest, q1.vcpu_guest));
    result.virt = Some(VirtCpu {
        total_s,
        guest_s,
        hypervisor_s,
        qemu_s: ticks(q0.process, q1.process),
        vcpus,
        mem_mib,
        guest_view: guest.cpu,
        host_window: Nanos::from_duration(b.at.saturating_duration_since(a.at)),
        boot: Nanos::from_duration(got.boot.unwrap_or_default()),
    });
    let host_cpus =
        racehorse_machine::online_cpus(&racehorse_machine::SysRoot::host()).map(|v| v.len() as u32);
    if let Some(why) = cpu_resolution(total_s, host_cpus.unwrap_or(1), hz) {
        result.quality.mark_below(racehorse_core::quality::CPU, why);
    }
    if let Some(why) = cpu_resolution(guest_s, q1.vcpus.max(1), hz) {
        result.quality.mark_below(GUEST_CPU, format!("guest time: {why}"));
    }
    show_split(result);
    Ok(())
}

/// The split as extras too, so that `show` lists it: the boot time, and each part in µs per
/// unit when resolved (a part below resolution has no figure).
fn show_split(result: &mut CellResult) {
    let parts = [
        ("virt_total_us_per_unit", result.virt_total_per_unit()),
        ("virt_hypervisor_us_per_unit", result.virt_hypervisor_per_unit()),
        ("virt_guest_us_per_unit", result.virt_guest_per_unit()),
    ];
    for (name, v) in parts {
        if let Some(v) = v {
            result.extra.insert(name.into(), v * 1e6);
        }
    }
    if let Some(v) = &result.virt {
        result.extra.insert("guest_boot_ms".into(), v.boot.as_secs_f64() * 1e3);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use racehorse_core::{CellStatus, CpuUsage, Params, WorkUnit};
    use racehorse_machine::kvm::QemuTicks;
    use racehorse_machine::procstat::{CpuTicks, StatSnapshot};

    fn edge(user: u64, system: u64, guest: u64) -> HostEdge {
        let cpu = CpuTicks { user, system, ..CpuTicks::default() };
        let stat = StatSnapshot { cpu, ctxt: 0, procs_running: 0, procs_blocked: 0 };
        let qemu = QemuTicks { vcpu_guest: guest, vcpus: 1, process: guest + 10 };
        HostEdge { at: Instant::now(), stat: Some(stat), qemu: Some(qemu) }
    }

    #[test]
    fn the_host_cpu_is_split_into_guest_and_hypervisor() {
        let mut params = Params::new();
        params.insert(WHERE.into(), Value::Str("guest".into()));
        let spec = CellSpec { workload: "compute".into(), params, variant: "default".into(), rep: 1 };
        assert!(wants_guest(&spec));
        let mut guest = CellResult::empty(spec.clone(), WorkUnit::Ops);
        guest.units = 1000.0;
        guest.cpu = CpuUsage { user_s: 2.0, ..CpuUsage::default() };
        guest.quality.mark_below(racehorse_core::quality::CPU, "guest ticks");
        let got = Received {
            boot: Some(Duration::from_millis(900)),
            start: Some(edge(1000, 100, 500)),
            end: Some(edge(1250, 130, 700)),
            result: None,
        };
        let mut r = CellResult::empty(spec, WorkUnit::Ops);
        fill(&mut r, guest, &got, 1, 512).unwrap();
        assert_eq!(r.status, CellStatus::Ok);
        let v = r.virt.unwrap();
        let hz = user_hz() as f64;
        assert!((v.total_s - 280.0 / hz).abs() < 1e-9 && (v.guest_s - 200.0 / hz).abs() < 1e-9, "{v:?}");
        assert!((v.hypervisor_s - 80.0 / hz).abs() < 1e-9);
        assert_eq!(v.guest_view.user_s, 2.0);
        assert!(!r.quality.below(racehorse_core::quality::CPU) || hz > 1000.0, "{:?}", r.quality);
        assert!(r.virt_guest_per_unit().is_some());
    }
}
