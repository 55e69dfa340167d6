//! `racehorse plugd check FILE`: validates a config without touching anything and prints its
//! settings and every rule fully parenthesised, with the values it would see now.

use crate::daemon::{load, needs, Exit};
use crate::sample::{machine_counts, parse_meminfo, parse_vmstat, read_sample};
use crate::values::History;
use racehorse_machine::SysRoot;
use racehorse_rules::{close_matches, did_you_mean, Config, Name, Rule, Values};
use std::collections::btree_map::{BTreeMap, Entry};
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

/// The field names this machine's /proc/`family` has (`family` is meminfo or vmstat).
fn kernel_fields(root: &SysRoot, family: &str) -> Result<Vec<String>, Exit> {
    let file = root.proc(family);
    let text = std::fs::read_to_string(&file)
        .map_err(|e| Exit { code: 1, msg: format!("{}: {e}", file.display()) })?;
    let fields = if family == "meminfo" { parse_meminfo(&text) } else { parse_vmstat(&text) };
    Ok(fields.into_keys().collect())
}

/// Up to three of `have` close to `field` (edit distance, as for other names; failing that,
/// one contains the other), written `family.NAME`.
fn close_fields(family: &str, field: &str, have: &[String]) -> Vec<String> {
    let mut close = close_matches(field, have.iter().map(String::as_str));
    if close.is_empty() {
        let lower = field.to_ascii_lowercase();
        let contains = |h: &String| {
            let h = h.to_ascii_lowercase();
            h.len().min(lower.len()) >= 4 && (h.contains(&lower) || lower.contains(&h))
        };
        close = have.iter().filter(|h| contains(h)).take(3).cloned().collect();
    }
    close.into_iter().map(|c| format!("{family}.{c}")).collect()
}

/// Every `meminfo.X` and `vmstat.X` the rules of `cfg` (loaded from `path`) read must exist in
/// this machine's /proc (upstream exits at run time instead). The first missing one, in file
/// order, is a usage error (exit 2) `FILE:LINE:COL: ...` naming up to three close fields; an
/// unreadable /proc file is exit 1.
pub fn check_fields(path: &Path, cfg: &Config, root: &SysRoot) -> Result<(), Exit> {
    let mut known: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (name, site) in cfg.name_sites() {
        let (family, field) = match &name {
            Name::Meminfo(f) => ("meminfo", f),
            Name::Vmstat(f) => ("vmstat", f),
            _ => continue,
        };
        let have = match known.entry(family) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => v.insert(kernel_fields(root, family)?),
        };
        if !have.contains(field) {
            let hint = did_you_mean(&close_fields(family, field, have));
            let at = format!("{}:{}:{}", path.display(), site.line, site.column);
            return Err(Exit {
                code: 2,
                msg: format!("{at}: `{name}` is not in /proc/{family} on this machine{hint}"),
            });
        }
    }
    Ok(())
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
    check_fields(path, &cfg, root)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A CPU config whose HOTPLUG (line 4) and variable `v` (line 6) are given.
    const HEAD: &str = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\n";

    fn fixture() -> SysRoot {
        SysRoot::at(Path::new(env!("CARGO_MANIFEST_DIR")).join("../machine/fixtures/baremetal4"))
    }

    /// Writes the config and runs `plugd check` on it against the fixture machine.
    fn run(conf: &str) -> (std::path::PathBuf, Result<(), Exit>, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cpuplugd.conf");
        std::fs::write(&path, conf).unwrap();
        let r = check(&path, &fixture(), &mut Vec::new());
        (path, r, dir)
    }

    #[test]
    fn unknown_meminfo_field_gives_file_line_col_and_close_names() {
        let conf = format!("{HEAD}HOTPLUG = \"idle < 5 & meminfo.MemFre > 1\"\nHOTUNPLUG=\"0\"\n");
        let (path, r, _dir) = run(&conf);
        let e = r.unwrap_err();
        assert_eq!(e.code, 2, "{e:?}");
        assert!(e.msg.starts_with(&format!("{}:4:23: `meminfo.MemFre` is not", path.display())), "{e:?}");
        assert!(e.msg.contains("did you mean `meminfo.MemFree`"), "{e:?}");
    }

    #[test]
    fn unknown_vmstat_field_gives_file_line_col_and_close_names() {
        let conf = format!("{HEAD}HOTPLUG=\"v\"\nHOTUNPLUG=\"0\"\nv = \"vmstat.pgpgn[1] > 1\"\n");
        let (path, r, _dir) = run(&conf);
        let e = r.unwrap_err();
        assert_eq!(e.code, 2, "{e:?}");
        let at = format!("{}:6:6: `vmstat.pgpgn` is not in /proc/vmstat", path.display());
        assert!(e.msg.starts_with(&at), "a name in a variable is at the variable's line: {e:?}");
        assert!(e.msg.contains("did you mean `vmstat.pgpgin`"), "{e:?}");
    }

    #[test]
    fn fields_far_from_any_name_are_refused_without_a_guess() {
        let conf =
            format!("{HEAD}HOTPLUG=\"meminfo.NoSuch > 1\"\nHOTUNPLUG=\"vmstat.no_such_counter > 1\"\n");
        let (path, r, _dir) = run(&conf);
        let e = r.unwrap_err();
        assert_eq!(
            e.msg,
            format!("{}:4:10: `meminfo.NoSuch` is not in /proc/meminfo on this machine", path.display())
        );
        let conf =
            format!("{HEAD}HOTPLUG=\"meminfo.MemFree > 1\"\nHOTUNPLUG=\"vmstat.no_such_counter > 1\"\n");
        let e = run(&conf).1.unwrap_err();
        assert!(
            e.msg.contains(":5:12: `vmstat.no_such_counter`") && !e.msg.contains("did you mean"),
            "{e:?}"
        );
    }

    #[test]
    fn known_fields_pass_and_close_fields_fall_back_to_containment() {
        let conf = format!("{HEAD}HOTPLUG=\"meminfo.MemFree > vmstat.pgpgin\"\nHOTUNPLUG=\"0\"\n");
        let cfg = racehorse_rules::parse_config(&conf).unwrap();
        assert!(check_fields(Path::new("c"), &cfg, &fixture()).is_ok());
        let have: Vec<String> = ["MemTotal", "MemFree", "MemAvailable"].map(String::from).to_vec();
        assert_eq!(close_fields("meminfo", "memfree", &have), vec!["meminfo.MemFree"]);
        assert_eq!(close_fields("meminfo", "Available", &have), vec!["meminfo.MemAvailable"]);
        assert!(close_fields("meminfo", "Mem", &have).is_empty(), "too short to guess");
    }
}
