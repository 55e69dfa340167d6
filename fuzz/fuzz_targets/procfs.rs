//! Fuzz target: every /proc and sysfs text parser must survive arbitrary input.
#![no_main]
use libfuzzer_sys::fuzz_target;
use racehorse_machine::{cpuctl, diskstats, loadavg, meminfo, mounts, procstat, vmstat};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = procstat::parse_stat(&text);
    let _ = meminfo::parse_meminfo(&text);
    let _ = vmstat::parse_vmstat(&text);
    let _ = loadavg::parse_loadavg(&text);
    let _ = diskstats::parse_diskstats(&text, |_| true);
    let _ = mounts::parse_mounts(&text);
    let _ = cpuctl::parse_cpu_list(&text);
});
