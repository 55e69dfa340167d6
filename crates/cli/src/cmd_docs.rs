//! `racehorse completions SHELL` and `racehorse man [--dir DIR]`: shell completion scripts and
//! man pages generated from the same clap command the binary parses with (`full_command`,
//! `run`'s engine shortcut flags included).

use crate::args::{CompletionsArgs, ManArgs};
use crate::{full_command, CmdResult, Failure};
use anyhow::Context;
use std::io::Write;
use std::path::{Path, PathBuf};

pub fn completions(a: &CompletionsArgs) -> CmdResult {
    let mut cmd = full_command();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(a.shell, &mut cmd, "racehorse", &mut out);
    out.flush().context("writing the completion script")?;
    Ok(0)
}

/// The command as the man pages show it: built (globals propagated, subcommand names
/// `racehorse-run` …) and without clap's `help` subcommand.
fn man_command() -> clap::Command {
    let mut cmd = full_command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// The command's after-help ("Examples:\n  …", "Exit codes:\n  …") as a man page section of
/// its own, lines kept as they are (clap_mangen would fill them into one paragraph).
fn after_help_section(text: &str) -> String {
    let (title, body) = match text.split_once('\n') {
        Some((head, body)) if head.ends_with(':') => (head.trim_end_matches(':').to_uppercase(), body),
        _ => ("NOTES".to_string(), text),
    };
    let title = if title == "EXIT CODES" { "EXIT STATUS".to_string() } else { title };
    let mut r = roff::Roff::new();
    r.control("SH", [title.as_str()]).control("nf", []);
    for line in body.lines() {
        r.text([roff::roman(line)]);
    }
    r.control("fi", []);
    // The page already starts with roff's apostrophe definitions; leave out the repeat.
    r.render()
        .lines()
        .filter(|l| !l.starts_with(".ie ") && !l.starts_with(".el "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// One man page in roff: clap_mangen's sections, then the after-help section; and its file
/// name (`racehorse-run.1` for a built subcommand).
pub fn page(cmd: &clap::Command) -> std::io::Result<(String, Vec<u8>)> {
    let after = cmd.get_after_help().map(|s| s.to_string());
    let man = clap_mangen::Man::new(cmd.clone().after_help(None::<&str>))
        .source(format!("racehorse {}", env!("CARGO_PKG_VERSION")));
    let mut buf = Vec::new();
    man.render(&mut buf)?;
    if let Some(text) = after {
        buf.extend_from_slice(after_help_section(&text).as_bytes());
    }
    Ok((man.get_filename(), buf))
}

/// Writes one page per visible command, the top one as `racehorse.1`, its subcommands as
/// `racehorse-run.1`, `racehorse-plugd-check.1` …; returns the files written.
pub fn write_pages(cmd: &clap::Command, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        written.extend(write_pages(sub, dir)?);
    }
    let (name, text) = page(cmd)?;
    let path = dir.join(name);
    racehorse_store::files::write_atomic(&path, &text)?;
    written.push(path);
    Ok(written)
}

pub fn man(a: &ManArgs) -> CmdResult {
    let cmd = man_command();
    let Some(dir) = &a.dir else {
        let (_, text) = page(&cmd).context("rendering the man page")?;
        let mut out = std::io::stdout().lock();
        out.write_all(&text).and_then(|_| out.flush()).context("writing the man page")?;
        return Ok(0);
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::usage(format!("--dir {}: cannot create it: {e}", dir.display())))?;
    let pages = write_pages(&cmd, dir).with_context(|| format!("writing man pages to {}", dir.display()))?;
    eprintln!("wrote {} man pages to {}", pages.len(), dir.display());
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Every command of the tree (built, so globals are propagated), with its path.
    fn walk(cmd: &clap::Command, path: String, out: &mut Vec<(String, clap::Command)>) {
        for sub in cmd.get_subcommands() {
            walk(sub, format!("{path} {}", sub.get_name()), out);
        }
        out.push((path, cmd.clone()));
    }

    fn all_commands() -> Vec<(String, clap::Command)> {
        let mut cmd = full_command();
        cmd.build();
        let mut out = Vec::new();
        walk(&cmd, "racehorse".into(), &mut out);
        out
    }

    /// The short flags of one command (short aliases and hidden flags included): letter →
    /// argument id, and every letter that two arguments claim.
    fn shorts(cmd: &clap::Command) -> (BTreeMap<char, String>, Vec<String>) {
        let mut seen: BTreeMap<char, String> = BTreeMap::new();
        let mut twice = Vec::new();
        for arg in cmd.get_arguments() {
            let letters = arg.get_short().into_iter().chain(arg.get_all_short_aliases().unwrap_or_default());
            for c in letters {
                if let Some(other) = seen.insert(c, arg.get_id().to_string()) {
                    twice.push(format!("-{c} is both --{other} and --{}", arg.get_id()));
                }
            }
        }
        (seen, twice)
    }

    /// No command has two arguments answering to the same short flag, counting the globals
    /// (-q, -v) it inherits, clap's own -h and -V, short aliases and hidden flags.
    #[test]
    fn no_command_has_a_short_flag_twice() {
        let commands = all_commands();
        assert!(commands.len() > 15, "the walk found {} commands", commands.len());
        for (path, cmd) in &commands {
            let (_, twice) = shorts(cmd);
            assert!(twice.is_empty(), "`{path}`: {twice:?}");
        }
        // The check itself finds a clash (an unbuilt command: clap's own assertion would stop
        // a built one first).
        let clash = clap::Command::new("t")
            .arg(clap::Arg::new("quiet").short('q').action(clap::ArgAction::SetTrue))
            .arg(clap::Arg::new("query").short('x').short_alias('q').action(clap::ArgAction::SetTrue));
        assert_eq!(shorts(&clash).1, ["-q is both --quiet and --query"]);
    }

    /// A visible short flag means the same in a subcommand as in the commands above it (the
    /// hidden -V of plugd, cpuplugd's spelling of -v, is the one documented exception).
    #[test]
    fn no_visible_short_flag_changes_meaning_below() {
        let mut top = full_command();
        top.build();
        fn check(cmd: &clap::Command, above: &BTreeMap<char, String>, path: &str) {
            let (mine, _) = shorts(cmd);
            for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
                let Some(c) = arg.get_short() else { continue };
                if let Some(other) = above.get(&c).filter(|o| *o != arg.get_id().as_str()) {
                    panic!("`{path}`: -{c} is --{} here but --{other} above", arg.get_id());
                }
            }
            let mut merged = above.clone();
            merged.extend(mine);
            for sub in cmd.get_subcommands() {
                check(sub, &merged, &format!("{path} {}", sub.get_name()));
            }
        }
        check(&top, &BTreeMap::new(), "racehorse");
    }

    /// The walk sees the globals and the flags the conventions promise.
    #[test]
    fn globals_reach_every_subcommand() {
        for (path, cmd) in all_commands().into_iter().filter(|(p, _)| !p.split(' ').any(|w| w == "help")) {
            let shorts: Vec<char> = cmd.get_arguments().filter_map(|a| a.get_short()).collect();
            assert!(shorts.contains(&'q') && shorts.contains(&'v'), "`{path}` lacks -q/-v: {shorts:?}");
        }
        let plugd = all_commands().into_iter().find(|(p, _)| p == "racehorse plugd").expect("plugd");
        let v = plugd.1.get_arguments().find(|a| a.get_short() == Some('V')).expect("plugd -V");
        assert!(v.is_hide_set(), "plugd's cpuplugd-style -V stays out of the help");
    }

    /// The exit codes of `--help` are the rows of docs/cli.md's table, the one place that
    /// lists them: README links it instead of repeating it.
    #[test]
    fn exit_codes_are_documented_once() {
        let readme = include_str!("../../../README.md");
        let cli_doc = include_str!("../../../docs/cli.md");
        let codes: Vec<&str> = crate::args::EXIT_CODES
            .lines()
            .skip(1)
            .filter_map(|l| {
                l.split_whitespace().next().filter(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
            })
            .collect();
        assert_eq!(codes, ["0", "1", "2", "3", "4", "75", "128+N"]);
        assert_eq!(racehorse_runner::error::NOT_RESTORED_EXIT, 4, "the runner's code is the documented one");
        for code in codes {
            let row = format!("\n| {code} |");
            assert!(cli_doc.contains(&row), "exit code {code} is missing from docs/cli.md's table");
            assert!(
                !readme.contains(&row),
                "README repeats exit code {code}; link docs/cli.md#exit-codes instead"
            );
        }
        assert!(readme.contains("(docs/cli.md#exit-codes)"), "README links docs/cli.md's exit codes");
        assert!(cli_doc.contains("\n## Exit codes\n"), "docs/cli.md keeps the heading the links name");
    }

    #[test]
    fn every_shell_gets_a_script_with_the_engine_shortcuts() {
        for shell in [
            clap_complete::Shell::Bash,
            clap_complete::Shell::Zsh,
            clap_complete::Shell::Fish,
            clap_complete::Shell::Elvish,
            clap_complete::Shell::PowerShell,
        ] {
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut full_command(), "racehorse", &mut buf);
            let text = String::from_utf8(buf).expect("utf-8");
            // fish names long flags `-l NAME`; the others `--NAME`.
            let long = |name: &str| match shell {
                clap_complete::Shell::Fish => format!("-l {name}"),
                _ => format!("--{name}"),
            };
            for word in
                ["racehorse".to_string(), "completions".into(), long("clients"), long("verbose"), long("pg")]
            {
                assert!(text.contains(&word), "{shell}: no '{word}' in the script");
            }
        }
    }

    #[test]
    fn man_pages_one_per_command_with_shortcuts_and_exit_codes() {
        let dir = tempfile::tempdir().unwrap();
        let pages = write_pages(&man_command(), dir.path()).unwrap();
        let names: Vec<String> =
            pages.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        for want in ["racehorse.1", "racehorse-run.1", "racehorse-plugd.1", "racehorse-plugd-check.1"] {
            assert!(names.iter().any(|n| n == want), "{want} missing from {names:?}");
        }
        assert!(!names.iter().any(|n| n.contains("help")), "{names:?}");
        let top = std::fs::read_to_string(dir.path().join("racehorse.1")).unwrap();
        assert!(top.starts_with(".ie") || top.contains(".TH racehorse 1"), "{top}");
        assert!(top.contains(".SH \"EXIT STATUS\"\n.nf\n") && top.contains("75"), "{top}");
        assert!(!top.contains("EXTRA"), "the after-help is its own section: {top}");
        let run = std::fs::read_to_string(dir.path().join("racehorse-run.1")).unwrap();
        assert!(run.contains("clients") && run.contains(".SH EXAMPLES\n.nf\n"), "{run}");
        assert!(run.contains("racehorse run quick \\-\\-dry\\-run"), "flags keep their minus signs: {run}");
    }
}
