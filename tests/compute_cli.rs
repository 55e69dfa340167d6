//! The compute engine through the binary: a missing compiler is a usage error (exit 2), a
//! case whose self-check fails is a failed cell with a loud message while the others run
//! (each in a freshly executed racehorse, telco with its prepared input),
//! the C kernels compile with gcc in two flag variants and match the Rust checksums, and telco
//! runs in its three arithmetic forms (a C form without a compiler is a usage error).

use crate::common::{machine_lock, text, Sandbox};

/// True when `name` is an executable on PATH.
fn on_path(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
}

#[test]
fn a_missing_compiler_is_a_usage_error() {
    let sb = Sandbox::new();
    let o = sb.run(&["run", "compute", "-o", "case=sort", "--cc", "/nonexistent", "--quiet", "--reps", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("'/nonexistent' was not found") && t.contains("--cc"), "says what to do: {t}");
}

#[test]
fn a_failed_self_check_fails_its_cell_loudly() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let o = sb
        .cmd(&[
            "run",
            "compute",
            "-o",
            "case=tictactoe,nqueens,telco",
            "-o",
            "reps=1",
            "--reps",
            "1",
            "--quiet",
            "--no-drop-caches",
        ])
        .env("RACEHORSE_COMPUTE_INJECT_FAULT", "tictactoe")
        .output()
        .expect("spawn");
    let t = text(&o);
    assert!(!o.status.success(), "a wrong answer is not a result: {t}");
    assert!(t.contains("SELF-CHECK FAILED: tictactoe"), "{t}");
    let cells = sb.cells("compute");
    let status =
        |case: &str| cells.iter().find(|c| c["params"]["case"] == case).expect(case)["status"].clone();
    assert_eq!(status("tictactoe"), "failed");
    assert_eq!(status("nqueens"), "ok", "the other case still ran");
    // telco's prepared input travels to the kernel's fresh process.
    assert_eq!(status("telco"), "ok", "{t}");
}

#[test]
fn c_kernels_build_with_gcc_in_two_variants() {
    if !on_path("gcc") {
        eprintln!("SKIPPED: gcc is not installed, so the C kernels cannot be built (CI has gcc)");
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    let o = sb.run(&[
        "run",
        "compute",
        "-o",
        "case=sort,sieve",
        "-o",
        "reps=1",
        "--cc",
        "gcc",
        "--cflags=-O2",
        "--cflags=-O3 -march=native",
        "--reps",
        "1",
        "--label",
        "c",
        "--quiet",
        "--no-drop-caches",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let cells = &sb.cells("c");
    assert_eq!(cells.len(), 4, "two cases × two flag variants");
    for c in cells {
        assert_eq!(c["extra"]["c_kernel"], 1.0, "{c}");
        assert!(c["extra"]["time_s"].as_f64().is_some_and(|t| t > 0.0));
    }
    assert!(cells.iter().any(|c| c["params"]["cflags"] == "-O3 -march=native"));
}

#[test]
fn telco_runs_in_three_arithmetic_forms_labelled_with_a_compiler_only_in_c() {
    if !on_path("gcc") {
        eprintln!("SKIPPED: gcc is not installed, so telco's C forms cannot be built (CI has gcc)");
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    let o = sb.run(&[
        "run",
        "compute",
        "-o",
        "case=telco",
        "-o",
        "arith=rust-decimal,c-decimal64,c-double",
        "-o",
        "reps=1",
        "--cc",
        "gcc",
        "--reps",
        "1",
        "--label",
        "forms",
        "--quiet",
        "--no-drop-caches",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let cells = sb.cells("forms");
    assert_eq!(cells.len(), 3, "one cell per form");
    for c in &cells {
        let in_c = c["params"]["arith"] != "rust-decimal";
        assert_eq!(c["status"], "ok", "{c}");
        assert_eq!(c["extra"]["c_kernel"], if in_c { 1.0 } else { 0.0 }, "{c}");
        assert_eq!(c["params"].get("cc").is_some(), in_c, "cc only where C ran: {c}");
        assert_eq!(c["params"].get("cflags").is_some(), in_c, "{c}");
        let version = c["settings"]["cc version"].as_str().unwrap_or("");
        assert_eq!(version.starts_with("gcc"), in_c, "the compiler's version where C ran: {c}");
        assert!(c["extra"]["batch_s"].as_f64().is_some_and(|t| t > 0.0), "{c}");
        assert!(c["extra"]["cpu_ns_per_call"].as_f64().is_some_and(|t| t > 0.0), "{c}");
    }
}

#[test]
fn a_c_form_of_telco_without_a_compiler_is_a_usage_error() {
    let sb = Sandbox::new();
    let o =
        sb.run(&["run", "compute", "-o", "case=telco", "-o", "arith=c-decimal64", "--quiet", "--reps", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--cc gcc"), "says what to do: {}", text(&o));
}
