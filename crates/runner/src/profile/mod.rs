//! Profiling for `--profile`: where the CPU time went during a cell's measured window, in the
//! manner of OProfile's `opreport` (images) and `opreport -l` (symbols), done with `perf`.
//!
//! A [`Recording`] runs `perf record -a -e cpu-clock` (with call chains, [`CallGraph`]) for
//! the whole cell with its events disabled and switches sampling on and off through perf's
//! control fifo exactly at the measured window's edges, and a [`Counting`] does the same with
//! `perf stat`; [`report`] then turns the data file into a
//! [`Profile`](racehorse_core::profile::Profile) of the top images and symbols, [`fold`] into
//! its folded call stacks, and the count into its counters.

mod callgraph;
mod control;
mod error;
mod fold;
mod output;
mod record;
mod report;
mod stat;
mod sys;

#[cfg(test)]
mod live_tests;

pub use callgraph::{
    is_spec_word, parse_spec, probe as probe_callgraph, CallGraph, ProfileSpec, DEFAULT_FREQ_HZ,
};
pub use error::{PerfError, ProfileError};
pub use fold::{
    bounded, fold, fold_text, Folded, Folder, KERNEL_SUFFIX, MAX_STACKS, MAX_STACK_BYTES, MIN_STACK_SHARE,
};
pub use record::{Recording, EVENT};
pub use report::{parse_lines, parse_report, report, summarize, ReportLine, Summary};
pub use stat::{parse_csv, probe as probe_counters, unsupported_hardware, Counting, HARDWARE, SOFTWARE};

use racehorse_machine::path;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Oldest perf with `--control` and `-D -1` (events start disabled).
const MIN_VERSION: (u32, u32) = (5, 10);

const PARANOID_FILE: &str = "/proc/sys/kernel/perf_event_paranoid";

/// CAP_SYS_ADMIN and CAP_PERFMON: either lets an unprivileged user sample system-wide.
const CAP_SYS_ADMIN: u32 = 21;
const CAP_PERFMON: u32 = 38;

/// How to get perf, and what the kernel must allow, for error messages.
fn install_hint() -> String {
    let paranoid = std::fs::read_to_string(PARANOID_FILE).map(|s| s.trim().to_string());
    let paranoid = paranoid.unwrap_or_else(|_| "unreadable".to_string());
    format!(
        "install it with `apt-get install linux-perf` on Debian or \
         `apt-get install linux-tools-$(uname -r)` on Ubuntu (elsewhere: package `perf`); \
         system-wide sampling also needs root or kernel.perf_event_paranoid <= 0 \
         (now: perf_event_paranoid {paranoid}, euid {})",
        sys::euid()
    )
}

/// Finds a working perf (≥ 5.10) that may sample system-wide, or says how to get one.
pub fn find_perf() -> Result<PathBuf, ProfileError> {
    let perf = locate("perf").ok_or_else(|| ProfileError::PerfMissing { hint: install_hint() })?;
    let out = Command::new(&perf)
        .arg("--version")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .output()
        .map_err(|source| ProfileError::PerfUnrunnable { perf: perf.clone(), source })?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        let said = text.trim().to_string();
        return Err(ProfileError::PerfBroken { perf, status: out.status, said, hint: install_hint() });
    }
    if let Some(found) = perf_version(&text) {
        if found < MIN_VERSION {
            return Err(ProfileError::PerfTooOld { perf, found, needed: MIN_VERSION, hint: install_hint() });
        }
    }
    let paranoid = std::fs::read_to_string(PARANOID_FILE).ok().and_then(|s| s.trim().parse::<i32>().ok());
    check_permission(paranoid, sys::euid() == 0 || has_perf_capability())?;
    Ok(perf)
}

/// The first executable `name` in PATH, then in the usual system directories.
fn locate(name: &str) -> Option<PathBuf> {
    let fallback = ["/usr/bin", "/usr/sbin", "/usr/local/bin", "/bin", "/sbin"].map(PathBuf::from);
    path::find_in(path::path_dirs().into_iter().chain(fallback), name, path::is_executable)
}

/// (major, minor) from `perf version 6.1.187` or `perf version 5.10.0-rc2.g1234`.
fn perf_version(text: &str) -> Option<(u32, u32)> {
    let rest = text.split("version").nth(1)?.split_whitespace().next()?;
    let mut parts = rest.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// Whether system-wide sampling is allowed, given kernel.perf_event_paranoid and privilege.
fn check_permission(paranoid: Option<i32>, privileged: bool) -> Result<(), ProfileError> {
    let Some(level) = paranoid else {
        return Err(ProfileError::NoPerfEvents { file: PARANOID_FILE });
    };
    if privileged || level <= 0 {
        return Ok(());
    }
    Err(ProfileError::NotPermitted { paranoid: level })
}

/// Whether the effective capability set holds CAP_PERFMON or CAP_SYS_ADMIN.
fn has_perf_capability() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    cap_eff(&status).is_some_and(|caps| caps & (1 << CAP_PERFMON | 1 << CAP_SYS_ADMIN) != 0)
}

fn cap_eff(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("CapEff:"))?;
    u64::from_str_radix(line["CapEff:".len()..].trim(), 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_perf_versions() {
        assert_eq!(perf_version("perf version 6.1.187\n"), Some((6, 1)));
        assert_eq!(perf_version("perf version 5.10.0-rc2.g5ee5bc2d8e5b\n"), Some((5, 10)));
        assert_eq!(perf_version("perf version 4.19"), Some((4, 19)));
        assert_eq!(perf_version("WARNING: perf not found for kernel 6.8.0-31"), None);
        assert!(perf_version("perf version 4.19").unwrap() < MIN_VERSION);
    }

    #[test]
    fn permission_rules() {
        assert!(check_permission(Some(2), true).is_ok());
        assert!(check_permission(Some(0), false).is_ok());
        assert!(check_permission(Some(-1), false).is_ok());
        let err = check_permission(Some(2), false).unwrap_err().to_string();
        assert!(err.contains("perf_event_paranoid is 2"), "{err}");
        assert!(check_permission(None, true).unwrap_err().to_string().contains("CONFIG_PERF_EVENTS"));
    }

    #[test]
    fn reads_effective_capabilities() {
        let root = "Name:\tx\nCapEff:\t000001ffffffffff\n";
        assert_eq!(cap_eff(root), Some(0x1ff_ffff_ffff));
        assert_eq!(cap_eff("CapEff:\t0000000000000000\n"), Some(0));
        assert_eq!(cap_eff("Name: x\n"), None);
    }

    #[test]
    fn find_perf_answers_either_way() {
        match find_perf() {
            Ok(p) => assert!(p.is_absolute() || p.exists(), "{}", p.display()),
            Err(e) => assert!(e.to_string().contains("perf"), "{e}"),
        }
    }
}
