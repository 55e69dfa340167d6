//! Issue 26's command-line conventions through the binary: `--json` on the listing commands
//! (alone on stdout), completions and man pages, global -q/-v, plugd's cpuplugd-style -V,
//! run's examples and the exit codes in the help.

use crate::common::{machine_lock, text, Sandbox};

fn json(o: &std::process::Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", text(o));
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {}", text(o)))
}

#[test]
fn list_json_without_a_store_and_after_a_run() {
    let sb = Sandbox::new();
    let empty = json(&sb.run(&["list", "--json"]));
    assert_eq!((empty["format"].as_str(), empty["version"].as_u64()), (Some("racehorse-runs"), Some(1)));
    assert_eq!(empty["runs"], serde_json::json!([]));
    assert!(!sb.db().exists(), "list --json creates no store");

    let _m = machine_lock();
    let work = sb.work();
    let args = ["run", "null", "--label", "j", "--clients", "1,2", "--runtime", "200ms", "--warmup", "0s"];
    let o = sb.run(
        &[&args[..], &["--no-warm-up", "--no-drop-caches", "-v", "--dir", work.to_str().unwrap()]].concat(),
    );
    assert!(o.status.success(), "{}", text(&o));
    // -v: a line per finished cell with its throughput, even without a terminal.
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        err.lines().filter(|l| l.starts_with("cell null clients=") && l.contains(" ops/s")).count(),
        2,
        "{err}"
    );

    let doc = json(&sb.run(&["list", "--json"]));
    let runs = doc["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1, "{doc}");
    let r = &runs[0];
    assert_eq!((r["label"].as_str(), r["status"].as_str()), (Some("j"), Some("complete")));
    assert_eq!((r["cells_ok"].as_u64(), r["cells_failed"].as_u64()), (Some(2), Some(0)));
    assert!(r["started_at_unix_s"].as_i64().unwrap() <= r["finished_at_unix_s"].as_i64().unwrap());
}

#[test]
fn workloads_and_env_json() {
    let sb = Sandbox::new();
    let all = json(&sb.run(&["workloads", "--json"]));
    assert_eq!(all["format"], "racehorse-workloads");
    let names: Vec<&str> =
        all["workloads"].as_array().unwrap().iter().filter_map(|w| w["name"].as_str()).collect();
    assert!(names.contains(&"fileserver") && names.contains(&"null"), "{names:?}");

    let one = json(&sb.run(&["workloads", "show", "fileserver", "--json"]));
    assert_eq!(one["format"], "racehorse-workload");
    let options = one["workload"]["options"].as_array().unwrap();
    assert!(options.iter().any(|o| o["name"] == "clients" && o["kind"] == "int"), "{one}");

    let unknown = sb.run(&["workloads", "show", "nosuch", "--json"]);
    assert_eq!(unknown.status.code(), Some(2), "{}", text(&unknown));
    assert!(unknown.stdout.is_empty(), "errors stay off stdout");

    let env = json(&sb.run(&["env", "--json"]));
    assert_eq!((env["format"].as_str(), env["version"].as_u64()), (Some("racehorse-env"), Some(1)));
    assert!(env["cpus_online"].as_u64().unwrap() >= 1, "the environment's own fields stay at the top");
}

#[test]
fn completions_for_every_shell_and_man_pages() {
    let sb = Sandbox::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = sb.run(&["completions", shell]);
        assert!(o.status.success() && o.stdout.len() > 1000, "{shell}: {}", text(&o));
        assert!(String::from_utf8_lossy(&o.stdout).contains("clients"), "{shell}: run's shortcut flags");
    }
    assert_eq!(sb.run(&["completions", "tcsh"]).status.code(), Some(2));
    if std::process::Command::new("bash").arg("--version").output().is_ok() {
        let script = sb.dir.path().join("racehorse.bash");
        std::fs::write(&script, sb.run(&["completions", "bash"]).stdout).unwrap();
        let o = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("source {} && complete -p racehorse", script.display()))
            .output()
            .unwrap();
        assert!(o.status.success() && text(&o).contains("racehorse"), "bash loads it: {}", text(&o));
    }

    let page = sb.run(&["man"]);
    let roff = String::from_utf8_lossy(&page.stdout);
    assert!(
        page.status.success() && roff.contains(".TH racehorse 1") && roff.contains("EXIT STATUS"),
        "{roff}"
    );
    let dir = sb.dir.path().join("man1");
    let o = sb.run(&["man", "--dir", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    for want in ["racehorse.1", "racehorse-run.1", "racehorse-list.1", "racehorse-plugd.1"] {
        assert!(dir.join(want).is_file(), "{want}: {}", text(&o));
    }
}

#[test]
fn global_flags_help_texts_and_plugd_dash_capital_v() {
    let sb = Sandbox::new();
    let both = sb.run(&["-q", "-v", "list"]);
    assert_eq!(both.status.code(), Some(2), "-q and -v together are a usage error: {}", text(&both));
    assert!(sb.run(&["list", "--quiet"]).status.success(), "globals go after the subcommand too");

    let help = text(&sb.run(&["--help"]));
    for code in ["Exit codes:", "  0 ", "  1 ", "  2 ", "  75 ", "128+N", "130 SIGINT"] {
        assert!(help.contains(code), "--help lacks '{code}': {help}");
    }
    let run_help = text(&sb.run(&["run", "--help"]));
    assert!(run_help.contains("Examples:\n  racehorse run quick"), "{run_help}");
    assert!(run_help.contains("-q, --quiet") && run_help.contains("-v, --verbose"), "{run_help}");

    // cpuplugd's -V still means verbose for plugd: parsed (the missing -c is what fails),
    // and hidden from the help, which shows -v.
    let v = sb.run(&["plugd", "-V", "-f"]);
    assert_eq!(v.status.code(), Some(2));
    assert!(text(&v).contains("needs -c FILE"), "{}", text(&v));
    let plugd_help = text(&sb.run(&["plugd", "--help"]));
    assert!(plugd_help.contains("-v, --verbose") && !plugd_help.contains("-V"), "{plugd_help}");
    let version = text(&sb.run(&["-V"]));
    assert!(version.starts_with("racehorse "), "top-level -V is the version: {version}");
}
