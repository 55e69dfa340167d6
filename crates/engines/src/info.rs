//! The static description every engine declares once: name, words for people, unit, area,
//! capabilities, options and the command-line shortcuts its options answer to. The binary's
//! flags and help, `racehorse workloads`, the docs table and the generic checks before a run
//! are all generated from it, so that adding an engine never edits the binary.

use crate::options::OptionSpec;
use racehorse_core::WorkUnit;

/// An external program an engine runs; the runner checks it is on PATH before the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tool {
    /// The program's file name, looked up on PATH.
    pub program: &'static str,
    /// What to do when it is missing (a package to install, a built-in engine to use).
    pub hint: &'static str,
}

impl Tool {
    /// The error of a run that needs this tool where it is not installed.
    pub fn missing(&self) -> crate::EngineError {
        crate::EngineError::ToolMissing { tool: self.program.into(), hint: self.hint.into() }
    }
}

/// What an engine needs from the runner and the machine; each flag drives a generic check.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Caps {
    /// Writes files under the cell's work directory (the runner checks the directory).
    pub needs_disk: bool,
    /// Talks to a peer (a server process, a database) over the network: loopback must work.
    pub needs_peer: bool,
    /// Changes machine state itself (a memory cgroup, sysctls): the run needs root.
    pub changes_machine: bool,
    /// Runs an external program: it must be installed.
    pub external_tool: Option<Tool>,
    /// Can run paced (`support::pace`): its option table ends with `rate` and `qos`, and
    /// they are a usage error on every other engine.
    pub paced: bool,
}

impl Caps {
    /// No needs at all (the base of `Caps { needs_disk: true, ..Caps::NONE }` in statics).
    pub const NONE: Caps = Caps {
        needs_disk: false,
        needs_peer: false,
        changes_machine: false,
        external_tool: None,
        paced: false,
    };
}

/// How the values of a shortcut flag are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShortcutForm {
    /// `--flag 1,4,8`: comma-separated values; several are an axis.
    List,
    /// `--flag VALUE`: one value taken whole (commas included).
    Whole,
    /// `--flag V --flag W`: repeatable, each taken whole (leading hyphens allowed); several
    /// are an axis.
    Repeat,
    /// `--flag`: no value; present means `true`.
    Switch,
    /// `racehorse run NAME ... -- PROGRAM ARGS`: the words after `--`, joined as one
    /// /bin/sh command line.
    Trailing,
}

/// A command-line flag of `racehorse run` that sets one engine option, the same as
/// `-o OPTION=...`. Engines that share a flag declare it the same way (the registry test
/// checks), and the flag sets the option in every workload of the run that has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shortcut {
    /// The long flag without its dashes (`clients` for `--clients`); unused for Trailing.
    pub flag: &'static str,
    /// The option it sets.
    pub option: &'static str,
    pub form: ShortcutForm,
    /// The value's name in help (`N`, `DSN|auto`).
    pub value_name: &'static str,
    /// One line of help for the flag.
    pub help: &'static str,
}

/// The static description of an engine.
#[derive(Debug, Clone, Copy)]
pub struct EngineInfo {
    /// The name suites and the command line use (lowercase letters and digits).
    pub name: &'static str,
    /// One line for `racehorse workloads`.
    pub about: &'static str,
    /// The area of the seeds' summary table ("File server", "Kernel functions", "Disk I/O" …).
    pub area: &'static str,
    /// The unit of the primary count (throughput = units/s, CPU per unit).
    pub unit: WorkUnit,
    pub caps: Caps,
    /// The option table: names, kinds, defaults, help.
    pub options: &'static [OptionSpec],
    /// The flags of `racehorse run` that set some of these options.
    pub shortcuts: &'static [Shortcut],
}

impl EngineInfo {
    /// The option of this name.
    pub fn option(&self, name: &str) -> Option<&'static OptionSpec> {
        self.options.iter().find(|o| o.name == name)
    }
}

/// Shortcuts more than one engine answers to, declared once here.
pub mod shortcuts {
    use super::{Shortcut, ShortcutForm};

    /// `--clients 1,4,8`.
    pub const CLIENTS: Shortcut = Shortcut {
        flag: "clients",
        option: "clients",
        form: ShortcutForm::List,
        value_name: "N,...",
        help: "Client/process counts, e.g. 1,4,8 (a list is an axis)",
    };
    /// `--threads 8,16,32`.
    pub const THREADS: Shortcut = Shortcut {
        flag: "threads",
        option: "threads",
        form: ShortcutForm::List,
        value_name: "N,...",
        help: "Thread counts, e.g. 8,16,32 (a list is an axis)",
    };
    /// `--pg DSN|auto`.
    pub const PG: Shortcut = Shortcut {
        flag: "pg",
        option: "pg",
        form: ShortcutForm::Whole,
        value_name: "DSN|auto",
        help: "PostgreSQL: a DSN (postgres://user:pw@127.0.0.1:5432/db) or `auto` (a throw-away \
               cluster made with the installed PostgreSQL binaries)",
    };
    /// `--destructive`.
    pub const DESTRUCTIVE: Shortcut = Shortcut {
        flag: "destructive",
        option: "destructive",
        form: ShortcutForm::Switch,
        value_name: "",
        help: "Allow disk workloads to write to a block-device target (destroys its data)",
    };
}
