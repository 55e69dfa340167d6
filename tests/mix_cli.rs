//! The mix engine through the binary: a ramp stored as one cell per load, shown with its
//! jobs/min, peak and loads reached, compared between runs; a fixed load is one cell; a
//! malformed workfile is a usage error naming the line.

use crate::common::{machine_lock, text, Sandbox};

fn mix(sb: &Sandbox, label: &str, workfile: &str, extra: &[&str]) -> std::process::Output {
    let work = sb.work();
    let mut args = vec![
        "run",
        "mix",
        "--label",
        label,
        "-o",
        workfile,
        "-o",
        "jobs=6",
        "-o",
        "poolsize=16k",
        "--quiet",
        "--no-drop-caches",
        "--dir",
        work.to_str().expect("utf-8 path"),
    ];
    args.extend_from_slice(extra);
    sb.run(&args)
}

fn tiny_workfile(sb: &Sandbox) -> String {
    let p = sb.dir.path().join("tiny.wf");
    std::fs::write(&p, "# small and quick\n2 add_int\n1 disk_wrt\n1 udp_test\n1 signal_test\n")
        .expect("write");
    format!("workfile={}", p.display())
}

#[test]
fn a_ramp_is_stored_per_load_shown_with_its_peak_and_compared() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let wf = tiny_workfile(&sb);
    for label in ["a", "b"] {
        let o = mix(&sb, label, &wf, &["-o", "stop=max", "-o", "max_users=3", "-o", "adaptive=false"]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let cells = &sb.cells("a");
    let users: Vec<i64> = cells.iter().map(|c| c["params"]["users"].as_i64().expect("users")).collect();
    assert_eq!(users, [1, 2, 3], "one cell per load of the ramp");
    for c in cells {
        assert_eq!(c["unit"], "jobs");
        let u = c["params"]["users"].as_f64().expect("users");
        // 6 jobs over hits 2:1:1:1 → 2.4 → 2, 1.2 → 1 (×3): 5 jobs per user.
        assert_eq!(c["extra"]["jobs_per_user"].as_f64(), Some(5.0), "{c}");
        let jpm = c["extra"]["jpm"].as_f64().expect("jpm");
        let real_s = c["extra"]["real_s"].as_f64().expect("real_s");
        assert!((jpm - 5.0 * u * 60.0 / real_s).abs() < 1e-6 * jpm, "{c}");
    }
    let show = text(&sb.run(&["show", "a"]));
    assert!(show.contains("throughput in jobs/min, CPU per unit in ms/job"), "{show}");
    assert!(show.contains("ramp [default]") && show.contains("3 loads up to 3 users"), "{show}");
    assert!(show.contains("jpm_per_user"), "{show}");
    let cmp = sb.run(&["compare", "a", "b"]);
    assert!(cmp.status.success(), "{}", text(&cmp));
    assert!(text(&cmp).contains("mix"), "{}", text(&cmp));
}

#[test]
fn a_fixed_load_is_one_cell() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let wf = tiny_workfile(&sb);
    let o = mix(&sb, "fixed", &wf, &["-o", "users=2"]);
    assert!(o.status.success(), "{}", text(&o));
    let cells = &sb.cells("fixed");
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0]["params"]["users"].as_i64(), Some(2));
    assert_eq!(cells[0]["extra"]["jobs_per_user"].as_f64(), Some(5.0));
}

#[test]
fn a_malformed_workfile_names_the_line_and_the_valid_tasks() {
    let sb = Sandbox::new();
    let p = sb.dir.path().join("bad.wf");
    std::fs::write(&p, "10 add_int\n5 make_coffee\n").expect("write");
    let o = mix(&sb, "bad", &format!("workfile={}", p.display()), &["-o", "users=1"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("line 2: unknown task 'make_coffee'") && t.contains("valid tasks: add_int"), "{t}");
    let o = mix(&sb, "missing", "workfile=/no/such/workfile", &["-o", "users=1"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("fserver, new_db, compute"), "{}", text(&o));
}
