//! Paced load with QoS through the binary (issue 28): net rr on loopback holds 2000/s within
//! 3% and a compute duty cycle 20/s within 5%, smallread and oltp run paced, an
//! impossible pace or a latency limit far below the real latency is stored as an ok cell
//! with `qos_held` = 0 that `show` and `compare` flag, and bad `rate` and `qos` values (or
//! an engine that cannot pace) are usage errors (exit 2) that say the syntax.

use crate::common::{machine_lock, text, Sandbox};

/// The extra `name` of a cell (exported JSON).
fn extra(cell: &serde_json::Value, name: &str) -> f64 {
    cell["extra"][name].as_f64().unwrap_or_else(|| panic!("no extra {name}: {cell}"))
}

/// `racehorse run ARGS --label LABEL` with a short window; asserts success.
fn run_ok(sb: &Sandbox, label: &str, args: &[&str]) -> String {
    let mut all: Vec<&str> = vec!["run"];
    all.extend(args);
    all.extend(["--label", label, "--reps", "1", "--quiet", "--no-drop-caches", "--no-warm-up"]);
    let o = sb.run(&all);
    assert!(o.status.success(), "{}", text(&o));
    text(&o)
}

const NET_RR: [&str; 9] =
    ["net", "-o", "mode=rr", "-o", "request=1", "-o", "response=1", "-o", "connections=1"];

#[test]
fn net_rr_holds_2000_per_s_and_its_qos() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let mut args = NET_RR.to_vec();
    args.extend(["-o", "rate=2000", "-o", "qos=p50<=100ms", "--runtime", "2s", "--warmup", "500ms"]);
    run_ok(&sb, "paced", &args);
    let cells = sb.cells("paced");
    let c = &cells[0];
    assert_eq!(c["status"], "ok");
    let achieved = extra(c, "pace_achieved_per_s");
    assert!((achieved - 2000.0).abs() <= 60.0, "2000/s within 3%: {achieved}");
    assert_eq!(extra(c, "pace_target_per_s"), 2000.0);
    // Throughput is the same count: transactions finished inside the window.
    let tput = c["units"].as_f64().expect("units") / (c["window_ns"].as_f64().expect("window") / 1e9);
    assert!((tput - achieved).abs() < 1.0, "{tput} vs {achieved}");
    assert_eq!(extra(c, "qos_held"), 1.0, "p50 of loopback rr far below 100 ms: {c}");
    assert!(extra(c, "qos_measured_ms") < 100.0);
    let show = text(&sb.run(&["show", "paced"]));
    assert!(show.contains("QoS held in 1 of 1 reps") && show.contains("of 2000/s"), "{show}");
}

#[test]
fn compute_runs_a_duty_cycle_at_its_pace() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    // One repetition of nqueens takes about 2.5 ms in a release build and 3 ms in a test's
    // debug build: at 20/s the worker is busy well under a tenth of the time.
    let args = ["compute", "-o", "case=nqueens", "-o", "rate=20", "--runtime", "2s", "--warmup", "300ms"];
    run_ok(&sb, "duty", &args);
    let c = &sb.cells("duty")[0];
    let achieved = extra(c, "pace_achieved_per_s");
    // 40 calls are due in the 2 s window. The count's resolution is one call (2.5%), and a
    // worker that was kept off its CPU just before the window opened catches up inside it
    // (open loop): on the loaded development VM 5 runs gave 19.7 to 20.6/s. Within 5%.
    assert!((achieved - 20.0).abs() <= 20.0 * 0.05, "20/s within 5%: {achieved}");
    let duty = extra(c, "duty_cycle_pct");
    assert!(duty > 0.5 && duty < 40.0, "a duty cycle, not flat out: {duty}%");
    assert_eq!(c["latencies"][0]["op"], "nqueens", "{c}");
}

#[test]
fn smallread_and_oltp_run_paced() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let work = sb.work();
    std::fs::create_dir_all(&work).expect("work dir");
    let dir = format!("--dir={}", work.display());
    let common = ["--runtime", "1s", "--warmup", "300ms", dir.as_str()];
    let mut small = vec!["smallread", "-o", "direct=false", "-o", "clients=2", "-o", "rate=200"];
    small.extend(common);
    run_ok(&sb, "small", &small);
    let mut oltp =
        vec!["oltp", "--threads", "2", "-o", "table_size=1000", "-o", "rate=100", "-o", "qos=p90<=2s"];
    oltp.extend(common);
    run_ok(&sb, "oltp", &oltp);
    for (label, rate) in [("small", 200.0), ("oltp", 100.0)] {
        let c = &sb.cells(label)[0];
        let pct = extra(c, "pace_achieved_pct");
        assert!((90.0..=110.0).contains(&pct), "{label}: {pct}% of {rate}/s: {c}");
        assert_eq!(extra(c, "pace_target_per_s"), rate);
    }
    assert!(sb.cells("oltp")[0]["extra"]["qos_held"].is_number());
}

#[test]
fn an_impossible_pace_or_limit_fails_qos_in_an_ok_cell_flagged_by_show_and_compare() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    // 1 ns at the median cannot hold; 10 s can (with a floor loose enough for a loaded
    // machine). And a million transactions per second over one loopback connection is far
    // beyond this machine: the rate floor fails.
    let mut args = NET_RR.to_vec();
    let qos = "qos=p50<=1ns,p50<=10s;rate>=50%";
    args.extend(["-o", "rate=300", "-o", qos, "--runtime", "1s", "--warmup", "200ms"]);
    run_ok(&sb, "limits", &args);
    let mut args = NET_RR.to_vec();
    args.extend(["-o", "rate=1000000", "-o", "qos=p99<=10s", "--runtime", "1s", "--warmup", "200ms"]);
    run_ok(&sb, "flood", &args);
    let limits = sb.cells("limits");
    let held = |cells: &[serde_json::Value], qos: &str| {
        let c = cells.iter().find(|c| c["params"]["qos"] == qos).expect(qos);
        assert_eq!(c["status"], "ok", "a failed QoS is still a stored, ok cell");
        extra(c, "qos_held")
    };
    assert_eq!(held(&limits, "p50<=1ns"), 0.0);
    assert_eq!(held(&limits, "p50<=10s;rate>=50%"), 1.0);
    let flood = &sb.cells("flood")[0];
    assert_eq!(extra(flood, "qos_held"), 0.0, "{flood}");
    assert!(extra(flood, "pace_achieved_pct") < 95.0, "{flood}");
    let show = text(&sb.run(&["show", "limits"]));
    assert!(show.contains("QoS FAILED in 1 of 1 reps (#1)") && show.contains("QoS failed #1"), "{show}");
    assert!(show.contains("QoS held in 1 of 1 reps"), "{show}");
    let show = text(&sb.run(&["show", "flood"]));
    assert!(show.contains("QoS FAILED") && show.contains("floor 95%"), "{show}");
    // Compared with itself, the flagged point still compares, with its note.
    let cmp = text(&sb.run(&["compare", "flood", "flood"]));
    assert!(cmp.contains("base QoS failed #1; new QoS failed #1"), "{cmp}");
    assert!(cmp.contains("QoS latency") || cmp.contains("paced rate achieved"), "{cmp}");
}

#[test]
fn bad_rate_and_qos_values_are_usage_errors_that_say_the_syntax() {
    let sb = Sandbox::new();
    for (opt, says) in [
        ("qos=p95<5ms", "PERCENTILE<=DURATION"),
        ("qos=p95<=5", "PERCENTILE<=DURATION"),
        ("qos=fast", "p95<=5ms"),
        ("rate=0", "rate=500"),
        ("rate=many", "not a valid number"),
    ] {
        let mut args = vec!["run"];
        args.extend(NET_RR);
        args.extend(["-o", opt, "--quiet", "--reps", "1", "--runtime", "200ms"]);
        let o = sb.run(&args);
        assert_eq!(o.status.code(), Some(2), "{opt}: {}", text(&o));
        assert!(text(&o).contains(says), "{opt}: {}", text(&o));
    }
    let o = sb.run(&["run", "micro", "-o", "rate=100", "--quiet"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("can run paced") && text(&o).contains("net"), "{}", text(&o));
    let o =
        sb.run(&["run", "net", "-o", "mode=stream-write", "-o", "rate=100", "--quiet", "--runtime", "200ms"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("mode=rr"), "{}", text(&o));
}
