//! The options every engine takes from the harness beside its own table: `where` (this
//! machine or a KVM guest of it) for every engine, and pacing (`rate`, `qos`) for the engines
//! that can run paced (`Caps::paced`; their tables hold these options and check the values).
//! One table, checked here once for suite files and the command line alike.

use racehorse_core::Value;
use racehorse_engines::pace_options as pace;

/// The parameter that says where a cell runs: `host` (bare metal, the default) or `guest`.
pub const WHERE: &str = "where";
/// Its values.
pub const WHERE_VALUES: [&str; 2] = ["host", "guest"];

/// Which engines take a harness option.
#[derive(Debug, Clone, Copy)]
pub enum Reach {
    /// Every engine; the harness checks each value with this function.
    /// Leaf checks: `WorkloadEntry::new` and `Suite::apply` wrap their messages.
    Every(fn(Value) -> Result<Value, String>),
    /// The engines that can run paced; their option tables check the values.
    Paced,
}

/// One option of the harness.
#[derive(Debug, Clone, Copy)]
pub struct HarnessOption {
    pub name: &'static str,
    pub reach: Reach,
}

/// The harness's options.
pub const HARNESS_OPTIONS: &[HarnessOption] = &[
    HarnessOption { name: WHERE, reach: Reach::Every(check_where) },
    HarnessOption { name: pace::RATE.name, reach: Reach::Paced },
    HarnessOption { name: pace::QOS.name, reach: Reach::Paced },
];

/// Checks a `where` value (`host`, `guest`).
/// Leaf check: see [`Reach::Every`].
pub fn check_where(v: Value) -> Result<Value, String> {
    match &v {
        Value::Str(s) if WHERE_VALUES.contains(&s.as_str()) => Ok(v),
        _ => Err(format!("where = {v}: expected host or guest (a KVM guest of this machine)")),
    }
}

fn find(name: &str) -> Option<&'static HarnessOption> {
    HARNESS_OPTIONS.iter().find(|o| o.name == name)
}

/// The pacing options by name: "rate and qos".
fn paced_names() -> String {
    let names: Vec<&str> =
        HARNESS_OPTIONS.iter().filter(|o| matches!(o.reach, Reach::Paced)).map(|o| o.name).collect();
    names.join(" and ")
}

/// For an option every engine takes: its values, checked. None for any other name.
/// Leaf: `WorkloadEntry::new` and `Suite::apply` wrap its message.
pub fn every_engine_values(name: &str, values: Vec<Value>) -> Option<Result<Vec<Value>, String>> {
    match find(name)?.reach {
        Reach::Every(check) => Some(values.into_iter().map(check).collect()),
        Reach::Paced => None,
    }
}

/// Why `engine`, whose table lacks `name`, refuses it: a pacing option given to an engine
/// that cannot pace. None for any other name.
pub fn refused_by(engine: &str, name: &str) -> Option<String> {
    matches!(find(name)?.reach, Reach::Paced).then(|| {
        format!(
            "workload '{engine}' cannot run paced (options {}); the engines that can: {}",
            paced_names(),
            racehorse_engines::paced_engines().join(", ")
        )
    })
}

/// Why no workload of a run (its engines: `engines`) takes `name`: a pacing option in a run
/// of engines that cannot pace. None for any other name.
pub fn refused_by_run(name: &str, engines: &[&str]) -> Option<String> {
    matches!(find(name)?.reach, Reach::Paced).then(|| {
        format!(
            "no workload in this run can run paced (options {}; workloads: {}); the engines that can: {}",
            paced_names(),
            engines.join(", "),
            racehorse_engines::paced_engines().join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn where_is_host_or_guest() {
        assert!(check_where(Value::Str("guest".into())).is_ok());
        assert!(check_where(Value::Str("moon".into())).unwrap_err().contains("host or guest"));
        let checked = every_engine_values(WHERE, vec![Value::Str("host".into()), Value::Int(1)]);
        assert!(checked.unwrap().is_err());
        assert!(
            every_engine_values("rate", vec![]).is_none() && every_engine_values("clients", vec![]).is_none()
        );
    }

    /// The table agrees with the engines: every engine that can pace has all the pacing
    /// options in its table, no other has them all (`null` has a `rate` of its own); no
    /// engine's table has `where`.
    #[test]
    fn pacing_options_are_the_paced_engines_own() {
        let pacing: Vec<&str> =
            HARNESS_OPTIONS.iter().filter(|o| matches!(o.reach, Reach::Paced)).map(|o| o.name).collect();
        for e in racehorse_engines::registry() {
            let has = |name: &&str| e.options().iter().any(|o| o.name == *name);
            assert!(!has(&WHERE), "{}", e.name());
            assert_eq!(pacing.iter().all(has), e.caps().paced, "{}", e.name());
        }
    }

    #[test]
    fn pacing_refusals_name_the_engines_that_can() {
        let one = refused_by("micro", "qos").unwrap();
        assert!(one.starts_with("workload 'micro' cannot run paced (options rate and qos)"), "{one}");
        let run = refused_by_run("rate", &["micro", "net"]).unwrap();
        assert!(run.contains("no workload in this run can run paced") && run.contains("micro, net"), "{run}");
        for text in [one, run] {
            assert!(racehorse_engines::paced_engines().iter().all(|e| text.contains(e)), "{text}");
        }
        assert_eq!((refused_by("micro", "clients"), refused_by_run(WHERE, &[])), (None, None));
    }
}
