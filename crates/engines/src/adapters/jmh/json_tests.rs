//! Tests of the JMH JSON parser: results captured from real JMH 1.37 runs of
//! tests/fixtures/jmh-bench (crates/engines/fixtures/jmh/, how each was made is in its README),
//! units normalised, and malformed input that is a clear error, never a panic.

use super::*;
use proptest::prelude::*;

fn fixture(name: &str) -> String {
    let path = format!("{}/fixtures/jmh/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn a_throughput_run_of_two_forks_is_read() {
    let r = parse(&fixture("thrpt-2forks.json")).expect("parses");
    assert_eq!(r.len(), 1);
    let b = &r[0];
    assert_eq!(b.benchmark, "racehorse.bench.Mix.xorshift");
    assert_eq!((b.mode, b.threads, b.forks), (Mode::Throughput, 1, 2));
    assert_eq!((b.warmup_iterations, b.measurement_iterations, b.measurement_batch_size), (1, 3, 1));
    assert_eq!(b.jmh_version, "1.37");
    assert!(b.jvm.ends_with("/bin/java"), "{}", b.jvm);
    assert!(b.params.is_empty());
    let p = &b.primary;
    assert_eq!(p.unit, "ops/s");
    assert_eq!(p.raw.len(), 2, "two forks");
    assert!(p.raw.iter().all(|f| f.len() == 3), "three iterations each");
    // JMH's score is the mean over every fork's iterations; its error is finite.
    let all: Vec<f64> = p.raw.iter().flatten().copied().collect();
    let mean = all.iter().sum::<f64>() / all.len() as f64;
    assert!((p.score - mean).abs() <= 1e-9 * mean, "{} vs {mean}", p.score);
    assert!(p.error.is_some_and(|e| e > 0.0));
    let (lo, hi) = p.confidence.expect("CI");
    assert!((p.score - lo - p.error.unwrap_or(0.0)).abs() <= 1e-6 * p.score && hi > p.score);
    let last = p.fork_mean(1).expect("fork 2");
    assert!((last - p.raw[1].iter().sum::<f64>() / 3.0).abs() < 1e-6);
    assert!(matches!(normalise(p.score, &p.unit), Some(Normalised::OpsPerSecond(v)) if v == p.score));
}

#[test]
fn parameter_combinations_are_separate_results() {
    let r = parse(&fixture("avgt-params.json")).expect("parses");
    assert_eq!(r.len(), 2);
    let sizes: Vec<&str> = r.iter().map(|b| b.params["size"].as_str()).collect();
    assert_eq!(sizes, ["64", "4096"]);
    assert_eq!(r[1].params_text(), "size=4096");
    for b in &r {
        assert_eq!((b.benchmark.as_str(), b.mode), ("racehorse.bench.Sum.sum", Mode::AverageTime));
        assert_eq!(b.primary.unit, "ns/op");
        let score = b.primary.score;
        assert!(
            matches!(normalise(score, "ns/op"), Some(Normalised::NanosPerOp(v)) if (v - score).abs() < 1e-9 * score)
        );
    }
    assert!(r[1].primary.score > 10.0 * r[0].primary.score, "4096 ints take longer than 64");
}

#[test]
fn sample_mode_has_a_histogram_percentiles_and_secondary_metrics() {
    let r = parse(&fixture("sample-gc.json")).expect("parses");
    let b = &r[0];
    assert_eq!(b.mode, Mode::SampleTime);
    let p = &b.primary;
    assert!(p.raw.is_empty() && !p.histogram.is_empty(), "sample mode keeps a histogram");
    let mean = p.fork_mean(0).expect("weighted mean");
    assert!(mean > 0.0 && mean.is_finite());
    assert!(p.percentiles.contains_key("50.0") && p.percentiles.contains_key("99.0"));
    assert!(b.secondary.keys().any(|k| k.contains("gc.alloc.rate")), "{:?}", b.secondary.keys());
}

#[test]
fn single_shot_with_one_iteration_has_no_error() {
    let r = parse(&fixture("ss-1iter.json")).expect("parses");
    let b = &r[0];
    assert_eq!((b.mode, b.measurement_iterations), (Mode::SingleShot, 1));
    assert_eq!(b.primary.error, None, "JMH writes NaN for one iteration");
    assert!(b.primary.score > 0.0);
}

#[test]
fn units_normalise_by_their_time_unit() {
    let close = |a: Option<Normalised>, b: Normalised| match (a, b) {
        (Some(Normalised::OpsPerSecond(x)), Normalised::OpsPerSecond(y))
        | (Some(Normalised::NanosPerOp(x)), Normalised::NanosPerOp(y)) => {
            (x - y).abs() < 1e-9 * y.abs().max(1.0)
        }
        _ => false,
    };
    assert!(close(normalise(2.5, "ops/ms"), Normalised::OpsPerSecond(2500.0)));
    assert!(close(normalise(3.0, "ops/us"), Normalised::OpsPerSecond(3e6)));
    assert!(close(normalise(120.0, "ops/min"), Normalised::OpsPerSecond(2.0)));
    assert!(close(normalise(1.5, "us/op"), Normalised::NanosPerOp(1500.0)));
    assert!(close(normalise(2.0, "s/op"), Normalised::NanosPerOp(2e9)));
    assert_eq!(normalise(1.0, "MB/sec"), None);
    assert_eq!(normalise(1.0, "ops/fortnight"), None);
}

#[test]
fn malformed_results_are_clear_errors() {
    let cases = [
        ("", "does not parse"),
        ("{}", "not an array"),
        ("[1]", "result #1 is not an object"),
        (r#"[{"mode":"thrpt"}]"#, "has no \"benchmark\""),
        (r#"[{"benchmark":"a.B.c","mode":"fast","primaryMetric":{}}]"#, "mode 'fast'"),
        (r#"[{"benchmark":"a.B.c","mode":"thrpt"}]"#, "has no \"primaryMetric\""),
        (
            r#"[{"benchmark":"a.B.c","mode":"thrpt","primaryMetric":{"scoreUnit":"ops/s"}}]"#,
            "has no \"score\"",
        ),
        (
            r#"[{"benchmark":"a.B.c","mode":"thrpt","primaryMetric":{"score":"NaN","scoreUnit":"ops/s"}}]"#,
            "not a number",
        ),
        (
            r#"[{"benchmark":"a.B.c","mode":"thrpt","primaryMetric":{"score":1,"scoreUnit":""}}]"#,
            "not a unit",
        ),
        (
            r#"[{"benchmark":"a.B.c","mode":"avgt","primaryMetric":{"score":1,"scoreUnit":"ns/op","rawData":[["x"]]}}]"#,
            "rawData holds",
        ),
        (
            r#"[{"benchmark":"a.B.c","mode":"sample","primaryMetric":{"score":1,"scoreUnit":"ns/op","rawDataHistogram":[[[[1]]]]}}]"#,
            "rawDataHistogram",
        ),
    ];
    for (text, says) in cases {
        let e = parse(text).expect_err(text);
        assert!(e.contains(says), "{text}: {e}");
    }
    assert_eq!(parse("[]").expect("empty"), Vec::new());
}

proptest! {
    #[test]
    fn garbage_never_panics(s in ".{0,400}") {
        let _ = parse(&s);
        let _ = parse(&format!("[{{\"benchmark\":\"a.B.c\",\"mode\":\"thrpt\",\"primaryMetric\":{s}}}]"));
    }

    #[test]
    fn any_json_value_never_panics(score in prop_oneof![Just("1".to_string()), Just("\"NaN\"".to_string()), "-?[0-9]{1,5}(\\.[0-9]{1,3})?(e[0-9]{1,3})?"],
                                   raw in "\\[(\\[([0-9.e+-]{1,6},?){0,4}\\],?){0,3}\\]",
                                   unit in "(ops|[a-z]{1,3})/(s|ms|op|us|x)") {
        let text = format!(r#"[{{"benchmark":"a.B.c","mode":"thrpt","threads":0,"primaryMetric":{{"score":{score},"scoreUnit":"{unit}","rawData":{raw}}}}}]"#);
        if let Ok(r) = parse(&text) {
            let p = &r[0].primary;
            let _ = normalise(p.score, &p.unit);
            let _ = p.fork_mean(p.raw.len().saturating_sub(1));
            prop_assert_eq!(r[0].threads, 1);
        }
    }
}
