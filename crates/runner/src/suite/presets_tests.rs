//! Tests of the presets: every file parses and is listed, the files hold the reference
//! machine's values, and the adjustments fit them to other machines as the seeds scale.

use super::*;

/// The clients axis of the `hotplug` preset on `cpus` CPUs.
fn hotplug_clients(cpus: u32) -> Vec<i64> {
    let s = preset("hotplug", cpus).unwrap().unwrap();
    s.workloads[0].axes["clients"].iter().map(|v| v.as_i64().unwrap()).collect()
}

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
fn hotplug_scales_the_plugd_settings() {
    for (cpus, want) in [
        (1, ["plugd-1-all-1s", "plugd-1-1-10s"]),
        (2, ["plugd-1-all-1s", "plugd-1-1-10s"]),
        (8, ["plugd-1-all-1s", "plugd-1-3-10s"]),
        (64, ["plugd-8-all-1s", "plugd-8-20-10s"]),
    ] {
        let s = preset("hotplug", cpus).unwrap().unwrap();
        let names: Vec<&str> = s.variants[1..].iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, want, "{cpus} CPUs");
        let p = s.variants[1].plugd.as_ref().unwrap();
        assert_eq!((p.cpu_max, p.update), (Some(0), Some(1)), "all CPUs stay all CPUs");
    }
}

#[test]
fn reaim_ramps_both_mixes_on_one_and_all_cpus() {
    let s = preset("reaim", 2).unwrap().unwrap();
    assert_eq!(s.cpus, [1, 2]);
    assert_eq!(s.workloads[0].axes["max_users"], [Value::Int(128)], "64 users per CPU");
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
    assert_eq!(preset("standard", 3).unwrap().unwrap().cpus, [1, 2, 3]);
    assert_eq!(preset("quick", 1).unwrap().unwrap().cpus, [1]);
}

#[test]
fn net_is_the_seeds_matrix() {
    let s = preset("net", 2).unwrap().unwrap();
    let text = preset_text("net", 2).unwrap();
    assert_eq!(s.workloads.len(), 4, "three rr profiles and the streams");
    for profile in ["request = 1\nresponse = 1\n", "request = 200\nresponse = 1000\n", "response = \"30k\""] {
        assert!(text.contains(profile), "{profile}");
    }
    assert_eq!(text.matches("connections = [1, 10, 50, 250]").count(), 4);
}

#[test]
fn every_preset_file_parses_and_is_listed() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("presets");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = PRESETS.iter().map(|(name, _)| format!("{name}.toml")).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "PRESETS and the files in {}", dir.display());
    let files: Vec<&str> = FILES.iter().map(|(name, _)| *name).collect();
    let names: Vec<&str> = PRESETS.iter().map(|(name, _)| *name).collect();
    assert_eq!(files, names, "FILES follows PRESETS");
    for (name, text) in FILES {
        assert_eq!(std::fs::read_to_string(dir.join(format!("{name}.toml"))).unwrap(), *text);
        let s = Suite::parse(name, text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(s.name, *name, "the suite is named after its file");
        assert!(text.starts_with(&format!("# Preset `{name}`")), "{name}: a header says what it is");
    }
}

#[test]
fn on_the_reference_machine_the_files_are_the_presets() {
    for (name, text) in FILES.iter().filter(|(name, _)| *name != "lmbench") {
        let as_written = Suite::parse(&format!("<preset {name}>"), text).unwrap();
        let (fitted, _) = load_as(name, text, REFERENCE_CPUS, true).unwrap();
        assert_eq!(fitted, as_written, "{name}");
    }
}

#[test]
fn preset_text_shows_what_is_fitted() {
    let t = preset_text("quick-fileserver", 2).unwrap();
    assert!(t.starts_with(preset_file("quick-fileserver").unwrap()));
    assert!(t.ends_with("# Fitted to this machine (2 CPUs) when loaded:\n#   cpus = [1, 2]\n"), "{t}");
    let t = preset_text("reaim", 4).unwrap();
    assert!(t.contains("#   [[workload]] 1 (mix): max_users = 256\n"), "{t}");
    let t = preset_text("hotplug", 2).unwrap();
    assert!(t.contains("#   [[workload]] 1 (fileserver): clients = [1, 2, 3, 4, 5, 7, 8, 10]\n"), "{t}");
    assert!(t.contains(
        "#   [[variant]] 3: name = \"plugd-1-1-10s\", plugd = { cpu_min = 1, cpu_max = 1, update = 10 }"
    ));
    assert_eq!(preset_text("net", 2).unwrap(), preset_file("net").unwrap(), "nothing to fit");
}

#[test]
fn lmbench_lists_every_micro_benchmark() {
    let s = preset("lmbench", 2).unwrap().unwrap();
    let bench =
        |i: usize| -> Vec<String> { s.workloads[i].axes["bench"].iter().map(|v| v.to_string()).collect() };
    let all = racehorse_engines::micro::BENCHES.iter().map(|b| b.to_string());
    let latencies: Vec<String> = all
        .clone()
        .filter(|b| {
            !b.starts_with("bw_") && !b.contains("_rd") && !b.starts_with("chase") && !b.starts_with("select")
        })
        .filter(|b| b != "caches")
        .collect();
    let bandwidths: Vec<String> = all.filter(|b| b.starts_with("bw_") || b.contains("_rd")).collect();
    assert_eq!(bench(0), latencies, "the kernel latencies, in the engine's order");
    assert_eq!(bench(1), ["select_file", "select_tcp"]);
    assert_eq!(bench(2), bandwidths, "the bandwidths, in the engine's order");
    assert_eq!([bench(3), bench(4), bench(5)], [["chase"], ["chase_rand"], ["caches"]]);
    let levels: Vec<Value> = micro_levels().into_iter().map(Value::Str).collect();
    for (i, w) in s.workloads.iter().enumerate() {
        let want = if (2..=4).contains(&i) { levels.clone() } else { vec![Value::Str("l1".into())] };
        assert_eq!(w.axes["level"], want, "workload {i}: this machine's levels where the file sets them");
    }
}

#[test]
fn quick_is_a_tour_of_every_built_in_area_on_all_cpus() {
    let (s, notes) = load_as("quick", preset_file("quick").unwrap(), 2, true).unwrap();
    assert_eq!(s.cpus, [2]);
    assert_eq!(notes, ["cpus = [2]"]);
    let mut areas: Vec<&str> =
        s.workloads.iter().map(|w| racehorse_engines::find(&w.engine).unwrap().info().area).collect();
    let engines: Vec<&str> = s.workloads.iter().map(|w| w.engine.as_str()).collect();
    assert_eq!(engines, ["fileserver", "micro", "diskio", "net", "compute", "mix", "oltp", "paging"]);
    areas.dedup();
    assert_eq!(areas.len(), engines.len(), "one workload per area: {areas:?}");
    for w in &s.workloads {
        let e = racehorse_engines::find(&w.engine).unwrap();
        assert!(e.info().caps.external_tool.is_none(), "{} is built in", w.engine);
        assert!(!w.axes.contains_key("pg"), "OLTP runs on embedded SQLite");
    }
    assert_eq!(s.reps, 1);
}

#[test]
fn without_root_the_tour_leaves_out_what_changes_the_machine_and_says_so() {
    let text = preset_file("quick").unwrap();
    let (s, notes) = load_as("quick", text, 2, false).unwrap();
    assert!(s.workloads.iter().all(|w| w.engine != "paging"));
    assert_eq!(s.workloads.len(), 7);
    assert!(notes.contains(&"[[workload]] 8 (paging) left out: needs root".to_string()), "{notes:?}");
    if !is_root() {
        assert_eq!(left_out("quick", 2), ["[[workload]] 8 (paging) left out: needs root"]);
    } else {
        assert!(left_out("quick", 2).is_empty());
    }
    let (as_root, _) = load_as("quick", text, 2, true).unwrap();
    assert_eq!(as_root.workloads[..7], s.workloads[..], "the others are unchanged");
}

#[test]
fn quick_fileserver_is_the_former_quick() {
    let s = preset("quick-fileserver", 2).unwrap().unwrap();
    assert_eq!(s.cpus, [1, 2]);
    assert_eq!(s.workloads.len(), 1);
    assert_eq!(s.workloads[0].engine, "fileserver");
}

#[test]
fn the_disk_presets_follow_their_seeds_methods() {
    let reg = preset("disk-regression", 2).unwrap().unwrap();
    let limit = reg.mem_limit_bytes.expect("seed 001's ballast rule needs a memory limit");
    let size = reg.workloads[0].axes["size"][0].as_u64().unwrap();
    assert_eq!(size, 4 * limit, "the file is four times the memory");
    let phases = |s: &Suite, i: usize| -> Vec<String> {
        s.workloads[i].axes["phase"].iter().map(|v| v.to_string()).collect()
    };
    assert_eq!(phases(&reg, 0), ["write", "rewrite", "read", "reread"], "seed 001's IOzone tables");
    let cfg = preset("disk-configs", 2).unwrap().unwrap();
    for i in 0..cfg.workloads.len() {
        assert_eq!(phases(&cfg, i), ["write", "rewrite", "read", "randwrite", "randread"], "seed 004's runs");
    }
}

#[test]
fn java_heap_gc_crosses_two_heaps_and_two_collectors_at_one_warehouse_per_cpu() {
    let s16 = preset("java-heap-gc", 16).unwrap().unwrap();
    assert_eq!(
        s16.workloads[0].axes["heap"],
        [Value::Int(800 << 20), Value::Int(3200 << 20)],
        "the file's values"
    );
    let s = preset("java-heap-gc", 2).unwrap().unwrap();
    assert_eq!(s.workloads[0].axes["warehouses"], [Value::Int(2)], "one warehouse per CPU");
    let p = crate::plan::Plan::expand(&s, 2, 2).unwrap();
    let mut points: Vec<String> = p
        .cells
        .iter()
        .filter(|c| c.spec.rep == 1)
        .map(|c| format!("{} {}", c.spec.params["heap"], c.spec.params["gc"]))
        .collect();
    points.sort();
    let (small, large) = ((128 << 20).to_string(), (512 << 20).to_string());
    let want = [
        format!("{small} g1"),
        format!("{small} parallel"),
        format!("{large} g1"),
        format!("{large} parallel"),
    ];
    assert_eq!(points, want);
    assert!(preset_text("java-heap-gc", 2).unwrap().contains("(java): warehouses = 2"));
}
