//! CPU cost of one daemon interval without the sleep: count the online CPUs, sample /proc
//! (what the seed rules need), push into the history, evaluate HOTPLUG and HOTUNPLUG. Prints the median over
//! batches of the process CPU time per interval, in µs.
//!
//! cargo run --release -p racehorse-plugd --example eval_cost [CONFIG] [INTERVALS_PER_BATCH]

use racehorse_machine::rusage::process_cpu;
use racehorse_machine::SysRoot;
use racehorse_plugd::cpus::{CpuBackend, SysfsCpus};
use racehorse_plugd::decide::{cpu_step, CpuLimits};
use racehorse_plugd::sample::read_sample;
use racehorse_plugd::values::History;

const SEED: &str = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\n\
    HOTPLUG=\"(loadavg > onumcpus + 0.75) & (idle < 10.0)\"\n\
    HOTUNPLUG=\"(loadavg < onumcpus - 0.25) | (idle > 50)\"\n";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = args.get(1).map(|p| std::fs::read_to_string(p).expect("config")).unwrap_or(SEED.to_string());
    let per_batch: u32 = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(2000);
    let cfg = racehorse_rules::parse_config(&text).expect("valid config");
    let (hp, hu) = (cfg.hotplug.as_ref().expect("HOTPLUG"), cfg.hotunplug.as_ref().expect("HOTUNPLUG"));
    let root = SysRoot::host();
    let needs = racehorse_plugd::daemon::needs(&cfg);
    let mut h = History::new(cfg.history_depth());
    // As the daemon: the sysfs backend reads the online list each interval; present once.
    let cpus = SysfsCpus::new(root.clone(), vec![]).expect("sysfs CPUs");
    let present = cpus.present().expect("present");
    let mut per_interval_us = Vec::new();
    let mut decisions = 0u64;
    for _ in 0..7 {
        let c0 = process_cpu();
        for _ in 0..per_batch {
            // Each interval counts the CPUs as the daemon does.
            let online = cpus.online().expect("online CPUs").len() as u32;
            h.push(read_sample(&root, needs, online, present).expect("sample"));
            if h.ready() {
                let lim = CpuLimits { min: 1, max: present };
                std::hint::black_box(&lim);
                decisions += cpu_step(&hp.expr, &hu.expr, &h, online, lim).is_ok() as u64;
            }
        }
        let used = process_cpu().since(c0).total_s();
        per_interval_us.push(used / f64::from(per_batch) * 1e6);
    }
    per_interval_us.sort_by(f64::total_cmp);
    println!(
        "one interval (sample + rules): median {:.1} µs CPU (range {:.1}–{:.1}) over 7 batches of {per_batch}; {decisions} decisions",
        per_interval_us[3],
        per_interval_us[0],
        per_interval_us[6]
    );
    let part = |name: &str, f: &mut dyn FnMut()| {
        let c0 = process_cpu();
        for _ in 0..per_batch {
            f();
        }
        let us = process_cpu().since(c0).total_s() / f64::from(per_batch) * 1e6;
        println!("  {name}: {us:.1} µs");
    };
    println!("parts (one batch each):");
    part("online CPUs (/sys/devices/system/cpu/online)", &mut || {
        std::hint::black_box(cpus.online().ok());
    });
    part("sample (/proc/loadavg, /proc/stat)", &mut || {
        std::hint::black_box(read_sample(&root, needs, 2, 2).ok());
    });
    part("both rules on the history", &mut || {
        std::hint::black_box(cpu_step(&hp.expr, &hu.expr, &h, 2, CpuLimits { min: 1, max: 2 }).ok());
    });
}
