//! Tests of the generated command line, with a toy engine added beside the registry the way
//! a new engine is: its module declares an `EngineInfo`, and nothing in the binary changes.

use super::*;
use crate::args::{Cli, Command};
use clap::{CommandFactory, FromArgMatches};
use racehorse_core::WorkUnit;
use racehorse_engines::info::shortcuts::CLIENTS;
use racehorse_engines::{registry, CellContext, EngineError, EngineInfo, OptKind, OptionSpec, Workload};

/// A toy engine, as a new module would declare it.
struct Toy;

const TOY_OPTIONS: &[OptionSpec] = &[
    OptionSpec { name: "clients", kind: OptKind::Int { min: 1, max: 8 }, default: "1", help: "toy clients" },
    OptionSpec { name: "level", kind: OptKind::Int { min: 0, max: 9 }, default: "0", help: "toy level" },
    OptionSpec { name: "script", kind: OptKind::Str, default: "", help: "toy script" },
];

static TOY: EngineInfo = EngineInfo {
    name: "toy",
    about: "a toy engine for the registry test",
    area: "Other",
    summary_area: racehorse_engines::AreaRule::Fixed(racehorse_engines::SummaryArea::Other),
    unit: WorkUnit::Ops,
    caps: racehorse_engines::Caps::NONE,
    options: TOY_OPTIONS,
    figures: &[],
    shortcuts: &[
        CLIENTS,
        Shortcut {
            flag: "level",
            option: "level",
            form: ShortcutForm::List,
            value_name: "L",
            help: "Toy levels",
        },
        Shortcut {
            flag: "",
            option: "script",
            form: ShortcutForm::Trailing,
            value_name: "WORDS",
            help: "toy words",
        },
    ],
};

impl Engine for Toy {
    fn info(&self) -> &'static EngineInfo {
        &TOY
    }
    fn prepare(&self, _ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        Err(EngineError::Failed("a toy".into()))
    }
}

fn with_toy() -> Vec<&'static dyn Engine> {
    let mut engines = registry().to_vec();
    engines.push(&Toy);
    engines
}

fn own_run_flags() -> Vec<String> {
    let cli = Cli::command();
    let run = cli.find_subcommand("run").expect("run");
    run.get_arguments().filter_map(|a| a.get_long().map(str::to_string)).collect()
}

fn parse(engines: &[&dyn Engine], words: &[&str]) -> Result<(Cli, OptionValues), clap::Error> {
    let cmd = Cli::command().mut_subcommand("run", |r| augment(r, engines, &["quick"]));
    let m = cmd.try_get_matches_from(words)?;
    let cli = Cli::from_arg_matches(&m)?;
    let vals = m.subcommand_matches("run").map(|r| values(r, engines)).unwrap_or_default();
    Ok((cli, vals))
}

#[test]
fn the_registrys_shortcuts_agree_and_leave_runs_own_flags_alone() {
    let own = own_run_flags();
    let own: Vec<&str> = own.iter().map(String::as_str).collect();
    check_consistent(registry(), &own).unwrap();
    let names: Vec<&str> = flags(registry()).iter().map(|(s, _)| s.flag).collect();
    for f in ["clients", "threads", "pg", "peer", "cc", "cflags", "destructive"] {
        assert!(names.contains(&f), "--{f} is generated: {names:?}");
    }
}

#[test]
fn the_shortcuts_set_options_as_before() {
    let (_, v) = parse(
        registry(),
        &[
            "racehorse",
            "run",
            "oltp",
            "--threads",
            "8,16",
            "--pg",
            "postgres://a,b",
            "--destructive",
            "--cflags=-O2",
            "--cflags",
            "-O3 -march=native",
        ],
    )
    .unwrap();
    let get = |o: &str| v.iter().find(|(n, _)| n == o).map(|(_, vals)| vals.clone());
    assert_eq!(get("threads"), Some(vec!["8".to_string(), "16".to_string()]));
    assert_eq!(get("pg"), Some(vec!["postgres://a,b".to_string()]), "taken whole");
    assert_eq!(get("destructive"), Some(vec!["true".to_string()]));
    assert_eq!(get("cflags"), Some(vec!["-O2".to_string(), "-O3 -march=native".to_string()]));
    assert_eq!(get("clients"), None, "an absent flag sets nothing");
}

#[test]
fn a_toy_engine_gets_its_flags_help_listing_and_docs_row_without_editing_the_binary() {
    let engines = with_toy();
    let own = own_run_flags();
    let own: Vec<&str> = own.iter().map(String::as_str).collect();
    check_consistent(&engines, &own).unwrap();
    let (cli, v) =
        parse(&engines, &["racehorse", "run", "toy", "--level", "1,2", "--clients", "3", "--", "echo", "hi"])
            .unwrap();
    assert_eq!(
        v,
        vec![
            ("clients".to_string(), vec!["3".to_string()]),
            ("level".to_string(), vec!["1".to_string(), "2".to_string()])
        ]
    );
    let Command::Run(a) = cli.command else { panic!("not a run") };
    assert_eq!(a.program, ["echo", "hi"]);
    assert_eq!(trailing_option(&engines, "toy"), Ok("script"));
    let refused = trailing_option(&engines, "null").unwrap_err();
    assert!(
        refused.contains("`racehorse run toy`") && refused.contains("`racehorse run command`"),
        "{refused}"
    );

    let mut cmd = Cli::command().mut_subcommand("run", |r| augment(r, &engines, &["quick"]));
    let help = cmd.find_subcommand_mut("run").unwrap().render_long_help().to_string();
    assert!(help.contains("--level") && help.contains("Toy levels") && help.contains("of toy"), "{help}");
    assert!(help.contains("toy: toy words"), "the words after -- name the toy: {help}");
    assert!(what_help(&engines, &["quick"]).contains("null, toy"));
    assert!(crate::cmd_workloads::docs_table(&engines)
        .contains("| `toy` | Other | ops | - | --clients, --level, -- WORDS |"));
}

#[test]
fn conflicting_or_dangling_shortcuts_are_caught() {
    struct Bad(&'static EngineInfo);
    impl Engine for Bad {
        fn info(&self) -> &'static EngineInfo {
            self.0
        }
        fn prepare(&self, _ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
            Err(EngineError::Failed("bad".into()))
        }
    }
    static CLASH: EngineInfo = EngineInfo {
        shortcuts: &[Shortcut {
            flag: "clients",
            option: "level",
            form: ShortcutForm::List,
            value_name: "",
            help: "",
        }],
        ..TOY
    };
    static DANGLING: EngineInfo = EngineInfo {
        shortcuts: &[Shortcut {
            flag: "x",
            option: "nope",
            form: ShortcutForm::Whole,
            value_name: "",
            help: "",
        }],
        ..TOY
    };
    static SHADOW: EngineInfo = EngineInfo {
        shortcuts: &[Shortcut {
            flag: "runtime",
            option: "level",
            form: ShortcutForm::Whole,
            value_name: "",
            help: "",
        }],
        ..TOY
    };
    let own = own_run_flags();
    let own: Vec<&str> = own.iter().map(String::as_str).collect();
    for (info, says) in [
        (&CLASH, "declare it differently"),
        (&DANGLING, "unknown option 'nope'"),
        (&SHADOW, "already a flag"),
    ] {
        let mut engines = registry().to_vec();
        let bad: &'static dyn Engine = Box::leak(Box::new(Bad(info)));
        engines.push(bad);
        let e = check_consistent(&engines, &own).unwrap_err();
        assert!(e.contains(says), "{e}");
    }
}
