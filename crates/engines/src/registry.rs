//! The list of engines. Adding an engine = one module, one line here, one docs entry. Also the
//! kinds of job the engines run in a freshly executed racehorse, with their handlers, so that
//! `support::forked` knows none of its callers.

use crate::support::forked::{self, FreshHandler};
use crate::{Engine, EngineError};

/// Every engine, in the order `racehorse workloads` lists them.
static ENGINES: &[&dyn Engine] = &[
    &crate::fileserver::FileServer,
    &crate::adapters::dbench::Dbench,
    &crate::diskio::DiskIo,
    &crate::adapters::fio::Fio,
    &crate::smallread::SmallRead,
    &crate::paging::Paging,
    &crate::command::CommandEngine,
    &crate::micro::Micro,
    &crate::oltp::Oltp,
    &crate::adapters::sysbench::Sysbench,
    &crate::analytics::Analytics,
    &crate::net::Net,
    &crate::adapters::iperf3::Iperf3,
    &crate::mix::Mix,
    &crate::compute::Compute,
    &crate::java::Java,
    &crate::adapters::jmh::Jmh,
    &crate::null::Null,
];

/// Every engine, in the order `racehorse workloads` lists them.
pub fn registry() -> &'static [&'static dyn Engine] {
    ENGINES
}

/// The kinds of job a fresh process can do (see [`forked::in_fresh_process`]) and their handlers.
const FRESH_JOBS: &[(&str, FreshHandler)] = &[
    (crate::micro::child::FRESH_KIND, crate::micro::child::serve_fresh),
    (crate::compute::child::FRESH_KIND, crate::compute::child::serve_fresh),
];

/// In a process started for a fresh-process job: does the job, writes the reply to stdout and
/// returns the exit code; `None` in any other process. The binary calls it first thing in
/// `main`, and then [`crate::enable_fresh_process`].
pub fn fresh_process_entry() -> Option<i32> {
    forked::fresh_process_entry(FRESH_JOBS)
}

/// Finds an engine by name.
pub fn find(name: &str) -> Option<&'static dyn Engine> {
    ENGINES.iter().copied().find(|e| e.name() == name)
}

/// The engines that can run paced (`rate`, `qos`; see `support::pace`), by name.
pub fn paced_engines() -> Vec<&'static str> {
    ENGINES.iter().filter(|e| e.caps().paced).map(|e| e.name()).collect()
}

/// Checks that an engine can run here: first the generic checks its capabilities drive (its
/// external tool is installed; loopback works for engines that talk to a peer; root for
/// engines that change the machine, when `will_run`), then the engine's own [`Engine::check`].
pub fn ready(engine: &dyn Engine, will_run: bool) -> Result<(), EngineError> {
    let info = engine.info();
    if let Some(tool) = info.caps.external_tool {
        crate::support::path::find_file(tool.program).ok_or_else(|| tool.missing())?;
    }
    if info.caps.needs_peer {
        loopback_works().map_err(|e| {
            EngineError::Usage(format!(
                "{} talks to a peer over TCP, but loopback does not work here ({e}); bring it up \
                 (ip link set lo up)",
                info.name
            ))
        })?;
    }
    // SAFETY: geteuid has no preconditions.
    if will_run && info.caps.changes_machine && unsafe { libc::geteuid() } != 0 {
        return Err(EngineError::Usage(format!(
            "{} changes the machine for its cells (and restores it), which needs root",
            info.name
        )));
    }
    engine.check()
}

/// A TCP connection to a listener on 127.0.0.1 succeeds.
fn loopback_works() -> std::io::Result<()> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    let addr = listener.local_addr()?;
    std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(2)).map(|_| ())
}

/// The pacing options every paced engine takes (`rate`, `qos`), for the runner's table of
/// harness options.
pub mod pace_options {
    pub use crate::support::pace::{QOS, RATE};
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod figure_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_help_and_defaults_are_sound() {
        let engines = registry();
        let mut names: Vec<_> = engines.iter().map(|e| e.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), engines.len(), "engine names must be unique");
        for e in engines.iter() {
            assert_eq!(e.name(), e.info().name);
            assert!(!e.about().is_empty(), "{} has no description", e.name());
            assert!(e.name().chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
            for o in e.options() {
                assert!(!o.help.is_empty(), "{}.{} has no help", e.name(), o.name);
                if o.name == "qos" {
                    assert!(e.caps().paced, "{}.qos: only engines with Caps::paced have it", e.name());
                }
                if !o.default.is_empty() {
                    assert!(
                        o.default_value().is_some(),
                        "{}.{} default '{}' does not parse",
                        e.name(),
                        o.name,
                        o.default
                    );
                }
            }
            if e.caps().paced {
                let n = e.options().len();
                let tail: Vec<&str> = e.options()[n.saturating_sub(2)..].iter().map(|o| o.name).collect();
                assert_eq!(tail, ["rate", "qos"], "{} paces: its table ends with rate and qos", e.name());
            }
        }
        assert!(paced_engines().len() >= 4, "{:?}", paced_engines());
    }
}
