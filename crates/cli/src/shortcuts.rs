//! The parts of `racehorse run`'s command line that come from the engines' descriptions:
//! the shortcut flags (`--clients`, `--pg`, `--cc` …, each setting an engine option), the help
//! of WHAT (presets and workloads) and of the words after `--`. Nothing here names an engine:
//! a new engine's shortcuts appear by declaring them in its `EngineInfo`.

use clap::{Arg, ArgAction, ArgMatches};
use racehorse_engines::{Engine, Shortcut, ShortcutForm};

/// Engine option values from the command line: (option, raw values), in flag order.
pub type OptionValues = Vec<(String, Vec<String>)>;

/// The id of the trailing words after `--` in `RunArgs`.
const TRAILING_ID: &str = "program";

/// The distinct flag shortcuts of these engines, in first-declared order, each with the
/// engines that answer to it.
pub fn flags(engines: &[&dyn Engine]) -> Vec<(Shortcut, Vec<&'static str>)> {
    let mut out: Vec<(Shortcut, Vec<&'static str>)> = Vec::new();
    for e in engines {
        for s in e.info().shortcuts.iter().filter(|s| s.form != ShortcutForm::Trailing) {
            match out.iter_mut().find(|(known, _)| known.flag == s.flag) {
                Some((_, names)) => names.push(e.name()),
                None => out.push((*s, vec![e.name()])),
            }
        }
    }
    out
}

/// Engines that declare the same flag must declare it the same way (option and form), and
/// no flag may be one of `run`'s own; the message names the conflict. The registry test runs
/// it over every engine.
#[cfg(test)]
pub fn check_consistent(engines: &[&dyn Engine], own_flags: &[&str]) -> Result<(), String> {
    let mut seen: Vec<(&'static str, Shortcut)> = Vec::new();
    for e in engines {
        for s in e.info().shortcuts {
            if e.info().option(s.option).is_none() {
                return Err(format!("{}: shortcut for unknown option '{}'", e.name(), s.option));
            }
            if s.form == ShortcutForm::Trailing {
                continue;
            }
            if own_flags.contains(&s.flag) {
                return Err(format!("{}: --{} is already a flag of `racehorse run`", e.name(), s.flag));
            }
            if let Some((other, first)) = seen.iter().find(|(_, k)| k.flag == s.flag) {
                if first.option != s.option || first.form != s.form {
                    return Err(format!("--{}: {} and {} declare it differently", s.flag, other, e.name()));
                }
            }
            seen.push((e.name(), *s));
        }
    }
    Ok(())
}

/// One clap argument per distinct shortcut flag; its help names the workloads it applies to.
fn flag_arg(s: &Shortcut, engines: &[&'static str]) -> Arg {
    let help = format!(
        "{} (option `{}` of {}; the same as -o {}=…)",
        s.help,
        s.option,
        engines.join(", "),
        s.option
    );
    let arg = Arg::new(s.flag).long(s.flag).help(help).help_heading("Workload shortcuts");
    match s.form {
        ShortcutForm::Switch => arg.action(ArgAction::SetTrue),
        ShortcutForm::List => arg.value_name(s.value_name).value_delimiter(',').action(ArgAction::Append),
        ShortcutForm::Whole => arg.value_name(s.value_name).action(ArgAction::Set),
        ShortcutForm::Repeat => {
            arg.value_name(s.value_name).allow_hyphen_values(true).action(ArgAction::Append)
        }
        ShortcutForm::Trailing => arg,
    }
}

/// The help of WHAT: the presets and the workloads, from the lists themselves.
pub fn what_help(engines: &[&dyn Engine], presets: &[&str]) -> String {
    let names: Vec<&str> = engines.iter().map(|e| e.name()).collect();
    format!(
        "What to run: a preset ({}), a workload (see `racehorse workloads`: {}), or a suite .toml \
         file; a preset wins over a workload of the same name",
        presets.join(", "),
        names.join(", ")
    )
}

/// The help of the words after `--`, from the engines that take them.
fn trailing_help(engines: &[&dyn Engine]) -> String {
    let takers: Vec<String> = engines
        .iter()
        .flat_map(|e| {
            e.info().shortcuts.iter().filter(|s| s.form == ShortcutForm::Trailing).map(|s| (e.name(), s))
        })
        .map(|(name, s)| format!("{name}: {} (option `{}`)", s.help, s.option))
        .collect();
    format!("Words after -- for workloads that run a program; {}", takers.join("; "))
}

/// `racehorse run` with the shortcut flags and the generated help added.
pub fn augment(run: clap::Command, engines: &[&dyn Engine], presets: &[&str]) -> clap::Command {
    let mut run = run
        .mut_arg("what", |a| a.help(what_help(engines, presets)))
        .mut_arg(TRAILING_ID, |a| a.help(trailing_help(engines)));
    for (s, names) in flags(engines) {
        run = run.arg(flag_arg(&s, &names));
    }
    run
}

/// The option values the shortcut flags of a parsed `racehorse run` give: (option, raw values).
pub fn values(m: &ArgMatches, engines: &[&dyn Engine]) -> OptionValues {
    let mut out = Vec::new();
    for (s, _) in flags(engines) {
        let raw: Vec<String> = match s.form {
            ShortcutForm::Switch if m.get_flag(s.flag) => vec!["true".to_string()],
            ShortcutForm::Switch | ShortcutForm::Trailing => continue,
            _ => m.get_many::<String>(s.flag).map(|v| v.cloned().collect()).unwrap_or_default(),
        };
        if !raw.is_empty() {
            out.push((s.option.to_string(), raw));
        }
    }
    out
}

/// The option the words after `--` set, for a run of WHAT: the trailing shortcut of the
/// engine named WHAT; otherwise an error naming the workloads that take a program.
pub fn trailing_option(engines: &[&dyn Engine], what: &str) -> Result<&'static str, String> {
    let trailing = |e: &&dyn Engine| e.info().shortcuts.iter().find(|s| s.form == ShortcutForm::Trailing);
    if let Some(s) = engines.iter().filter(|e| e.name() == what).find_map(&trailing) {
        return Ok(s.option);
    }
    let takers: Vec<String> = engines
        .iter()
        .filter(|e| trailing(e).is_some())
        .map(|e| format!("`racehorse run {}`", e.name()))
        .collect();
    Err(format!("a program after -- is for {}, not '{what}'", takers.join(" or ")))
}

#[cfg(test)]
#[path = "shortcuts_tests.rs"]
mod tests;
