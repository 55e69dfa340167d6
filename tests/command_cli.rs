//! The command engine through the binary: a program after `--`, its figure by regex with an
//! axis substituted into its arguments, a suite with a JSON path, and the failures (exit
//! code and output kept with the cell, usage errors before anything runs).

use crate::common::{machine_lock, text, Sandbox};

fn export(sb: &Sandbox, label: &str) -> serde_json::Value {
    serde_json::from_slice(&sb.run(&["export", label, "--format", "json"]).stdout).expect("json")
}

#[test]
fn a_program_after_the_dashes_is_measured_on_an_axis() {
    // Runs as root share the machine's restore state with the machine tests.
    let _m = machine_lock();
    let sb = Sandbox::new();
    let o = sb.run(&[
        "run",
        "command",
        "--label",
        "c",
        "--quiet",
        "-o",
        "regex:=done: ([\\d,]+) ops/s",
        "-o",
        "clients=1,3",
        "--",
        "sh",
        "-c",
        "echo 'done: 1,000 ops/s'; echo \"done: {clients}000 ops/s\"",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let cells = export(&sb, "c")["cells"].as_array().expect("cells").clone();
    let figures: Vec<f64> = cells.iter().map(|c| c["extra"]["figure"].as_f64().expect("figure")).collect();
    assert_eq!(figures, vec![1000.0, 3000.0], "the last match, with {{clients}} substituted");
    for c in &cells {
        let tput = c["throughput_per_s"].as_f64().expect("throughput");
        assert!(
            (tput - c["extra"]["figure"].as_f64().unwrap()).abs() < 1e-6 * tput,
            "rate = throughput: {c}"
        );
        assert_eq!(c["workload_cpu"]["method"], "children");
    }
}

#[test]
fn a_suite_reads_json_and_failures_keep_the_exit_code_and_output() {
    // Runs as root share the machine's restore state with the machine tests.
    let _m = machine_lock();
    let sb = Sandbox::new();
    let suite = sb.dir.path().join("cmd.toml");
    std::fs::write(
        &suite,
        "name = \"cmd\"\nreps = 1\n\n[[workload]]\nengine = \"command\"\n\
         cmd = \"echo '{\\\"run\\\": {\\\"secs\\\": 0.25}}'; exit $(({clients} - 1))\"\n\
         json = \"$.run.secs\"\nunit = \"s\"\ndirection = \"lower\"\nclients = [1, 5]\n",
    )
    .expect("suite");
    let o = sb.run(&["run", suite.to_str().expect("utf-8"), "--quiet"]);
    assert_eq!(o.status.code(), Some(1), "one cell failed: {}", text(&o));
    let cells = export(&sb, "cmd")["cells"].as_array().expect("cells").clone();
    assert_eq!(cells[0]["status"], "ok", "{}", cells[0]);
    assert!((cells[0]["throughput_per_s"].as_f64().expect("tput") - 4.0).abs() < 1e-9, "1 / 0.25 s");
    assert_eq!(cells[1]["status"], "failed");
    let err = cells[1]["error"].as_str().expect("error");
    assert!(err.contains("code 4") && err.contains("secs"), "{err}");
}

#[test]
fn usage_errors_stop_before_anything_runs() {
    // Runs as root share the machine's restore state with the machine tests.
    let _m = machine_lock();
    let sb = Sandbox::new();
    for (args, says) in [
        (vec!["run", "command", "--", "true"], "give regex or json"),
        (vec!["run", "command", "-o", "regex=x"], "needs a program"),
        (vec!["run", "null", "--", "true"], "for `racehorse run command`"),
        (vec!["run", "command", "-o", "regex:=(", "--", "true"], "regex:"),
    ] {
        let o = sb.run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{args:?}: {}", text(&o));
    }
}

/// Issue 46: the figure is the group named `value`, else the first group that took part in
/// the match; a match whose groups all stayed empty fails its cell naming the empty group.
#[test]
fn the_figure_is_the_value_group_or_the_first_group_that_matched() {
    // Runs as root share the machine's restore state with the machine tests.
    let _m = machine_lock();
    let sb = Sandbox::new();
    for (label, regex, want) in
        [("first", "regex:=(a|b)*score: (\\d+)", 42.0), ("named", "regex:=(\\w+) (?P<value>\\d+)", 7.0)]
    {
        let o = sb.run(&[
            "run",
            "command",
            "--label",
            label,
            "--quiet",
            "-o",
            regex,
            "--",
            "echo",
            "score: 42 ops 7",
        ]);
        assert!(o.status.success(), "{label}: {}", text(&o));
        let cells = export(&sb, label)["cells"].as_array().expect("cells").clone();
        assert_eq!(cells[0]["extra"]["figure"].as_f64(), Some(want), "{label}: {}", cells[0]);
    }
    let o = sb.run(&[
        "run",
        "command",
        "--label",
        "empty",
        "--quiet",
        "-o",
        "regex:=n=(\\d+)?;",
        "--",
        "echo",
        "n=;",
    ]);
    assert_eq!(o.status.code(), Some(1), "the cell failed: {}", text(&o));
    let cells = export(&sb, "empty")["cells"].as_array().expect("cells").clone();
    let err = cells[0]["error"].as_str().expect("error");
    assert!(err.contains("its group 1 took part in no match"), "{err}");
}
