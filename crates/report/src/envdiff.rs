//! What differs between the environments of two runs: kernel, CPUs, memory, sysctls,
//! filesystems and block settings (the captured `Environment`), plus the racehorse version
//! and CPU-control method each run recorded.

use racehorse_core::Environment;
use racehorse_store::RunInfo;
use serde::Serialize;

/// One differing key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvDelta {
    pub key: String,
    pub base: String,
    pub new: String,
}

/// The environment of a run as `key = value` pairs; an unreadable capture gives one
/// `environment` key saying so, so that the diff still shows something.
pub fn env_pairs(run: &RunInfo) -> Vec<(String, String)> {
    let mut out = match serde_json::from_str::<Environment>(&run.env_json) {
        Ok(e) => e.flatten(),
        Err(_) if run.env_json.trim().is_empty() => vec![("environment".into(), "(not captured)".into())],
        Err(e) => vec![("environment".into(), format!("(unreadable: {e})"))],
    };
    out.retain(|(k, _)| k != "racehorse.version" && k != "cpu.control");
    out.push(("racehorse.version".into(), run.racehorse_version.clone()));
    out.push(("cpu.control".into(), run.cpu_method.clone()));
    out
}

/// Keys whose values differ between `base` and `new`, base's key order first; a key on one
/// side only shows `(absent)` on the other.
pub fn env_diff(base: &RunInfo, new: &RunInfo) -> Vec<EnvDelta> {
    let b = env_pairs(base);
    let n = env_pairs(new);
    let absent = || "(absent)".to_string();
    let lookup =
        |pairs: &[(String, String)], k: &str| pairs.iter().find(|(pk, _)| pk == k).map(|(_, v)| v.clone());
    let mut out: Vec<EnvDelta> = b
        .iter()
        .filter_map(|(k, v)| {
            let other = lookup(&n, k);
            (other.as_ref() != Some(v)).then(|| EnvDelta {
                key: k.clone(),
                base: v.clone(),
                new: other.unwrap_or_else(absent),
            })
        })
        .collect();
    for (k, v) in &n {
        if lookup(&b, k).is_none() {
            out.push(EnvDelta { key: k.clone(), base: absent(), new: v.clone() });
        }
    }
    collapse_uncaptured_tuning(&mut out, has_tuning(base), has_tuning(new));
    out
}

/// Whether a run's environment holds the noise settings; None when it cannot be read.
fn has_tuning(run: &RunInfo) -> Option<bool> {
    serde_json::from_str::<Environment>(&run.env_json).ok().map(|e| e.tuning.is_some())
}

/// Against a run stored before the noise settings were captured, their fifty-odd `(absent)`
/// rows say one thing: one `noise settings` row says it instead.
fn collapse_uncaptured_tuning(out: &mut Vec<EnvDelta>, base: Option<bool>, new: Option<bool>) {
    let (Some(b), Some(n)) = (base, new) else { return };
    if b == n {
        return;
    }
    let mut keys = Vec::new();
    racehorse_core::envtuning::Tuning::default().flatten_into(&mut |k, _| keys.push(k.to_string()));
    let lacking = |d: &EnvDelta| if b { d.new == "(absent)" } else { d.base == "(absent)" };
    out.retain(|d| !(keys.contains(&d.key) && lacking(d)));
    let (captured, missing) = ("captured".to_string(), "(not captured: stored before they were)".to_string());
    let (base, new) = if b { (captured, missing) } else { (missing, captured) };
    out.push(EnvDelta { key: "noise settings".into(), base, new });
}

#[cfg(test)]
mod tests {
    use super::*;
    use racehorse_core::RunStatus;

    fn run(env: &Environment, version: &str, method: &str) -> RunInfo {
        RunInfo {
            id: 1,
            label: "x".into(),
            started_at_unix_s: 0,
            finished_at_unix_s: None,
            status: RunStatus::Complete,
            host: "h".into(),
            command: String::new(),
            suite_json: String::new(),
            env_json: serde_json::to_string(env).unwrap_or_default(),
            exclusivity_json: String::new(),
            racehorse_version: version.into(),
            cpu_method: method.into(),
            cells_ok: 0,
            cells_failed: 0,
            uuid: String::new(),
            inventory_name: "h".into(),
            campaign: None,
        }
    }

    #[test]
    fn reports_kernel_sysctl_version_and_method() {
        let a = Environment { kernel_release: "6.1".into(), swappiness: Some(60), ..Default::default() };
        let b = Environment { kernel_release: "6.6".into(), swappiness: Some(10), ..Default::default() };
        let d = env_diff(&run(&a, "0.1.0", "hotplug"), &run(&b, "0.2.0", "affinity"));
        let keys: Vec<&str> = d.iter().map(|x| x.key.as_str()).collect();
        assert_eq!(keys, ["kernel.release", "vm.swappiness", "racehorse.version", "cpu.control"]);
        assert_eq!(d[0].new, "6.6");
        assert!(env_diff(&run(&a, "0.1.0", "hotplug"), &run(&a, "0.1.0", "hotplug")).is_empty());
    }

    #[test]
    fn a_run_without_noise_settings_is_one_row() {
        let old = Environment { kernel_release: "6.1".into(), ..Default::default() };
        let t = racehorse_core::envtuning::Tuning { smt_control: Some("on".into()), ..Default::default() };
        let new = Environment { tuning: Some(t), ..old.clone() };
        let d = env_diff(&run(&old, "0.1.0", "none"), &run(&new, "0.1.0", "none"));
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(
            (d[0].key.as_str(), d[0].base.as_str(), d[0].new.as_str()),
            ("noise settings", "(not captured: stored before they were)", "captured")
        );
        let back = env_diff(&run(&new, "0.1.0", "none"), &run(&old, "0.1.0", "none"));
        assert_eq!(
            (back.len(), back[0].base.as_str(), back[0].new.as_str().len() > 10),
            (1, "captured", true)
        );
        let both = Environment { tuning: Some(Default::default()), ..old.clone() };
        let d = env_diff(&run(&both, "0.1.0", "none"), &run(&new, "0.1.0", "none"));
        assert_eq!(d.len(), 1);
        assert_eq!(
            (d[0].key.as_str(), d[0].base.as_str(), d[0].new.as_str()),
            ("cpu.smt.control", "not available", "on")
        );
    }

    #[test]
    fn unreadable_environment_is_said() {
        let mut r = run(&Environment::default(), "0.1.0", "none");
        r.env_json = "{not json".into();
        assert!(env_pairs(&r)[0].1.starts_with("(unreadable"));
    }
}
