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
];

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
    fn every_preset_parses_on_small_and_large_machines() {
        for (name, _) in PRESETS {
            for cpus in [1, 2, 64] {
                let s = preset(name, cpus).unwrap().unwrap();
                assert!(s.cpus.iter().all(|&c| c >= 1 && c <= cpus), "{name} on {cpus} CPUs");
            }
        }
        assert!(preset("nope", 2).is_none());
    }
}
