//! The list of engines. Adding an engine = one module, one line here, one docs entry. Also the
//! kinds of job the engines run in a freshly executed racehorse, with their handlers, so that
//! `support::forked` knows none of its callers.

use crate::support::forked::{self, FreshHandler};
use crate::Engine;

/// Every engine, in the order `racehorse workloads` lists them.
pub fn registry() -> Vec<&'static dyn Engine> {
    vec![
        &crate::fileserver::FileServer,
        &crate::adapters::dbench::Dbench,
        &crate::diskio::DiskIo,
        &crate::adapters::fio::Fio,
        &crate::smallread::SmallRead,
        &crate::paging::Paging,
        &crate::command::CommandEngine,
        &crate::micro::Micro,
        &crate::oltp::Oltp,
        &crate::oltp::sysbench::Sysbench,
        &crate::analytics::Analytics,
        &crate::net::Net,
        &crate::net::iperf3::Iperf3,
        &crate::mix::Mix,
        &crate::compute::Compute,
        &crate::null::Null,
    ]
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
    registry().into_iter().find(|e| e.name() == name)
}

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
        for e in engines {
            assert!(!e.about().is_empty(), "{} has no description", e.name());
            assert!(e.name().chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
            for o in e.options() {
                assert!(!o.help.is_empty(), "{}.{} has no help", e.name(), o.name);
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
        }
    }
}
