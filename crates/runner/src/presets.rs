//! Built-in suites users can run by name (`racehorse run quick`).

use crate::suite::{Suite, SuiteError};

/// Names and one-line descriptions of the presets.
pub const PRESETS: &[(&str, &str)] = &[
    ("quick", "fileserver at 1 and 4 clients on 1 and all CPUs, 10 s windows, 2 reps (~2-3 min)"),
    ("standard", "fileserver at 1, 4, 8 and 16 clients on 1..all CPUs, 30 s windows, 3 reps"),
    (
        "disk-configs",
        "seed 004: diskio write/read/randread/randwrite, 8k and 64k records, 1/8/32 processes, direct \
         and page cache, 2 GiB per cell under a 512 MiB memory limit (root), 3 reps",
    ),
    (
        "disk-regression",
        "seed 001: the six IOzone phases, 64k records, 512 MiB file, page cache, 3 reps; add targets with \
         --opt target=/a,/b",
    ),
    (
        "hotplug",
        "seed 003: fileserver with ipc=mq over 10 client counts (scaled to the machine), without hotplug \
         and under racehorse plugd with two settings (cpu_min, cpu_max, update); 30 s windows, 2 reps (root)",
    ),
    (
        "lmbench",
        "seed 000's lmbench table with the micro engine: kernel latencies, select over 10-500 descriptors, bandwidths and \
         the memory chase inside each cache level and main memory, the cache sweep; 1 rep (about 70 s)",
    ),
    (
        "net",
        "seed 000's uperf suite with the net engine on a loopback peer: rr 1x1, 200x1000, 200x30k and \
         30k streams (read, write) at 1, 10, 50 and 250 connections; 20 s windows, 1 rep (~9 min); \
         --peer HOST:PORT for a `racehorse serve` elsewhere",
    ),
    (
        "reaim",
        "seed 000's re-aim study, quick: mix ramps of fserver and compute (re-aim 7's mixes) from 1 user until \
         throughput drops after its peak, on 1 and all CPUs; small disk files; 1 rep (< 10 min on 2 CPUs)",
    ),
    (
        "compute",
        "seed 000's compute-intense suite, quick sizes (< 2 s per case): the integer and floating-point suites and \
         telco, each case in its own pinned process, self-checked; scores and their geometric means; 5 reps (~2 min)",
    ),
    (
        "compute-standard",
        "the compute suite in its standard sizes (5-30 s per case); 3 reps (~30 min)",
    ),
];

/// seed 000's uperf matrix: three request/response profiles and two streams, each over 1,
/// 10, 50 and 250 connections (one per client thread).
const NET: &str = "name = \"net\"\nruntime = \"20s\"\nwarmup = \"5s\"\nreps = 1\ndrop_caches = false\n\n\
    [[workload]]\nengine = \"net\"\nmode = \"rr\"\nrequest = 1\nresponse = 1\nconnections = [1, 10, 50, 250]\n\n\
    [[workload]]\nengine = \"net\"\nmode = \"rr\"\nrequest = 200\nresponse = 1000\nconnections = [1, 10, 50, 250]\n\n\
    [[workload]]\nengine = \"net\"\nmode = \"rr\"\nrequest = 200\nresponse = \"30k\"\nconnections = [1, 10, 50, 250]\n\n\
    [[workload]]\nengine = \"net\"\nmode = [\"stream-read\", \"stream-write\"]\nmessage = \"30k\"\n\
    connections = [1, 10, 50, 250]\n";

/// seed 000's re-aim runs, scaled down: a ramp per workfile and CPU count; POOLSIZE is a tenth
/// of re-aim's default so that the O_SYNC tasks do not dominate on a slow disk.
fn reaim(all: u32) -> String {
    format!(
        "name = \"reaim\"\nruntime = \"20s\"\nwarmup = \"0s\"\nreps = 1\ncpus = {}\n\n\
         [[workload]]\nengine = \"mix\"\nworkfile = [\"fserver\", \"compute\"]\nusers = 0\njobs = 100\n\
         stop = \"peak\"\nmax_users = {}\nfilesize = \"10k\"\npoolsize = \"100k\"\ntimeout = 120\n",
        cpu_axis(all),
        64 * all.max(1)
    )
}

/// seed 000's compute suites as three cells (integer, floating point, telco) of `size`.
fn compute(name: &str, size: &str, reps: u32) -> String {
    format!(
        "name = \"{name}\"\nruntime = \"1s\"\nwarmup = \"0s\"\nreps = {reps}\ndrop_caches = false\n\n\
         [[workload]]\nengine = \"compute\"\ncase = [\"int\", \"fp\", \"telco\"]\nsize = \"{size}\"\n"
    )
}

/// The cache levels of this machine (sysfs) as `level` values, then main memory.
fn micro_levels() -> Vec<String> {
    let found = racehorse_engines::micro::caches::from_sysfs(&racehorse_machine::SysRoot::host(), 0)
        .unwrap_or_default();
    let mut v: Vec<String> = found.iter().map(|l| format!("l{}", l.level)).collect();
    v.dedup();
    v.push("mem".into());
    v
}

/// seed 000's lmbench rows as one suite, levels as found here.
fn micro(levels: &[String]) -> String {
    let latencies: Vec<&str> = racehorse_engines::micro::BENCHES
        .iter()
        .copied()
        .filter(|b| {
            !b.starts_with("bw_") && !b.contains("_rd") && !b.starts_with("chase") && !b.starts_with("select")
        })
        .filter(|b| *b != "caches")
        .collect();
    let bandwidths: Vec<&str> = racehorse_engines::micro::BENCHES
        .iter()
        .copied()
        .filter(|b| b.starts_with("bw_") || b.contains("_rd"))
        .collect();
    format!(
        "name = \"lmbench\"\nruntime = \"1s\"\nwarmup = \"0s\"\nreps = 1\ndrop_caches = false\n\n\
         [[workload]]\nengine = \"micro\"\nbench = {latencies:?}\n\n\
         [[workload]]\nengine = \"micro\"\nbench = [\"select_file\", \"select_tcp\"]\nfds = [10, 100, 250, 500]\n\n\
         [[workload]]\nengine = \"micro\"\nbench = {bandwidths:?}\nlevel = {levels:?}\n\n\
         [[workload]]\nengine = \"micro\"\nbench = \"chase\"\nlevel = {levels:?}\n\n\
         [[workload]]\nengine = \"micro\"\nbench = \"chase_rand\"\nstride = 16\nlevel = {levels:?}\n\n\
         [[workload]]\nengine = \"micro\"\nbench = \"caches\"\n"
    )
}

/// seed 003's client counts (1..40 on up to 16 CPUs), scaled to `all` CPUs (at least a
/// quarter of them), distinct.
fn hotplug_clients(all: u32) -> Vec<u32> {
    let factor = (f64::from(all) / 16.0).max(0.25);
    let mut v: Vec<u32> = [1u32, 2, 4, 8, 12, 16, 20, 26, 32, 40]
        .iter()
        .map(|&c| ((f64::from(c) * factor).round() as u32).max(1))
        .collect();
    v.dedup();
    v
}

/// seed 003: no hotplug, then plugd "2,20,1" and "2,5,10" (cpu_min, cpu_max, update on 16
/// CPUs) scaled: cpu_min = all/8, cpu_max = all or 5/16 of them, update 1 s or 10 s.
fn hotplug(all: u32) -> String {
    let min = (all / 8).max(1);
    let small = (all * 5).div_ceil(16).max(min);
    format!(
        "name = \"hotplug\"\nruntime = \"30s\"\nwarmup = \"15s\"\nreps = 2\n\n\
         [[workload]]\nengine = \"fileserver\"\nipc = \"mq\"\nclients = {:?}\n\n\
         [[variant]]\nname = \"no-hotplug\"\n\n\
         [[variant]]\nname = \"plugd-{min}-all-1s\"\nplugd = {{ cpu_min = {min}, cpu_max = 0, update = 1 }}\n\n\
         [[variant]]\nname = \"plugd-{min}-{small}-10s\"\nplugd = {{ cpu_min = {min}, cpu_max = {small}, update = 10 }}\n",
        hotplug_clients(all)
    )
}

/// seed 004's setup: the same 2 GiB footprint per cell (4× the memory limit) split over
/// the processes, so that reads come from the disk and cells take similar time.
fn disk_configs() -> String {
    let mut t = String::from(
        "name = \"disk-configs\"\nreps = 3\nruntime = \"10s\"\nwarmup = \"0s\"\nmem_limit = \"512M\"\n",
    );
    for (procs, size) in [(1, "2g"), (8, "256m"), (32, "64m")] {
        t.push_str(&format!(
            "\n[[workload]]\nengine = \"diskio\"\nphase = [\"write\", \"read\", \"randread\", \"randwrite\"]\n\
             bs = [\"8k\", \"64k\"]\nprocs = {procs}\nsize = \"{size}\"\ndirect = [true, false]\n"
        ));
    }
    t
}

fn cpu_axis(all: u32) -> String {
    let mut v: Vec<u32> = vec![1, all.max(1)];
    v.dedup();
    format!("{v:?}")
}

fn cpu_range(all: u32) -> String {
    format!("{:?}", (1..=all.max(1)).collect::<Vec<u32>>())
}

/// The suite text of preset `name` for a machine with `all_cpus` CPUs.
pub fn preset_text(name: &str, all_cpus: u32) -> Option<String> {
    Some(match name {
        "quick" => format!(
            "name = \"quick\"\nruntime = \"10s\"\nwarmup = \"2s\"\nreps = 2\ncpus = {}\n\n\
             [[workload]]\nengine = \"fileserver\"\nclients = [1, 4]\n",
            cpu_axis(all_cpus)
        ),
        "standard" => format!(
            "name = \"standard\"\nruntime = \"30s\"\nwarmup = \"6s\"\nreps = 3\ncpus = {}\n\n\
             [[workload]]\nengine = \"fileserver\"\nclients = [1, 4, 8, 16]\n",
            cpu_range(all_cpus)
        ),
        "disk-configs" => disk_configs(),
        "hotplug" => hotplug(all_cpus),
        "lmbench" => micro(&micro_levels()),
        "net" => NET.to_string(),
        "reaim" => reaim(all_cpus),
        "compute" => compute("compute", "quick", 5),
        "compute-standard" => compute("compute-standard", "standard", 3),
        "disk-regression" => "name = \"disk-regression\"\nreps = 3\nruntime = \"10s\"\nwarmup = \"0s\"\n\n\
             [[workload]]\nengine = \"diskio\"\n\
             phase = [\"write\", \"rewrite\", \"read\", \"reread\", \"randread\", \"randwrite\"]\n\
             bs = \"64k\"\nsize = \"512m\"\n"
            .to_string(),
        _ => return None,
    })
}

/// The parsed preset.
pub fn preset(name: &str, all_cpus: u32) -> Option<Result<Suite, SuiteError>> {
    preset_text(name, all_cpus).map(|t| Suite::parse(&format!("<preset {name}>"), &t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hotplug_scales_the_seed_to_the_machine() {
        assert_eq!(hotplug_clients(16), [1, 2, 4, 8, 12, 16, 20, 26, 32, 40]);
        assert_eq!(hotplug_clients(2), [1, 2, 3, 4, 5, 7, 8, 10]);
        let s = preset("hotplug", 16).unwrap().unwrap();
        let names: Vec<&str> = s.variants.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["no-hotplug", "plugd-2-all-1s", "plugd-2-5-10s"], "seed 003's 2,20,1 and 2,5,10");
        let p = s.variants[2].plugd.as_ref().unwrap();
        assert_eq!((p.cpu_min, p.cpu_max, p.update), (Some(2), Some(5), Some(10)));
        assert!(p.config_text().unwrap().contains("HOTPLUG=\"(loadavg > onumcpus + 0.75) & (idle < 10.0)\""));
    }

    #[test]
    fn reaim_ramps_both_mixes_on_one_and_all_cpus() {
        let s = preset("reaim", 2).unwrap().unwrap();
        assert_eq!(s.cpus, [1, 2]);
        let p = crate::plan::Plan::expand(&s, 2, 2).unwrap();
        let mixes: Vec<String> = p.cells.iter().map(|c| c.spec.params["workfile"].to_string()).collect();
        assert_eq!(mixes.len(), 4, "{mixes:?}");
        for c in &p.cells {
            let ramp = racehorse_engines::find("mix").unwrap().ramp_next(&c.spec, &[]);
            assert_eq!(
                ramp.map(|p| p["users"].clone()),
                Some(racehorse_core::Value::Int(1)),
                "a ramp from 1 user"
            );
        }
    }

    #[test]
    fn every_preset_parses_on_small_and_large_machines() {
        for (name, _) in PRESETS {
            for cpus in [1, 2, 64] {
                let s = preset(name, cpus).unwrap().unwrap();
                assert!(s.cpus.iter().all(|&c| c >= 1 && c <= cpus), "{name} on {cpus} CPUs");
            }
        }
        assert!(preset("nope", 2).is_none());
    }

    #[test]
    fn net_is_the_seeds_matrix() {
        let s = preset("net", 2).unwrap().unwrap();
        let text = preset_text("net", 2).unwrap();
        assert_eq!(s.workloads.len(), 4, "three rr profiles and the streams");
        for profile in
            ["request = 1\nresponse = 1\n", "request = 200\nresponse = 1000\n", "response = \"30k\""]
        {
            assert!(text.contains(profile), "{profile}");
        }
        assert_eq!(text.matches("connections = [1, 10, 50, 250]").count(), 4);
    }
}
