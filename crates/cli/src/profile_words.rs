//! `run --profile callgraph=dwarf`: the one place where a word after `--profile` is its value.
//! `--profile` takes its settings with `=` (`--profile=callgraph=dwarf`), so that
//! `run --profile quick` keeps `quick` as what to run; a following word is joined to it only
//! when it is settings (starts with `callgraph=` or `freq=`), before clap sees the line.

use racehorse_runner::profile::is_spec_word;
use std::ffi::OsString;

/// The command line with `--profile SETTINGS` written as `--profile=SETTINGS`; words after
/// `--` (a program's) are left alone.
pub fn join_profile_settings(words: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut out: Vec<OsString> = Vec::new();
    let mut words = words.into_iter().peekable();
    while let Some(word) = words.next() {
        if word == "--" {
            out.push(word);
            out.extend(words);
            break;
        }
        let settings = words.peek().and_then(|w| w.to_str()).filter(|w| is_spec_word(w)).map(str::to_string);
        match settings {
            Some(s) if word == "--profile" => {
                words.next();
                out.push(format!("--profile={s}").into());
            }
            _ => out.push(word),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command};
    use clap::{CommandFactory, FromArgMatches};

    fn joined(line: &str) -> Vec<String> {
        let words = line.split(' ').map(OsString::from);
        join_profile_settings(words).into_iter().map(|w| w.to_string_lossy().into_owned()).collect()
    }

    /// (what, --profile, --keep-profile) as parsed from `line`.
    fn parsed(line: &str) -> Result<(String, Option<String>, Option<String>), clap::Error> {
        let m = Cli::command()
            .try_get_matches_from(join_profile_settings(line.split(' ').map(OsString::from)))?;
        match Cli::from_arg_matches(&m)?.command {
            Command::Run(a) => Ok((a.what, a.profile, a.keep_profile.map(|p| p.display().to_string()))),
            _ => panic!("not a run: {line}"),
        }
    }

    #[test]
    fn settings_words_are_joined_and_others_kept() {
        assert_eq!(
            joined("racehorse run --profile callgraph=dwarf quick"),
            ["racehorse", "run", "--profile=callgraph=dwarf", "quick"]
        );
        assert_eq!(
            joined("racehorse run --profile freq=99 quick"),
            ["racehorse", "run", "--profile=freq=99", "quick"]
        );
        assert_eq!(joined("racehorse run --profile quick"), ["racehorse", "run", "--profile", "quick"]);
        assert_eq!(
            joined("racehorse run command -- --profile callgraph=x"),
            ["racehorse", "run", "command", "--", "--profile", "callgraph=x"]
        );
        assert_eq!(joined("racehorse run quick --profile"), ["racehorse", "run", "quick", "--profile"]);
    }

    #[test]
    fn every_spelling_parses_as_documented() {
        let p = |line: &str| parsed(line).unwrap();
        assert_eq!(p("racehorse run --profile quick"), ("quick".into(), Some(String::new()), None));
        assert_eq!(p("racehorse run quick --profile"), ("quick".into(), Some(String::new()), None));
        assert_eq!(p("racehorse run --profile callgraph=dwarf quick").1.as_deref(), Some("callgraph=dwarf"));
        assert_eq!(
            p("racehorse run --profile=callgraph=lbr,freq=99 quick").1.as_deref(),
            Some("callgraph=lbr,freq=99")
        );
        let keep = p("racehorse run null --profile --keep-profile /tmp/k");
        assert_eq!(keep, ("null".into(), Some(String::new()), Some("/tmp/k".into())));
        assert_eq!(p("racehorse run null").1, None);
    }

    #[test]
    fn a_stray_settings_word_is_not_taken_for_the_workload() {
        // Without --profile before it, `callgraph=dwarf` is what to run (and later unknown).
        assert_eq!(parsed("racehorse run callgraph=dwarf").unwrap().0, "callgraph=dwarf");
        assert!(parsed("racehorse run --profile callgraph=dwarf").is_err(), "what to run is still required");
    }
}
