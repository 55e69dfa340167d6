//! `racehorse plugd check FILE`: validates a config without touching anything and prints its
//! settings and every rule fully parenthesised, with the values it would see now.

use crate::daemon::{check_names, load, needs, Exit};
use crate::sample::{machine_counts, read_sample};
use crate::values::History;
use racehorse_machine::SysRoot;
use racehorse_rules::{Config, Name, Rule, Values};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

fn name_text(n: &Name, back: usize) -> String {
    if back > 0 {
        format!("{n}[{back}]")
    } else {
        n.to_string()
    }
}

/// Samples `depth + 1` times, at most 2 s in all, so that every `[n]` has a value.
fn sample_now(cfg: &Config, root: &SysRoot) -> Result<History, String> {
    let mut h = History::new(cfg.history_depth());
    let gap = Duration::from_secs_f64((2.0 / cfg.history_depth() as f64).min(0.5));
    let n = needs(cfg);
    while !h.ready() {
        if h.latest().is_some() {
            std::thread::sleep(gap);
        }
        let (online, present) = machine_counts(root).map_err(|e| e.to_string())?;
        h.push(read_sample(root, n, online, present).map_err(|e| e.to_string())?);
    }
    Ok(h)
}

fn print_rule(
    out: &mut dyn Write,
    key: &str,
    rule: &Rule,
    h: &History,
    numeric: bool,
) -> std::io::Result<()> {
    writeln!(out, "{key} (line {}) = {}", rule.line, rule.expr.parenthesised())?;
    let now = if numeric {
        rule.expr.eval_num(h).map(|v| format!("{v}"))
    } else {
        rule.expr.eval_bool(h).map(|v| v.to_string())
    };
    match now {
        Ok(v) => writeln!(out, "  now: {v}")?,
        Err(e) => writeln!(out, "  now: cannot evaluate ({e}); the daemon would skip that step")?,
    }
    for (name, deepest) in rule.expr.names() {
        let vals: Vec<String> = (0..=deepest)
            .map(|b| h.value(&name, b).map_or("-".into(), |v| format!("{}={v:.4}", name_text(&name, b))))
            .collect();
        writeln!(out, "    {}", vals.join("  "))?;
    }
    Ok(())
}

fn settings(cfg: &Config, present: u32, cmm: bool) -> Vec<String> {
    let mut s = vec![format!("UPDATE = {} s", cfg.update_s.unwrap_or(0))];
    if let Some(m) = cfg.cpu_min {
        s.push(format!("CPU_MIN = {m}"));
    }
    if let Some(m) = cfg.cpu_max {
        s.push(if m == 0 {
            format!("CPU_MAX = 0 (all {present} present CPUs)")
        } else {
            format!("CPU_MAX = {m}")
        });
    }
    for (k, v) in [("CMM_MIN", cfg.cmm_min), ("CMM_MAX", cfg.cmm_max)] {
        if let Some(v) = v {
            s.push(format!("{k} = {v} pages"));
        }
    }
    s.push(format!(
        "CPU control: {}",
        if cfg.cpu_control() { "on" } else { "off (needs CPU_MIN, CPU_MAX, HOTPLUG, HOTUNPLUG)" }
    ));
    s.push(format!("memory rules: {}", if cfg.memory_rules() { "complete" } else { "incomplete or absent" }));
    if cfg.memory_rules() && !cmm {
        s.push("memory control: off here (no /proc/sys/vm/cmm_pages); `--memory blocks` uses sysfs memory blocks".into());
    }
    s.push(format!(
        "history: {} sample(s) back; first decision about {} s after start",
        cfg.history_depth(),
        cfg.history_depth() as u64 * cfg.update_s.unwrap_or(1)
    ));
    s
}

/// Checks `path` and writes the report to `out`.
pub fn check(path: &Path, root: &SysRoot, out: &mut dyn Write) -> Result<(), Exit> {
    let cfg = load(path).map_err(|msg| Exit { code: 2, msg })?;
    check_names(&cfg, root).map_err(|msg| Exit { code: 2, msg: format!("{}: {msg}", path.display()) })?;
    let io = |e: std::io::Error| Exit { code: 1, msg: e.to_string() };
    let (_, present) = machine_counts(root).map_err(|e| Exit { code: 1, msg: e.to_string() })?;
    writeln!(out, "{}: valid", path.display()).map_err(io)?;
    for w in &cfg.warnings {
        writeln!(out, "note: {w}").map_err(io)?;
    }
    for line in settings(&cfg, present, crate::memory::CmmPages::available(root)) {
        writeln!(out, "{line}").map_err(io)?;
    }
    for (name, text) in &cfg.vars {
        writeln!(out, "variable {name} = {text}").map_err(io)?;
    }
    let h = sample_now(&cfg, root).map_err(|msg| Exit { code: 1, msg })?;
    let rules = [
        ("HOTPLUG", &cfg.hotplug, false),
        ("HOTUNPLUG", &cfg.hotunplug, false),
        ("MEMPLUG", &cfg.memplug, false),
        ("MEMUNPLUG", &cfg.memunplug, false),
        ("CMM_INC", &cfg.cmm_inc, true),
        ("CMM_DEC", &cfg.cmm_dec, true),
    ];
    for (key, rule, numeric) in rules {
        if let Some(r) = rule {
            print_rule(out, key, r, &h, numeric).map_err(io)?;
        }
    }
    Ok(())
}
