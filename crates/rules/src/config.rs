//! cpuplugd.conf as a whole: keys, numbers, rules, user variables, and the final checks
//! (UPDATE present, CPU limits ordered, CPU or memory control complete).

mod lines;

use crate::expr::{Expr, Site, Ty};
use crate::names::Name;
use crate::parser::{Env, ExprError};
use crate::source::Source;
use crate::ConfigError;
use lines::{warning, Entry};
use std::collections::{BTreeMap, HashMap};

pub use lines::{MAX_LINE, MAX_VAR_NAME};

/// The settings cpuplugd knows; any other name defines a user variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    Update,
    CpuMin,
    CpuMax,
    Hotplug,
    Hotunplug,
    CmmMin,
    CmmMax,
    CmmInc,
    CmmDec,
    Memplug,
    Memunplug,
}

impl Key {
    pub const ALL: [Key; 11] = [
        Key::Update,
        Key::CpuMin,
        Key::CpuMax,
        Key::Hotplug,
        Key::Hotunplug,
        Key::CmmMin,
        Key::CmmMax,
        Key::CmmInc,
        Key::CmmDec,
        Key::Memplug,
        Key::Memunplug,
    ];

    /// The canonical (upper-case) spelling.
    pub fn name(self) -> &'static str {
        match self {
            Key::Update => "UPDATE",
            Key::CpuMin => "CPU_MIN",
            Key::CpuMax => "CPU_MAX",
            Key::Hotplug => "HOTPLUG",
            Key::Hotunplug => "HOTUNPLUG",
            Key::CmmMin => "CMM_MIN",
            Key::CmmMax => "CMM_MAX",
            Key::CmmInc => "CMM_INC",
            Key::CmmDec => "CMM_DEC",
            Key::Memplug => "MEMPLUG",
            Key::Memunplug => "MEMUNPLUG",
        }
    }
}

/// A rule as written and parsed. `"0"` (the documented "never") is a rule that is always false.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// The text between the quotes, as written.
    pub text: String,
    /// 1-based line number.
    pub line: usize,
    pub expr: Expr,
}

/// A parsed and validated cpuplugd.conf.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Config {
    pub update_s: Option<u64>,
    pub cpu_min: Option<u32>,
    /// Some(0) = all present CPUs (resolved by the daemon).
    pub cpu_max: Option<u32>,
    pub hotplug: Option<Rule>,
    pub hotunplug: Option<Rule>,
    /// 4 KiB pages.
    pub cmm_min: Option<u64>,
    pub cmm_max: Option<u64>,
    /// Numeric expression (pages).
    pub cmm_inc: Option<Rule>,
    /// Numeric; None = same as `cmm_inc`.
    pub cmm_dec: Option<Rule>,
    pub memplug: Option<Rule>,
    pub memunplug: Option<Rule>,
    /// User variables in file order: (name, text as written).
    pub vars: Vec<(String, String)>,
    /// Things upstream would read differently (a variable `update_rate`, which upstream's prefix
    /// matching reads as UPDATE; a repeated key, where the last wins; unary operators), plus
    /// ignored lines and controls left off; each "line L, column C: ...".
    pub warnings: Vec<String>,
}

impl Config {
    /// CPU control is on when cpu_min, cpu_max, hotplug and hotunplug are all set.
    pub fn cpu_control(&self) -> bool {
        self.cpu_missing().is_empty()
    }

    /// Memory control (rules side): cmm_min, cmm_max, cmm_inc, memplug, memunplug set and
    /// cmm_max >= cmm_min.
    pub fn memory_rules(&self) -> bool {
        self.memory_missing().is_empty() && self.cmm_max >= self.cmm_min
    }

    fn cpu_missing(&self) -> Vec<&'static str> {
        let set = [
            self.cpu_min.is_some(),
            self.cpu_max.is_some(),
            self.hotplug.is_some(),
            self.hotunplug.is_some(),
        ];
        missing(&set, &[Key::CpuMin, Key::CpuMax, Key::Hotplug, Key::Hotunplug])
    }

    fn memory_missing(&self) -> Vec<&'static str> {
        let set = [
            self.cmm_min.is_some(),
            self.cmm_max.is_some(),
            self.cmm_inc.is_some(),
            self.memplug.is_some(),
            self.memunplug.is_some(),
        ];
        missing(&set, &[Key::CmmMin, Key::CmmMax, Key::CmmInc, Key::Memplug, Key::Memunplug])
    }

    /// The rules that are set, with their key names, in key order.
    pub fn rules(&self) -> Vec<(&'static str, &Rule)> {
        let all = [
            ("HOTPLUG", &self.hotplug),
            ("HOTUNPLUG", &self.hotunplug),
            ("CMM_INC", &self.cmm_inc),
            ("CMM_DEC", &self.cmm_dec),
            ("MEMPLUG", &self.memplug),
            ("MEMUNPLUG", &self.memunplug),
        ];
        all.into_iter().filter_map(|(k, r)| r.as_ref().map(|r| (k, r))).collect()
    }

    /// The rule that shrinks the balloon: CMM_DEC, or CMM_INC when CMM_DEC is not set.
    pub fn cmm_dec_or_inc(&self) -> Option<&Rule> {
        self.cmm_dec.as_ref().or(self.cmm_inc.as_ref())
    }

    /// Largest `[N]` used by any rule (min 1); more than 100 is a load error already.
    pub fn history_depth(&self) -> usize {
        self.names().into_values().max().unwrap_or(0).max(1)
    }

    /// Union of every rule's names (deepest index each).
    pub fn names(&self) -> BTreeMap<Name, usize> {
        let mut map = BTreeMap::new();
        for (_, rule) in self.rules() {
            rule.expr.collect_names(&mut map);
        }
        map
    }

    /// Every name the rules read with where it is written, by line and column, each place
    /// once (a name inside a variable is at its place in the variable's line).
    pub fn name_sites(&self) -> Vec<(Name, Site)> {
        let mut all: Vec<(Name, Site)> = self.rules().iter().flat_map(|(_, r)| r.expr.sites()).collect();
        all.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        all.dedup();
        all
    }
}

fn missing(set: &[bool], keys: &[Key]) -> Vec<&'static str> {
    set.iter().zip(keys).filter(|(s, _)| !**s).map(|(_, k)| k.name()).collect()
}

/// Parses and validates a whole config file (no I/O). See the crate docs for the rules.
pub fn parse_config(text: &str) -> Result<Config, ConfigError> {
    parse_config_over(&Config::default(), text)
}

/// Like [`parse_config`], but starting from `base` as upstream's reload (SIGHUP) does: keys the
/// new text does not set keep their values from `base`; variables and warnings start empty.
pub fn parse_config_over(base: &Config, text: &str) -> Result<Config, ConfigError> {
    let lines = lines::read_lines(text)?;
    let mut cfg = Config { vars: Vec::new(), warnings: lines.warnings, ..base.clone() };
    let var_sources =
        lines.entries.iter().filter(|e| e.key.is_none()).map(|e| (e.name.clone(), e.value.clone()));
    let mut env = Env::new(var_sources);
    let mut at: HashMap<Key, (usize, usize)> = HashMap::new();
    for entry in &lines.entries {
        match entry.key {
            None => {
                env.parse_var(&entry.name).map_err(|e| locate(&env, &entry.value, e))?;
                cfg.vars.push((entry.name.clone(), entry.raw.clone()));
            }
            Some(key) => {
                at.insert(key, (entry.line, entry.value.col(0)));
                apply(&mut cfg, key, entry, &mut env)?;
            }
        }
        flush_notes(&mut env, &entry.value, &mut cfg.warnings);
    }
    check(&mut cfg, &at, lines.eof)?;
    Ok(cfg)
}

/// Turns the parser's notes into warnings; notes without a variable belong to `top`.
fn flush_notes(env: &mut Env, top: &Source, warnings: &mut Vec<String>) {
    for note in std::mem::take(&mut env.notes) {
        let src = note.var.as_deref().and_then(|v| env.source(v)).unwrap_or(top);
        warnings.push(warning(src.line, src.col(note.pos), &note.message));
    }
}

/// Maps a parser error to the line and column of the text it occurred in.
fn locate(env: &Env, top: &Source, e: ExprError) -> ConfigError {
    let src = e.var.as_deref().and_then(|v| env.source(v)).unwrap_or(top);
    ConfigError::at(src.line, src.col(e.pos), e.message)
}

fn apply(cfg: &mut Config, key: Key, entry: &Entry, env: &mut Env) -> Result<(), ConfigError> {
    match key {
        Key::Update => cfg.update_s = Some(count(key, &entry.value)?),
        Key::CpuMin => cfg.cpu_min = Some(count32(key, &entry.value)?),
        Key::CpuMax => cfg.cpu_max = Some(count32(key, &entry.value)?),
        Key::CmmMin => cfg.cmm_min = Some(count(key, &entry.value)?),
        Key::CmmMax => cfg.cmm_max = Some(count(key, &entry.value)?),
        _ => {
            let rule = rule(key, entry, env)?;
            let slot = match key {
                Key::Hotplug => &mut cfg.hotplug,
                Key::Hotunplug => &mut cfg.hotunplug,
                Key::CmmInc => &mut cfg.cmm_inc,
                Key::CmmDec => &mut cfg.cmm_dec,
                Key::Memplug => &mut cfg.memplug,
                _ => &mut cfg.memunplug,
            };
            *slot = rule;
        }
    }
    Ok(())
}

/// A rule key's value: `""` is "not set"; CMM_INC and CMM_DEC must be numeric.
fn rule(key: Key, entry: &Entry, env: &mut Env) -> Result<Option<Rule>, ConfigError> {
    let value = &entry.value;
    if value.text.is_empty() {
        return Ok(None);
    }
    let parsed = env.parse_top(value).map_err(|e| locate(env, value, e))?;
    if matches!(key, Key::CmmInc | Key::CmmDec) && parsed.expr.ty() == Ty::Bool {
        let msg = format!("{} must be a number of pages, but `{}` is a boolean", key.name(), parsed.expr);
        return Err(ConfigError::at(entry.line, value.col(0), msg));
    }
    Ok(Some(Rule { text: entry.raw.clone(), line: entry.line, expr: parsed.expr }))
}

/// A digits-only count; `""` is 0. Errors name the key.
fn count(key: Key, value: &Source) -> Result<u64, ConfigError> {
    let text = &value.text;
    if text.is_empty() {
        return Ok(0);
    }
    if let Some((i, _)) = text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        let msg = format!("{}: `{text}` is not a whole number (digits only)", key.name());
        return Err(ConfigError::at(value.line, value.col(i), msg));
    }
    text.parse::<u64>().map_err(|_| {
        ConfigError::at(value.line, value.col(0), format!("{}: `{text}` is too large", key.name()))
    })
}

fn count32(key: Key, value: &Source) -> Result<u32, ConfigError> {
    let n = count(key, value)?;
    u32::try_from(n).map_err(|_| {
        ConfigError::at(value.line, value.col(0), format!("{}: `{}` is too large", key.name(), value.text))
    })
}

/// Whole-file checks: UPDATE, CPU limits, and that at least one control is complete.
fn check(
    cfg: &mut Config,
    at: &HashMap<Key, (usize, usize)>,
    eof: (usize, usize),
) -> Result<(), ConfigError> {
    let pos = |key: Key| at.get(&key).copied().unwrap_or(eof);
    let err = |(line, column): (usize, usize), message: String| ConfigError { line, column, message };
    match cfg.update_s {
        None => {
            return Err(err(eof, "UPDATE is missing (seconds between samples, as in UPDATE=\"1\")".into()))
        }
        Some(0) => return Err(err(pos(Key::Update), "UPDATE must be at least 1 (seconds)".into())),
        Some(_) => {}
    }
    if cfg.cpu_min == Some(0) {
        return Err(err(pos(Key::CpuMin), "CPU_MIN must be at least 1".into()));
    }
    if let (Some(min), Some(max)) = (cfg.cpu_min, cfg.cpu_max) {
        if max != 0 && max < min {
            let at = if at.contains_key(&Key::CpuMax) { pos(Key::CpuMax) } else { pos(Key::CpuMin) };
            let msg =
                format!("CPU_MAX ({max}) is less than CPU_MIN ({min}); CPU_MAX=\"0\" means all present CPUs");
            return Err(err(at, msg));
        }
    }
    let (cpu_missing, mem_missing) = (cfg.cpu_missing(), cfg.memory_missing());
    let mem_why = if !mem_missing.is_empty() {
        format!("memory control is missing {}", mem_missing.join(", "))
    } else {
        let (min, max) = (cfg.cmm_min.unwrap_or(0), cfg.cmm_max.unwrap_or(0));
        format!("memory control is off because CMM_MAX ({max}) is less than CMM_MIN ({min})")
    };
    let cpu_why = format!("CPU control is missing {}", cpu_missing.join(", "));
    match (cfg.cpu_control(), cfg.memory_rules()) {
        (false, false) => {
            Err(err(eof, format!("neither CPU nor memory control is complete: {cpu_why}; {mem_why}")))
        }
        (true, false) => {
            let present = [Key::CmmMin, Key::CmmMax, Key::CmmInc, Key::CmmDec, Key::Memplug, Key::Memunplug];
            if let Some(first) = present.iter().filter_map(|k| at.get(k)).min() {
                cfg.warnings.push(warning(first.0, first.1, &format!("{mem_why}; only CPU control is on")));
            }
            Ok(())
        }
        (false, true) => {
            let present = [Key::CpuMin, Key::CpuMax, Key::Hotplug, Key::Hotunplug];
            if let Some(first) = present.iter().filter_map(|k| at.get(k)).min() {
                cfg.warnings.push(warning(
                    first.0,
                    first.1,
                    &format!("{cpu_why}; only memory control is on"),
                ));
            }
            Ok(())
        }
        (true, true) => Ok(()),
    }
}

#[cfg(test)]
mod tests;
