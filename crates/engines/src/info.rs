//! The static description every engine declares once: name, words for people, unit, areas,
//! capabilities, options, the figures it records and the command-line shortcuts its options
//! answer to. The binary's flags and help, `racehorse workloads`, the docs table, the generic
//! checks before a run and what compare knows of the engine are all generated from it, so
//! that adding an engine never edits the binary or the report.

use crate::options::OptionSpec;
use racehorse_core::{AreaRule, Figure, WorkUnit};

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
    /// The engine's area where engines are listed and one run is described: `racehorse
    /// workloads` (text, `--markdown`, `--json`), the headings of `report` and `show`, and the
    /// per-area table that ends `run quick` ("File server", "Kernel functions", "Disk I/O" …).
    /// Free words that group engines by what they exercise; compare's summary does not use
    /// them (see `summary_area`).
    pub area: &'static str,
    /// Where its points go in compare's summary, the table of seed 000 (per area and
    /// workload, and the geometric means by area). A fixed vocabulary
    /// ([`racehorse_core::SummaryArea`]), because the seed's rows follow its benchmarks
    /// rather than what an engine exercises (dbench-like file serving is the seed's
    /// "Scaling CPU and processes", re-aim's mixes fall by their workfile), so it is kept
    /// apart from `area` and may depend on a parameter ([`AreaRule::ByParam`]). The areas:
    ///
    /// - "Kernel functions": lmbench-like micro benchmarks (micro)
    /// - "Scaling CPU and processes": dbench-like file serving (fileserver, dbench), a mix of
    ///   another workfile
    /// - "CPU intense": the single-threaded compute suite (compute)
    /// - "CPU and memory intense": re-aim's compute mix (mix workfile=compute)
    /// - "File server": re-aim's fserver mix, the default (mix workfile=fserver)
    /// - "Database": re-aim's new-DB mix (mix workfile=new_db)
    /// - "Database OLTP": sysbench-like OLTP (oltp, sysbench)
    /// - "Large DB / BI": the BI queries (analytics)
    /// - "Networking": uperf-like traffic (net, iperf3)
    /// - "Disk I/O": IOzone/FIO-like I/O (diskio, fio, smallread)
    /// - "Java": Java workloads (java, jmh)
    /// - "Paging": the paging thrasher (paging)
    /// - "Harness": the harness's own test engine (null)
    /// - "Other": anything else (command; and a workload no engine of this build knows)
    pub summary_area: AreaRule,
    /// The unit of the primary count (throughput = units/s, CPU per unit).
    pub unit: WorkUnit,
    pub caps: Caps,
    /// The option table: names, kinds, defaults, help.
    pub options: &'static [OptionSpec],
    /// Every extra the engine records ([`crate::Recorder::set_extra`]), each with its name,
    /// unit and direction; those with a direction are compared per point by `compare` (in
    /// this order: CPU per a counted thing first, then the exact keys, then the families), the
    /// rest are informational. An engine that paces ends the table with `support::pace`'s
    /// figures (`pace::with_pace_figures`). The registry's tests check that every key the
    /// engine's sources record is declared here, and every declaration is recorded.
    pub figures: &'static [Figure],
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
