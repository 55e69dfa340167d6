//! Tests of the pacer on a fake clock (the schedule, catching up without coordinated
//! omission, stopping), of the QoS syntax and of the verdict.

use super::*;
use crate::control::{Clock, FakeClock};
use crate::WorkerMeter;
use std::sync::Arc;

const MS: u64 = 1_000_000;

fn ctl() -> (Control, Arc<FakeClock>) {
    let clock = Arc::new(FakeClock::default());
    (Control::simple(Duration::ZERO, Duration::from_secs(10), clock.clone()), clock)
}

fn paced(rate: f64) -> PaceSpec {
    PaceSpec { rate_per_s: Some(rate), qos: None }
}

#[test]
fn workers_share_the_rate_and_start_evenly_spread() {
    let (ctl, clock) = ctl();
    let spec = paced(1000.0);
    let mut meter = WorkerMeter::new();
    let mut a = Pacer::new(&spec, 0, 2, &ctl);
    let mut b = Pacer::new(&spec, 1, 2, &ctl);
    let mut starts = Vec::new();
    for _ in 0..3 {
        starts.push(a.next(&ctl, &mut meter).expect("due").0);
        assert_eq!(clock.now().0, *starts.last().expect("start"), "slept exactly until the start");
        starts.push(b.next(&ctl, &mut meter).expect("due").0);
    }
    // Worker 0 at 0, 2, 4 ms; worker 1 at 1, 3, 5 ms: 1000/s over the cell.
    assert_eq!(starts, vec![0, MS, 2 * MS, 3 * MS, 4 * MS, 5 * MS]);
}

#[test]
fn a_late_worker_catches_up_and_counts_the_wait_from_the_intended_start() {
    let (ctl, clock) = ctl();
    ctl.begin_measure();
    let mut meter = WorkerMeter::new();
    assert!(meter.tick(&ctl));
    let mut p = Pacer::new(&paced(100.0), 0, 1, &ctl); // one unit every 10 ms
    let mut latencies = Vec::new();
    for unit_ms in [25, 1, 1, 1] {
        let due = p.next(&ctl, &mut meter).expect("due");
        clock.sleep(Duration::from_millis(unit_ms));
        latencies.push(p.done(&ctl, &meter, due) / MS);
    }
    // Units due at 0, 10, 20, 30 ms start at 0, 25, 26, 30 ms: the slow first unit delays
    // the next two, whose latencies say so (16 and 7 ms, not 1 ms); the fourth is on time.
    assert_eq!(latencies, vec![25, 16, 7, 1]);
    assert_eq!(clock.now().0, 31 * MS, "no unit was skipped and none slept while behind");
    let tally = PaceTally::default();
    p.finish(&tally);
    assert_eq!(tally.lock().count, 4);
}

#[test]
fn flat_out_never_sleeps_and_keeps_nothing_without_a_qos() {
    let (ctl, clock) = ctl();
    ctl.begin_measure();
    let mut meter = WorkerMeter::new();
    assert!(meter.tick(&ctl));
    let mut p = Pacer::new(&PaceSpec::default(), 0, 4, &ctl);
    for _ in 0..5 {
        let due = p.next(&ctl, &mut meter).expect("due");
        clock.sleep(Duration::from_millis(3));
        assert_eq!(p.done(&ctl, &meter, due), 3 * MS);
    }
    assert_eq!(clock.now().0, 15 * MS);
    let tally = PaceTally::default();
    p.finish(&tally);
    assert_eq!(tally.lock().count, 0);
}

#[test]
fn long_waits_are_cut_short_when_the_cell_stops() {
    let (ctl, clock) = ctl();
    let mut meter = WorkerMeter::new();
    let mut p = Pacer::new(&paced(0.5), 0, 1, &ctl); // one unit every 2 s
    assert!(p.next(&ctl, &mut meter).is_some());
    ctl.stop();
    assert_eq!(p.next(&ctl, &mut meter), None);
    assert!(clock.now().0 <= MAX_SLEEP.as_nanos() as u64, "stopped within one slice");
}

#[test]
fn only_units_that_end_inside_the_window_count() {
    let (ctl, clock) = ctl();
    let spec = PaceSpec { rate_per_s: Some(1000.0), qos: Some(parse_qos("p50<=1ms").expect("qos")) };
    let mut p = Pacer::new(&spec, 0, 1, &ctl);
    let mut meter = WorkerMeter::new();
    let unit = |p: &mut Pacer, meter: &mut WorkerMeter, close: bool| {
        meter.tick(&ctl);
        let due = p.next(&ctl, meter).expect("due");
        clock.sleep(Duration::from_micros(100));
        if close {
            ctl.end_measure();
        }
        p.done(&ctl, meter, due);
        meter.count(&ctl, "unit", 0, 1.0, 0, 0);
    };
    unit(&mut p, &mut meter, false); // warmup
    ctl.begin_measure();
    for _ in 0..10 {
        unit(&mut p, &mut meter, false);
    }
    unit(&mut p, &mut meter, true); // ends after the window closed
    assert_eq!(p.next(&ctl, &mut meter), None, "no unit starts after the window");
    let tally = PaceTally::default();
    p.finish(&tally);
    let rec = Recorder::new();
    meter.finish(&rec);
    assert_eq!(tally.lock().count, 10);
    assert_eq!(rec.totals().units, 10.0, "the pacer counts what the meter counts");
}

#[test]
fn qos_text_is_read_and_bad_text_says_the_syntax() {
    let q = parse_qos("p95<=5ms").expect("ok");
    assert_eq!((q.percentile, q.limit_ns, q.rate_floor_pct()), (95.0, 5 * MS, DEFAULT_MIN_RATE_PCT));
    let q = parse_qos(" p99.9 <= 250us ; rate >= 90% ").expect("ok");
    assert_eq!((q.percentile, q.limit_ns, q.min_rate_pct), (99.9, 250_000, Some(90.0)));
    assert_eq!(parse_qos("p50<=1s").expect("ok").limit_ns, 1_000_000_000);
    assert_eq!(parse_qos("p90<=0.5ms").expect("ok").limit_ns, 500_000);
    for bad in [
        "",
        "p95",
        "p95<5ms",
        "95<=5ms",
        "p40<=5ms",
        "p100<=5ms",
        "p95<=5",
        "p95<=5 parsecs",
        "p95<=-1ms",
        "p95<=5ms;rate>=0%",
        "p95<=5ms;rate>=95",
        "p95<=5ms;p99<=9ms",
        "p95<=5ms;rate>=95%;x",
    ] {
        let e = parse_qos(bad).expect_err(bad);
        assert!(e.contains("p95<=5ms") && e.contains("PERCENTILE<=DURATION"), "{bad}: {e}");
    }
}

#[test]
fn rate_and_qos_options_are_checked() {
    let params = |pairs: &[(&str, Value)]| -> Params {
        pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    };
    assert_eq!(PaceSpec::of_params(&Params::new()), Ok(PaceSpec::default()));
    assert!(!PaceSpec::default().active());
    let s = PaceSpec::of_params(&params(&[("rate", Value::Float(250.0))])).expect("ok");
    assert_eq!(s.rate_per_s, Some(250.0));
    for bad in [Value::Float(0.0), Value::Float(-3.0), Value::Float(f64::INFINITY), Value::Float(1e9)] {
        let e = PaceSpec::of_params(&params(&[("rate", bad.clone())])).expect_err("bad rate");
        assert!(e.contains("rate=500"), "{bad}: {e}");
    }
    let e = PaceSpec::of_params(&params(&[("qos", Value::Str("p95<=1ms;rate>=90%".into()))]))
        .expect_err("a floor without a rate");
    assert!(e.contains("needs a target rate"), "{e}");
    let q = PaceSpec::of_params(&params(&[("qos", Value::Str("p95<=1ms".into()))])).expect("qos alone");
    assert!(q.active() && q.rate_per_s.is_none());
}

fn hist(latencies_ms: &[u64]) -> LatencyHistogram {
    let mut h = LatencyHistogram::new();
    latencies_ms.iter().for_each(|ms| h.record(ms * MS));
    h
}

fn figure(o: &Outcome, name: &str) -> Option<f64> {
    o.figures.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

#[test]
fn qos_holds_only_when_the_latency_and_the_rate_do() {
    let spec = |text: &str| PaceSpec { rate_per_s: Some(10.0), qos: Some(parse_qos(text).expect("qos")) };
    // 10 units in 1 s at 10/s; their p90 is 2 ms.
    let h = hist(&[1, 1, 1, 1, 1, 1, 1, 1, 2, 9]);
    let held = evaluate(&spec("p90<=2ms"), &h, 1.0);
    assert_eq!(held.held, Some(true));
    let measured = figure(&held, "qos_measured_ms").expect("measured");
    assert!((measured - 2.0).abs() < 2.0 * 0.0625, "p90 is 2 ms within the histogram's error: {measured}");
    assert_eq!(figure(&held, "pace_achieved_pct"), Some(100.0));
    assert_eq!(figure(&held, "qos_held"), Some(1.0));
    let slow = evaluate(&spec("p90<=1ms"), &h, 1.0);
    assert_eq!((slow.held, figure(&slow, "qos_held")), (Some(false), Some(0.0)));
    // The same latencies over 2 s: 5/s of 10/s is below the 95% floor (and above a 40% one).
    assert_eq!(evaluate(&spec("p90<=2ms"), &h, 2.0).held, Some(false));
    assert_eq!(evaluate(&spec("p90<=2ms;rate>=40%"), &h, 2.0).held, Some(true));
    let none = evaluate(&spec("p90<=2ms"), &LatencyHistogram::new(), 1.0);
    assert_eq!(none.held, Some(false), "no unit ended in the window");
    assert_eq!(figure(&none, "qos_measured_ms"), None);
    let plain = evaluate(&paced(10.0), &h, 1.0);
    assert_eq!((plain.held, figure(&plain, "pace_target_per_s")), (None, Some(10.0)));
}

#[test]
fn paced_tables_end_with_rate_and_qos() {
    const BASE: &[OptionSpec] = &[OptionSpec { name: "x", kind: OptKind::Bool, default: "true", help: "x" }];
    static PACED: [OptionSpec; BASE.len() + 2] = with_pace_options(BASE);
    let names: Vec<&str> = PACED.iter().map(|o| o.name).collect();
    assert_eq!(names, ["x", "rate", "qos"]);
    assert_eq!(RATE.default_value(), None, "absent unless given");
    assert_eq!(QOS.default_value(), None);
}
