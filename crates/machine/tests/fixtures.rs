//! Parsers, sampler, environment capture and exclusivity against the fixture trees.

mod common;

use common::fixture_root;
use racehorse_machine::diskstats::read_diskstats;
use racehorse_machine::env::capture;
use racehorse_machine::loadavg::read_loadavg;
use racehorse_machine::meminfo::read_meminfo;
use racehorse_machine::procstat::read_stat;
use racehorse_machine::vmstat::read_vmstat;
use racehorse_machine::{detect_method, online_cpus, point, possible_cpus, CpuMethod, RawSample, SysRoot};
use std::path::PathBuf;
use std::time::Duration;

#[test]
fn baremetal_parsers() {
    let r = fixture_root("baremetal4");
    let s = read_stat(&r).expect("stat");
    assert_eq!(s.cpu.user, 10000);
    assert_eq!((s.ctxt, s.procs_running), (500000, 2));
    assert_eq!(read_meminfo(&r).expect("mem").total_bytes, 16384000 * 1024);
    assert_eq!(read_vmstat(&r).expect("vm").pgmajfault, 1234);
    let l = read_loadavg(&r).expect("load");
    assert_eq!((l.load1, l.total), (2.5, 412));
    // sda + sdb only: no partitions, no loop, no dm.
    let d = read_diskstats(&r).expect("disk");
    assert_eq!(d.devices, 2);
    assert_eq!(d.read_bytes, (20000 + 40000) * 512);
    assert_eq!(d.write_bytes, (10000 + 30000) * 512);
    assert_eq!(online_cpus(&r).expect("online"), vec![0, 1, 2, 3]);
    assert_eq!(possible_cpus(&r).expect("possible").len(), 4);
}

#[test]
fn vm_disks_skip_partitions_and_zram() {
    let d = read_diskstats(&fixture_root("vm2")).expect("disk");
    assert_eq!((d.devices, d.read_bytes), (1, 2000 * 512));
}

#[test]
fn missing_file_error_names_the_path() {
    let r = SysRoot::at("/nonexistent-racehorse");
    let e = read_stat(&r).expect_err("missing");
    assert!(e.to_string().contains("/nonexistent-racehorse/proc/stat"), "{e}");
}

#[test]
fn sampler_on_fixture() {
    let r = fixture_root("vm2");
    let a = RawSample::read(&r).expect("read");
    let mut b = a;
    b.stat.cpu.steal += 50;
    b.stat.cpu.idle += 50;
    let p = point(&a, &b, 100, 1.0, 1000);
    assert!((p.cpu_steal_pct - 50.0).abs() < 1e-9);
    assert_eq!(p.mem_dirty_bytes, 40000 * 1024);
    assert_eq!(p.blocked, 1);
}

#[test]
fn baremetal_environment() {
    let r = fixture_root("baremetal4");
    let e = capture(&r, &[PathBuf::from("/srv/data/run1"), PathBuf::from("/home/x")]);
    assert_eq!(e.hostname, "bench-metal");
    assert_eq!(e.kernel_release, "6.1.0-18-amd64");
    assert_eq!(e.distro, "Debian GNU/Linux 12 (bookworm)");
    assert_eq!(e.cpu_model, "Intel(R) Xeon(R) E-2224 CPU @ 3.40GHz");
    assert_eq!((e.cpus_online, e.cpus_possible, e.cpu_list_online.as_str()), (4, 4, "0-3"));
    assert_eq!(e.caches.len(), 4);
    assert_eq!(e.caches[3].size_bytes, 8192 * 1024);
    assert_eq!(e.caches[3].shared_cpu_list, "0-3");
    assert_eq!(e.virtualization, "none");
    assert_eq!(e.memory_total_bytes, 16384000 * 1024);
    let t = &e.targets[0];
    assert_eq!(t.fstype.as_deref(), Some("xfs"));
    assert_eq!(t.device.as_deref(), Some("/dev/sdb1"));
    assert_eq!(t.disk.as_deref(), Some("sdb"));
    assert_eq!(t.scheduler.as_deref(), Some("bfq"));
    assert_eq!((t.read_ahead_kb, t.rotational), (Some(4096), Some(true)));
    assert_eq!(e.targets[1].mount_point.as_deref(), Some("/"));
    assert_eq!(e.targets[1].scheduler.as_deref(), Some("mq-deadline"));
    assert_eq!((e.swappiness, e.dirty_expire_centisecs), (Some(60), Some(3000)));
    assert_eq!((e.thp_enabled.as_deref(), e.thp_defrag.as_deref()), (Some("always"), Some("madvise")));
    assert_eq!(e.governor.as_deref(), Some("performance"));
    let cg = e.cgroup.as_ref().expect("cgroup");
    assert_eq!((cg.version, cg.memory_max_bytes), (1, Some(4 << 30)));
    assert_eq!(cg.cpu_max.as_deref(), Some("200000 100000"));
}

#[test]
fn vm_environment() {
    let r = fixture_root("vm2");
    let e = capture(&r, &[PathBuf::from("/var/lib/bench/t"), PathBuf::from("/tmp/x")]);
    assert_eq!(e.virtualization, "vm (QEMU Standard PC (Q35 + ICH9, 2009))");
    assert_eq!(e.distro, "Ubuntu 24.04 LTS");
    assert_eq!((e.cpus_online, e.cpu_list_online.as_str()), (2, "0-1"));
    let t = &e.targets[0];
    assert_eq!((t.disk.as_deref(), t.scheduler.as_deref()), (Some("vda"), Some("none")));
    assert_eq!(t.mount_options.as_deref(), Some("rw,relatime,discard"));
    let overlay = &e.targets[1];
    assert_eq!(overlay.fstype.as_deref(), Some("overlay"));
    assert_eq!((overlay.disk.as_ref(), overlay.scheduler.as_ref(), overlay.rotational), (None, None, None));
    assert_eq!(e.governor, None);
    let cg = e.cgroup.as_ref().expect("cgroup");
    assert_eq!((cg.version, cg.path.as_str()), (2, "/user.slice/racehorse.scope"));
    assert_eq!((cg.memory_max_bytes, cg.cpu_max.as_deref()), (None, Some("150000 100000")));
}

#[test]
fn environment_diff_between_fixtures() {
    let a = capture(&fixture_root("baremetal4"), &[PathBuf::from("/srv/data")]);
    let b = capture(&fixture_root("vm2"), &[PathBuf::from("/var/lib/bench")]);
    let d = a.diff(&b);
    let keys: Vec<&str> = d.iter().map(|(k, _, _)| k.as_str()).collect();
    for k in ["kernel.release", "cpu.online", "virtualization", "target[0].fstype", "cgroup.version"] {
        assert!(keys.contains(&k), "{k} missing from {keys:?}");
    }
    assert!(!keys.contains(&"vm.dirty_ratio"));
    assert!(d.iter().any(|(k, a, b)| k == "cache[2].kind" && a == "Unified" && b == "(absent)"));
}

#[test]
fn empty_root_environment_is_unknown() {
    let e = capture(&SysRoot::at("/nonexistent-racehorse"), &[PathBuf::from("/x")]);
    assert_eq!((e.hostname.as_str(), e.virtualization.as_str()), ("unknown", "unknown"));
    assert_eq!(e.targets[0].fstype, None);
    assert_eq!(e.cgroup, None);
}

#[test]
fn detect_method_on_fixtures() {
    let (_dir, r) = common::writable_fixture("baremetal4");
    assert_eq!(detect_method(&r), CpuMethod::Hotplug);
    assert_eq!(detect_method(&fixture_root("nonexistent")), CpuMethod::Affinity);
}

#[test]
fn exclusivity_on_fixture_reports_load() {
    let x = racehorse_machine::exclusivity::check(&fixture_root("baremetal4"), Duration::from_millis(10));
    assert_eq!(x.load1, 2.5);
    assert!(x.busy.is_empty(), "fixture counters do not move");
    assert!(x.warnings.iter().any(|w| w.contains("load average")), "{:?}", x.warnings);
}
