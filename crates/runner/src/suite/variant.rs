//! Variants: named machine configurations (sysctls, block-device queue knobs, THP, governor,
//! CPUs, memory limit, target directory, environment, before/after commands) parsed from a
//! suite's `[[variant]]` tables, and the order in which cells of several variants run.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Block-device queue settings of a variant (`[variant.block]`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct BlockKnobs {
    /// Device name (`vda`, `/dev/loop0`, a partition); None = the device of the target directory.
    pub device: Option<String>,
    /// Queue attribute (`read_ahead_kb`, `scheduler`, `nr_requests`, …) → value.
    pub queue: BTreeMap<String, String>,
}

/// The seed's default rules (seed 003), used when a plugd variant names settings only.
pub const SEED_HOTPLUG: &str = "(loadavg > onumcpus + 0.75) & (idle < 10.0)";
pub const SEED_HOTUNPLUG: &str = "(loadavg < onumcpus - 0.25) | (idle > 50)";

/// `plugd = { … }`: run `racehorse plugd` during the variant's cells, from a config file or
/// from settings (cpu_min, cpu_max, update, and optionally the rules; default the seed's).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlugdSpec {
    pub config: Option<PathBuf>,
    pub cpu_min: Option<u32>,
    pub cpu_max: Option<u32>,
    pub update: Option<u32>,
    pub hotplug: Option<String>,
    pub hotunplug: Option<String>,
}

/// Why a plugd variant's configuration cannot be used (a usage error, found before any cell
/// runs): its file and the place in it where the rules parser stopped, when it has one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlugdConfigError {
    /// `config = FILE` together with settings.
    #[error(
        "plugd: give config = FILE or settings (cpu_min, cpu_max, update, hotplug, hotunplug), not both"
    )]
    Both,
    /// The config file cannot be read.
    #[error("plugd config {}: {reason}", .path.display())]
    Unreadable { path: PathBuf, reason: String },
    /// The rules parser refused the config: the file ("its config" for settings), and where.
    #[error("plugd: {file}: line {line}, column {column}: {message}")]
    Rules { file: String, line: usize, column: usize, message: String },
    /// The config controls no CPUs.
    #[error("plugd: the config has no CPU control (CPU_MIN, CPU_MAX, HOTPLUG, HOTUNPLUG)")]
    NoCpuControl,
}

impl PlugdSpec {
    /// The config text the daemon gets, checked by the rules parser.
    pub fn config_text(&self) -> Result<String, PlugdConfigError> {
        let text = match &self.config {
            Some(path) => {
                if self.cpu_min.is_some()
                    || self.cpu_max.is_some()
                    || self.update.is_some()
                    || self.hotplug.is_some()
                    || self.hotunplug.is_some()
                {
                    return Err(PlugdConfigError::Both);
                }
                std::fs::read_to_string(path)
                    .map_err(|e| PlugdConfigError::Unreadable { path: path.clone(), reason: e.to_string() })?
            }
            None => format!(
                "# written by racehorse for a plugd variant\nUPDATE=\"{}\"\nCPU_MIN=\"{}\"\nCPU_MAX=\"{}\"\n\
                 HOTPLUG=\"{}\"\nHOTUNPLUG=\"{}\"\n",
                self.update.unwrap_or(1),
                self.cpu_min.unwrap_or(1),
                self.cpu_max.unwrap_or(0),
                self.hotplug.as_deref().unwrap_or(SEED_HOTPLUG),
                self.hotunplug.as_deref().unwrap_or(SEED_HOTUNPLUG)
            ),
        };
        let cfg = racehorse_rules::parse_config(&text).map_err(|e| {
            let file = self.config.as_ref().map_or("its config".to_string(), |p| p.display().to_string());
            PlugdConfigError::Rules { file, line: e.line, column: e.column, message: e.message }
        })?;
        if !cfg.cpu_control() {
            return Err(PlugdConfigError::NoCpuControl);
        }
        Ok(text)
    }
}

/// A named system configuration applied around its cells.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Variant {
    pub name: String,
    /// sysctl name (e.g. `vm.swappiness`) → value.
    pub sysctl: BTreeMap<String, String>,
    pub block: Option<BlockKnobs>,
    /// Any other sysfs file (absolute path under /sys) → value.
    pub sysfs: BTreeMap<String, String>,
    /// Transparent huge pages: `enabled` and `defrag` modes.
    pub thp: Option<String>,
    pub thp_defrag: Option<String>,
    /// CPU frequency governor for every online CPU.
    pub governor: Option<String>,
    /// Online-CPU count for every cell of the variant. The cells keep the suite's `cpus`
    /// parameter (so that they match other variants' cells); the count used is recorded.
    pub cpus: Option<u32>,
    /// Exactly these CPUs online, likewise.
    pub cpu_list: Option<Vec<u32>>,
    /// Memory limit in bytes (replaces the suite's).
    pub mem_limit_bytes: Option<u64>,
    /// Target directory of disk workloads (replaces the suite's).
    pub dir: Option<PathBuf>,
    /// Environment variables for the programs a workload starts.
    pub env: BTreeMap<String, String>,
    /// Shell commands run before the variant's cells and after them (also on failure).
    pub before: Option<String>,
    pub after: Option<String>,
    /// The hotplug daemon during its cells (it then decides the CPU count, not the cells).
    pub plugd: Option<PlugdSpec>,
    /// A scratch volume built from devices for its cells and mounted at its `dir`.
    pub volume: Option<crate::volume::VolumeSpec>,
}

impl Variant {
    /// True when the variant changes nothing on the machine.
    pub fn is_plain(&self) -> bool {
        *self == Variant { name: self.name.clone(), ..Variant::default() }
    }

    /// Its settings as written, `key=value` each (for plans and messages).
    pub fn describe(&self) -> Vec<String> {
        let mut out: Vec<String> = self.sysctl.iter().map(|(k, v)| format!("sysctl {k}={v}")).collect();
        if let Some(b) = &self.block {
            let dev = b.device.clone().unwrap_or_else(|| "(target dir's device)".into());
            out.extend(b.queue.iter().map(|(k, v)| format!("block {dev} {k}={v}")));
        }
        out.extend(self.sysfs.iter().map(|(k, v)| format!("sysfs {k}={v}")));
        let one = [
            ("thp", self.thp.clone()),
            ("thp_defrag", self.thp_defrag.clone()),
            ("governor", self.governor.clone()),
            ("cpus", self.cpus.map(|n| n.to_string())),
            ("cpu_list", self.cpu_list.as_ref().map(|l| racehorse_machine::cpuctl::format_cpu_list(l))),
            ("mem_limit", self.mem_limit_bytes.map(|b| format!("{} MiB", b >> 20))),
            ("dir", self.dir.as_ref().map(|d| d.display().to_string())),
            ("before", self.before.clone()),
            ("after", self.after.clone()),
        ];
        out.extend(one.into_iter().filter_map(|(k, v)| v.map(|v| format!("{k}={v}"))));
        out.extend(self.env.iter().map(|(k, v)| format!("env {k}={v}")));
        if let Some(p) = &self.plugd {
            out.push(format!("plugd {}", plugd_summary(p)));
        }
        if let Some(v) = &self.volume {
            out.push(format!("volume {}", v.describe()));
        }
        out
    }
}

/// `config=FILE` or `cpu_min=…,cpu_max=…,update=…` of a plugd variant.
pub fn plugd_summary(p: &PlugdSpec) -> String {
    match &p.config {
        Some(c) => format!("config={}", c.display()),
        None => format!(
            "cpu_min={},cpu_max={},update={}{}",
            p.cpu_min.unwrap_or(1),
            p.cpu_max.unwrap_or(0),
            p.update.unwrap_or(1),
            if p.hotplug.is_some() || p.hotunplug.is_some() { ",own rules" } else { "" }
        ),
    }
}

/// The order of a run's cells when it has several variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Repetition by repetition, every variant in turn: drift hits all variants alike.
    #[default]
    Interleaved,
    /// All cells of one variant, then the next (fewest knob changes).
    Grouped,
    /// Repetition by repetition, cells shuffled (seeded; the seed is recorded).
    Random,
}

impl Order {
    /// Leaf parser: `Suite::parse` places its message at file:line:col, `Suite::apply` in an
    /// `OverrideError` naming `--order`.
    pub fn parse(text: &str) -> Result<Order, String> {
        match text {
            "interleaved" => Ok(Order::Interleaved),
            "grouped" => Ok(Order::Grouped),
            "random" => Ok(Order::Random),
            _ => Err(format!("order '{text}': use interleaved, grouped or random")),
        }
    }
}

/// A `[[variant]]` table as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawVariant {
    name: String,
    #[serde(default)]
    sysctl: BTreeMap<String, toml::Value>,
    block: Option<BTreeMap<String, toml::Value>>,
    #[serde(default)]
    sysfs: BTreeMap<String, toml::Value>,
    thp: Option<String>,
    thp_defrag: Option<String>,
    governor: Option<String>,
    cpus: Option<i64>,
    cpu_list: Option<toml::Value>,
    mem_limit: Option<String>,
    dir: Option<String>,
    #[serde(default)]
    env: BTreeMap<String, toml::Value>,
    before: Option<String>,
    after: Option<String>,
    plugd: Option<PlugdSpec>,
    volume: Option<crate::volume::RawVolume>,
}

/// A TOML scalar as the text written to a kernel file.
// Leaf parser: `into_variant` passes its message on, `Suite::parse` places it at file:line:col.
fn scalar_text(key: &str, v: &toml::Value) -> Result<String, String> {
    match v {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        toml::Value::Boolean(b) => Ok(if *b { "1" } else { "0" }.to_string()),
        other => Err(format!("{key}: {other} is not a plain value")),
    }
}

fn name_ok(name: &str, extra: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
}

// Leaf parser: `into_variant` passes its message on, `Suite::parse` places it at file:line:col.
fn sysctls(raw: BTreeMap<String, toml::Value>) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for (k, v) in raw {
        if !name_ok(&k, "._-") || k.contains("..") || k.starts_with('.') {
            return Err(format!("sysctl name '{k}' is not valid (e.g. vm.swappiness)"));
        }
        out.insert(k.clone(), scalar_text(&format!("sysctl {k}"), &v)?);
    }
    Ok(out)
}

// Leaf parser: `into_variant` passes its message on, `Suite::parse` places it at file:line:col.
fn block(raw: BTreeMap<String, toml::Value>) -> Result<BlockKnobs, String> {
    let mut b = BlockKnobs::default();
    for (k, v) in raw {
        if k == "device" {
            b.device = Some(scalar_text("block.device", &v)?);
        } else if name_ok(&k, "_") {
            b.queue.insert(k.clone(), scalar_text(&format!("block.{k}"), &v)?);
        } else {
            return Err(format!("block.{k}: not a queue attribute name (e.g. read_ahead_kb, scheduler)"));
        }
    }
    if b.queue.is_empty() {
        return Err("block: name at least one queue setting, e.g. read_ahead_kb = 128".into());
    }
    Ok(b)
}

// Leaf parser: `into_variant` passes its message on, `Suite::parse` places it at file:line:col.
fn sysfs(raw: BTreeMap<String, toml::Value>) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for (k, v) in raw {
        if !k.starts_with("/sys/") || k.split('/').any(|p| p == "..") {
            return Err(format!("sysfs '{k}': give an absolute path under /sys"));
        }
        out.insert(k.clone(), scalar_text(&format!("sysfs {k}"), &v)?);
    }
    Ok(out)
}

/// Parses `cpu_list = "0,2-3"` or `[0, 2, 3]` into sorted, distinct CPU numbers.
// Leaf parser: `into_variant` passes its message on, `Suite::parse` places it at file:line:col.
fn cpu_list(v: &toml::Value) -> Result<Vec<u32>, String> {
    let mut cpus = match v {
        toml::Value::String(s) => racehorse_machine::parse_cpu_list(s)
            .map_err(|e| format!("cpu_list '{s}': {e} (write e.g. \"0-1\" or \"0,2\")"))?,
        toml::Value::Array(a) => a
            .iter()
            .map(|i| {
                i.as_integer()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| format!("cpu_list: {i} is not a CPU number"))
            })
            .collect::<Result<Vec<u32>, String>>()?,
        other => return Err(format!("cpu_list: {other} is not a CPU list (e.g. \"0-1\")")),
    };
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.is_empty() {
        return Err("cpu_list: the list is empty".into());
    }
    Ok(cpus)
}

// Leaf parser: `into_variant` passes its message on, `Suite::parse` places it at file:line:col.
fn env(raw: BTreeMap<String, toml::Value>) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for (k, v) in raw {
        if !name_ok(&k, "_") || k.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(format!("env '{k}': variable names are letters, digits and '_'"));
        }
        out.insert(k.clone(), scalar_text(&format!("env {k}"), &v)?);
    }
    Ok(out)
}

// Leaf parser: `into_variant` passes its message on, `Suite::parse` places it at file:line:col.
fn command(key: &str, c: Option<String>) -> Result<Option<String>, String> {
    match c {
        Some(c) if c.trim().is_empty() => Err(format!("{key}: the command is empty")),
        other => Ok(other),
    }
}

impl RawVariant {
    /// Checks names and values; machine-dependent checks come when the run starts.
    /// Leaf parser: `Suite::parse` places its message at the variant's file:line:col.
    pub(crate) fn into_variant(self) -> Result<Variant, String> {
        if !name_ok(&self.name, "-_.") {
            return Err(format!("variant name '{}' must be letters, digits, '-', '_' or '.'", self.name));
        }
        let cpus = match self.cpus {
            None => None,
            Some(n) if (1..=4096).contains(&n) => Some(n as u32),
            Some(n) => return Err(format!("cpus = {n}: a CPU count is at least 1")),
        };
        let cpu_list = self.cpu_list.as_ref().map(cpu_list).transpose()?;
        if cpus.is_some() && cpu_list.is_some() {
            return Err("give cpus or cpu_list, not both".into());
        }
        if self.plugd.is_some() && (cpus.is_some() || cpu_list.is_some()) {
            return Err("a plugd variant lets the daemon choose the CPUs; remove cpus/cpu_list".into());
        }
        let mem_limit_bytes = self
            .mem_limit
            .as_deref()
            .map(super::values::mem_limit_value)
            .transpose()
            .map_err(|e| format!("mem_limit: {e}"))?;
        let volume = self.volume.map(|v| v.into_spec()).transpose()?;
        // A volume is mounted where the variant's disk workloads write.
        let dir = match (self.dir, &volume) {
            (Some(d), _) => Some(PathBuf::from(d)),
            (None, Some(_)) => Some(crate::volume::default_mount(&self.name)),
            (None, None) => None,
        };
        Ok(Variant {
            name: self.name,
            sysctl: sysctls(self.sysctl)?,
            block: self.block.map(block).transpose()?,
            sysfs: sysfs(self.sysfs)?,
            thp: self.thp,
            thp_defrag: self.thp_defrag,
            governor: self.governor,
            cpus,
            cpu_list,
            mem_limit_bytes,
            dir,
            env: env(self.env)?,
            before: command("before", self.before)?,
            after: command("after", self.after)?,
            plugd: self.plugd,
            volume,
        })
    }
}

/// Shuffles `items` in place (Fisher–Yates) from `seed`.
pub fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut rng = racehorse_core::rng::SplitMix64::new(seed);
    for i in (1..items.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Leaf (a test helper): the tests read its message.
    fn parse(text: &str) -> Result<Variant, String> {
        let raw: RawVariant = toml::from_str(text).map_err(|e| e.to_string())?;
        raw.into_variant()
    }

    #[test]
    fn every_knob_parses() {
        let v = parse(
            "name = \"all\"\nsysctl = { \"vm.swappiness\" = 10 }\nblock = { device = \"vda\", read_ahead_kb = 128, scheduler = \"none\" }\n\
             sysfs = { \"/sys/kernel/mm/ksm/run\" = 0 }\nthp = \"never\"\nthp_defrag = \"never\"\ngovernor = \"performance\"\n\
             cpu_list = \"0-1\"\nmem_limit = \"512M\"\ndir = \"/mnt/x\"\nenv = { LANG = \"C\", N = 2 }\nbefore = \"true\"\nafter = \"true\"\n",
        )
        .unwrap();
        assert_eq!(v.sysctl["vm.swappiness"], "10");
        let b = v.block.as_ref().unwrap();
        assert_eq!((b.device.as_deref(), b.queue["read_ahead_kb"].as_str()), (Some("vda"), "128"));
        assert_eq!(v.sysfs["/sys/kernel/mm/ksm/run"], "0");
        assert_eq!((v.cpu_list.clone(), v.mem_limit_bytes), (Some(vec![0, 1]), Some(512 << 20)));
        assert_eq!(v.env["N"], "2");
        assert!(!v.is_plain());
        let d = v.describe();
        assert!(
            d.contains(&"block vda read_ahead_kb=128".to_string()) && d.contains(&"cpu_list=0-1".to_string()),
            "{d:?}"
        );
        assert!(parse("name = \"p\"").unwrap().is_plain());
    }

    #[test]
    fn bad_knobs_are_refused_with_the_key() {
        for (text, want) in [
            ("name = \"a b\"", "variant name"),
            ("name = \"a\"\nsysctl = { \"../x\" = 1 }", "sysctl name"),
            ("name = \"a\"\nblock = { device = \"vda\" }", "at least one queue setting"),
            ("name = \"a\"\nblock = { \"a/b\" = 1 }", "queue attribute"),
            ("name = \"a\"\nsysfs = { \"/etc/passwd\" = 1 }", "under /sys"),
            ("name = \"a\"\nsysfs = { \"/sys/../etc\" = 1 }", "under /sys"),
            ("name = \"a\"\ncpus = 0", "at least 1"),
            ("name = \"a\"\ncpus = 1\ncpu_list = [0]", "not both"),
            ("name = \"a\"\ncpu_list = \"x\"", "cpu_list"),
            ("name = \"a\"\nmem_limit = \"1k\"", "mem_limit"),
            ("name = \"a\"\nenv = { \"A-B\" = 1 }", "env"),
            ("name = \"a\"\nbefore = \" \"", "before"),
            ("name = \"a\"\nswappiness = 1", "unknown field"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn shuffle_is_a_seeded_permutation() {
        let mut a: Vec<u32> = (0..50).collect();
        let mut b = a.clone();
        shuffle(&mut a, 7);
        shuffle(&mut b, 7);
        assert_eq!(a, b, "same seed, same order");
        let mut c: Vec<u32> = (0..50).collect();
        shuffle(&mut c, 8);
        assert_ne!(a, c, "another seed, another order");
        a.sort_unstable();
        assert_eq!(a, (0..50).collect::<Vec<u32>>());
    }
}
