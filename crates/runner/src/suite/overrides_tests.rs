//! Tests of the command line's overrides: each flag's rule and message, and the order in
//! which they apply.

use super::*;

fn suite(text: &str) -> Suite {
    Suite::parse("s.toml", text).unwrap()
}

fn opts(pairs: &[(&str, &[&str])]) -> Overrides {
    let options =
        pairs.iter().map(|(n, v)| (n.to_string(), v.iter().map(|s| s.to_string()).collect())).collect();
    Overrides { options, ..Overrides::default() }
}

fn refusal(s: &str, o: &Overrides) -> String {
    suite(s).apply(o).unwrap_err().to_string()
}

const TWO: &str = "[[workload]]\nengine = \"null\"\nruntime = \"3s\"\nreps = 2\ncpus = 1\n[[workload]]\nengine = \"micro\"\n";

#[test]
fn options_go_to_the_workloads_that_take_them() {
    let mut s = suite(TWO);
    s.apply(&opts(&[("clients", &["1", "4"]), ("where", &["host"])])).unwrap();
    assert_eq!(s.workloads[0].axes["clients"], [Value::Int(1), Value::Int(4)]);
    assert!(!s.workloads[1].axes.contains_key("clients"));
    assert!(s.workloads.iter().all(|w| w.axes["where"] == [Value::Str("host".into())]));
    assert!(refusal(TWO, &opts(&[("where", &["moon"])])).contains("expected host or guest"));
    assert!(refusal(TWO, &opts(&[("clients", &["many"])])).contains("clients"));
    let e = refusal(TWO, &opts(&[("clinets", &["4"])]));
    assert_eq!(e, "no workload in this run has an option 'clinets' (workloads: null, micro); see `racehorse workloads show NAME`");
    let e = refusal("[[workload]]\nengine = \"micro\"\n", &opts(&[("qos", &["p95<=5ms"])]));
    assert!(
        e.starts_with("no workload in this run can run paced (options rate and qos; workloads: micro)"),
        "{e}"
    );
}

#[test]
fn options_that_make_a_presets_workloads_identical_run_them_once() {
    let text = "[[workload]]\nengine = \"null\"\nclients = 1\n[[workload]]\nengine = \"null\"\nclients = 2\n";
    let o = opts(&[("clients", &["3"])]);
    let mut file = suite(text);
    file.apply(&o).unwrap();
    assert_eq!(file.workloads.len(), 2, "a suite file keeps what it says");
    let mut preset = Suite { preset: Some("p".into()), ..suite(text) };
    preset.apply(&o).unwrap();
    assert_eq!(preset.workloads.len(), 1);
}

#[test]
fn runtime_warmup_reps_and_cpus_replace_each_workloads_own() {
    let mut s = suite(TWO);
    let o = Overrides {
        runtime: Some("5s".into()),
        warmup: Some("1s".into()),
        reps: Some("4".into()),
        cpus: vec![2],
        ..Overrides::default()
    };
    s.apply(&o).unwrap();
    assert_eq!(
        (s.runtime, s.warmup, s.reps, s.cpus.clone()),
        (Duration::from_secs(5), Duration::from_secs(1), 4, vec![2])
    );
    let w = &s.workloads[0];
    assert_eq!((w.runtime, w.reps, w.cpus.clone()), (None, None, None));
    let bad = |o: Overrides| refusal(TWO, &o);
    let e = bad(Overrides { warmup: Some("soon".into()), ..Overrides::default() });
    assert_eq!(e, "--warmup 'soon': expected e.g. 20s, 500ms, 2m (at most 7 days)");
    assert_eq!(
        bad(Overrides { runtime: Some("0s".into()), ..Overrides::default() }),
        "runtime must be longer than 0 s"
    );
    assert_eq!(
        bad(Overrides { cpus: vec![1, 0], ..Overrides::default() }),
        "--cpus: a CPU count must be at least 1"
    );
    let e = bad(Overrides { mem_limit: Some("1M".into()), ..Overrides::default() });
    assert!(e.starts_with("--mem-limit: '1M' is below the smallest limit"), "{e}");
}

#[test]
fn reps_are_a_count_or_auto_with_its_settings() {
    let mut s = suite(TWO);
    let o = Overrides {
        reps: Some("auto".into()),
        max_reps: Some(6),
        target_ci_pct: Some(1.5),
        ..Overrides::default()
    };
    s.apply(&o).unwrap();
    let a = s.adaptive.unwrap();
    assert_eq!((s.reps, a.max_reps), (MIN_REPS, 6));
    assert!((a.target_half_width - 0.015).abs() < 1e-12);
    let bad = |o: Overrides| refusal(TWO, &o);
    for text in ["0", "1001", "often"] {
        assert_eq!(
            bad(Overrides { reps: Some(text.into()), ..Overrides::default() }),
            format!("--reps {text}: use 1..1000 or auto")
        );
    }
    let e = bad(Overrides { max_reps: Some(5), ..Overrides::default() });
    assert_eq!(e, "--max-reps and --target-ci-pct need --reps auto");
    let auto = || Overrides { reps: Some("auto".into()), ..Overrides::default() };
    assert_eq!(bad(Overrides { max_reps: Some(2), ..auto() }), "--max-reps 2: use 3..1000");
    assert_eq!(
        bad(Overrides { target_ci_pct: Some(100.0), ..auto() }),
        "--target-ci-pct 100: use a percentage in (0, 100)"
    );
    let mut counted = suite("reps = \"auto\"\n[[workload]]\nengine = \"null\"\n");
    counted.apply(&Overrides { reps: Some("2".into()), ..Overrides::default() }).unwrap();
    assert_eq!((counted.reps, counted.adaptive), (2, None), "a count ends adaptive repetitions");
}

#[test]
fn variants_order_and_seed() {
    let text = "[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\n[[workload]]\nengine = \"null\"\nvariants = [\"a\", \"b\"]\n";
    let mut s = suite(text);
    let o = Overrides {
        variants: vec!["b".into()],
        order: Some("random".into()),
        seed: Some(7),
        ..Overrides::default()
    };
    s.apply(&o).unwrap();
    let names: Vec<&str> = s.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        (names, s.workloads[0].variants.clone(), s.order, s.seed),
        (vec!["b"], Some(vec!["b".to_string()]), Order::Random, Some(7))
    );
    let bad = |o: Overrides| refusal(text, &o);
    assert_eq!(
        bad(Overrides { variants: vec!["c".into()], ..Overrides::default() }),
        "--variant c: the suite has no such variant (variants: a, b)"
    );
    assert_eq!(
        refusal(TWO, &Overrides { variants: vec!["c".into()], ..Overrides::default() }),
        "--variant c: the suite has no such variant (variants: none)"
    );
    assert!(
        bad(Overrides { order: Some("sideways".into()), ..Overrides::default() }).starts_with("--order: ")
    );
    assert_eq!(
        bad(Overrides { seed: Some(1), ..Overrides::default() }),
        "--seed needs --order random (or order = \"random\" in the suite)"
    );
}
