//! The environment that explains noise (issue 46): `env` shows SMT, turbo, idle, governors,
//! the kernel config, sysctls, IRQ balancing and DMI; an export carries them into another
//! store; and `compare` of two runs made with different transparent-hugepage settings lists
//! THP in its environment diff, the setting changed through a variant (and through the
//! machine Guard a variant uses) and put back on every path.

use crate::common::{is_root, machine_lock, text, Sandbox};
use racehorse_machine::{thp_file, Guard, SysRoot};
use std::path::{Path, PathBuf};

const THP: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

fn json(o: &std::process::Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", text(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(o)))
}

/// The selected word of THP's choice file.
fn thp_now() -> String {
    racehorse_machine::selected_value(&std::fs::read_to_string(THP).unwrap_or_default())
}

/// A tiny suite: the null engine for 200 ms, once, under one variant `name` (with `extra`).
fn suite(sb: &Sandbox, name: &str, extra: &str) -> PathBuf {
    let path = sb.dir.path().join(format!("{name}.toml"));
    let text = format!(
        "runtime = \"200ms\"\nwarmup = \"0s\"\nreps = 1\ndrop_caches = false\n\
         [[workload]]\nengine = \"null\"\n[[variant]]\nname = \"{name}\"\n{extra}\n"
    );
    std::fs::write(&path, text).expect("suite");
    path
}

fn run(sb: &Sandbox, suite: &Path, label: &str) {
    let out = sb.run(&["run", suite.to_str().expect("utf-8"), "--label", label, "--quiet"]);
    assert!(out.status.success(), "{}", text(&out));
}

/// The environment diff of `compare ARGS --format json` (its first new side).
fn env_diff(sb: &Sandbox, args: &[&str]) -> Vec<(String, String, String)> {
    let mut all = vec!["compare"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let doc = json(&sb.run(&all));
    let rows = doc["env_diff"][0].as_array().unwrap_or_else(|| panic!("env_diff: {doc}")).clone();
    rows.iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
            (s("key"), s("base"), s("new"))
        })
        .collect()
}

#[test]
fn env_shows_the_noise_settings_and_an_export_carries_them() {
    let sb = Sandbox::new();
    let shown = text(&sb.run(&["env"]));
    for key in [
        "cpu.smt.control",
        "cpu.turbo",
        "cpu.idle.driver",
        "cpu.idle.deepest",
        "cpu.freq.governor",
        "cpu.freq.epp",
        "kernel.config.hash",
        "kernel.config.preemption",
        "sysctl.vm.overcommit_memory",
        "sysctl.net.core.somaxconn",
        "irq.balance_daemon",
        "dmi.bios_version",
    ] {
        assert!(shown.lines().any(|l| l.starts_with(key)), "{key} in `env`: {shown}");
    }
    assert!(!shown.lines().any(|l| l.ends_with(" -")), "a missing value says not available: {shown}");
    run(&sb, &suite(&sb, "found", ""), "e");
    let stored = json(&sb.run(&["env", "e", "--json"]));
    let tuning = &stored["tuning"];
    assert!(tuning["sysctls"].is_object() && tuning["dmi"].is_object(), "{stored}");
    let file = sb.dir.path().join("e.json");
    let out = sb.run(&["export", "e", "--format", "json", "-o", file.to_str().expect("utf-8")]);
    assert!(out.status.success(), "{}", text(&out));
    let other = Sandbox::new();
    let out = other.run(&["import", file.to_str().expect("utf-8")]);
    assert!(out.status.success(), "{}", text(&out));
    let imported = json(&other.run(&["env", "e", "--json"]));
    assert_eq!(imported["tuning"], *tuning, "the import carries the noise settings");
}

#[test]
fn compare_lists_a_thp_change_in_the_environment_diff() {
    let _m = machine_lock();
    if !is_root() || !Path::new(THP).exists() {
        racehorse_testkit::skip!("needs root and {THP} (CI runs as root)");
        return;
    }
    let before = thp_now();
    let other = if before == "never" { "always" } else { "never" };
    let sb = Sandbox::new();
    run(&sb, &suite(&sb, "found", ""), "found");
    // Through a variant: racehorse sets THP for the variant's cells and puts it back.
    run(&sb, &suite(&sb, "thp", &format!("thp = \"{other}\"")), "by-variant");
    assert_eq!(thp_now(), before, "the variant's run put THP back");
    let d = env_diff(&sb, &["found@found", "by-variant@thp"]);
    assert!(
        d.contains(&("set thp enabled".into(), "(as found)".into(), other.into())),
        "the variant's THP is in the environment diff: {d:?}"
    );
    // Through the Guard a variant uses, held over a whole run: the captured key differs.
    let root = SysRoot::host();
    let mut guard = Guard::new(root.clone(), sb.state_dir().join("test-thp.json")).expect("guard");
    let file = thp_file(&root, "enabled").expect("thp file");
    guard.set_files(&[(file, other.to_string())]).expect("set THP");
    run(&sb, &suite(&sb, "found", ""), "changed");
    guard.restore().expect("THP put back");
    drop(guard);
    assert_eq!(thp_now(), before, "the test put THP back");
    let d = env_diff(&sb, &["found", "changed"]);
    assert!(
        d.contains(&("thp.enabled".into(), before.clone(), other.into())),
        "the captured THP is in the environment diff: {d:?}"
    );
    let html = sb.run(&["compare", "found", "changed", "--format", "html"]);
    assert!(String::from_utf8_lossy(&html.stdout).contains("thp.enabled"), "and in the HTML");
    let plain = text(&sb.run(&["compare", "found", "changed"]));
    assert!(plain.contains("thp.enabled"), "and in the text: {plain}");
}
