//! Stop requests for a process that changes the machine: the first SIGINT, SIGTERM or SIGHUP
//! sets a flag (the run stops at the next check and its Guard restores everything) and
//! remembers which signal it was, so the process can exit with 128 + that signal (130, 143,
//! 129); a second one exits at once, and the state file and `racehorse restore` cover that.

use crate::error::MachineError;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// The signals that ask racehorse to stop: Ctrl-C, `kill`, and a closed terminal or ssh session.
pub const STOP_SIGNALS: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The installed handlers: a flag the runner and engines poll, and the signal that set it.
#[derive(Clone, Debug)]
pub struct StopSignals {
    flag: Arc<AtomicBool>,
    which: Arc<AtomicUsize>,
}

impl StopSignals {
    /// Installs the handlers for [`STOP_SIGNALS`]. Call it before the first change to the machine.
    pub fn install() -> Result<StopSignals, MachineError> {
        let flag = Arc::new(AtomicBool::new(false));
        let which = Arc::new(AtomicUsize::new(0));
        for sig in STOP_SIGNALS {
            let err = |e| MachineError::io(format!("signal handler for signal {sig}"), e);
            // Order matters: the conditional shutdown sees the flag before this signal sets it.
            signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&flag))
                .map_err(err)?;
            let sig_no = usize::try_from(sig).unwrap_or(0);
            signal_hook::flag::register_usize(sig, Arc::clone(&which), sig_no).map_err(err)?;
            signal_hook::flag::register(sig, Arc::clone(&flag)).map_err(err)?;
        }
        Ok(StopSignals { flag, which })
    }

    /// A flag that no signal sets (tests, library callers that stop by other means).
    pub fn never() -> StopSignals {
        StopSignals { flag: Arc::new(AtomicBool::new(false)), which: Arc::new(AtomicUsize::new(0)) }
    }

    /// Asks to stop as if `signal` had arrived (a caller that stops a run by other means).
    pub fn request(&self, signal: i32) {
        self.which.store(usize::try_from(signal).unwrap_or(0), Ordering::Relaxed);
        self.flag.store(true, Ordering::Relaxed);
    }

    /// The flag to poll (shared with the engines' `Control`).
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.flag)
    }

    /// True once a stop signal arrived.
    pub fn requested(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// The signal that asked to stop, if any.
    pub fn signal(&self) -> Option<i32> {
        match self.which.load(Ordering::Relaxed) {
            0 => None,
            n => i32::try_from(n).ok(),
        }
    }

    /// The conventional exit code for the signal that stopped us: 128 + signal (130 for
    /// Ctrl-C, 143 for SIGTERM, 129 for SIGHUP); 130 when the flag was set another way.
    pub fn exit_code(&self) -> u8 {
        self.signal().and_then(|s| u8::try_from(128 + s).ok()).unwrap_or(130)
    }
}

/// Sets the returned flag on the first SIGINT/SIGTERM/SIGHUP (see [`StopSignals`]).
pub fn install_signal_flag() -> Result<Arc<AtomicBool>, MachineError> {
    StopSignals::install().map(|s| s.flag())
}
