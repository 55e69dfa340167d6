//! Stop requests for a process that changes the machine: the first SIGINT, SIGTERM or SIGHUP
//! sets a flag (the run stops at the next check and its Guard restores everything) and
//! remembers which signal it was, so the process can exit with 128 + that signal (130, 143,
//! 129). Later ones never cut the restore short (issue 47, case 1: impatient users press
//! Ctrl-C twice): each only writes a line saying the machine is being restored. Commands
//! that change nothing ([`install_signal_flag`]) exit at once on the second one instead.

use crate::error::MachineError;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// The signals that ask racehorse to stop: Ctrl-C, `kill`, and a closed terminal or ssh session.
pub const STOP_SIGNALS: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// What a later stop signal writes to stderr while the machine is being restored.
const STILL_STOPPING: &[u8] = b"\nracehorse: stopping; the machine is restored first, then racehorse exits \
(SIGKILL would leave that to `racehorse restore`)\n";

/// The installed handlers: a flag the runner and engines poll, and the signal that set it.
#[derive(Clone, Debug)]
pub struct StopSignals {
    flag: Arc<AtomicBool>,
    which: Arc<AtomicUsize>,
    /// Stop signals received so far.
    count: Arc<AtomicUsize>,
}

impl StopSignals {
    /// Installs the handlers for [`STOP_SIGNALS`]. Call it before the first change to the
    /// machine. The first signal sets the flag; later ones never end the process, so the
    /// Guard always finishes its restore.
    pub fn install() -> Result<StopSignals, MachineError> {
        let s = StopSignals::never();
        for sig in STOP_SIGNALS {
            let (flag, which, count) = (Arc::clone(&s.flag), Arc::clone(&s.which), Arc::clone(&s.count));
            let sig_no = usize::try_from(sig).unwrap_or(0);
            let handler = move || {
                let _ = which.compare_exchange(0, sig_no, Ordering::SeqCst, Ordering::SeqCst);
                flag.store(true, Ordering::SeqCst);
                if count.fetch_add(1, Ordering::SeqCst) > 0 {
                    // SAFETY: write(2) is async-signal-safe; the buffer is a static byte string.
                    let _ = unsafe { libc::write(2, STILL_STOPPING.as_ptr().cast(), STILL_STOPPING.len()) };
                }
            };
            // SAFETY: the handler only touches atomics and calls write(2), both async-signal-safe.
            unsafe { signal_hook::low_level::register(sig, handler) }
                .map_err(|e| MachineError::io(format!("signal handler for signal {sig}"), e))?;
        }
        Ok(s)
    }

    /// Handlers for a command that changes nothing: the first signal sets the flag, a second
    /// one exits at once with 128 + signal.
    fn install_exiting_on_second() -> Result<StopSignals, MachineError> {
        let s = StopSignals::never();
        for sig in STOP_SIGNALS {
            let err = |e| MachineError::io(format!("signal handler for signal {sig}"), e);
            // Order matters: the conditional shutdown sees the flag before this signal sets it.
            signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&s.flag))
                .map_err(err)?;
            let sig_no = usize::try_from(sig).unwrap_or(0);
            signal_hook::flag::register_usize(sig, Arc::clone(&s.which), sig_no).map_err(err)?;
            signal_hook::flag::register(sig, Arc::clone(&s.flag)).map_err(err)?;
        }
        Ok(s)
    }

    /// A flag that no signal sets (tests, library callers that stop by other means).
    pub fn never() -> StopSignals {
        StopSignals {
            flag: Arc::new(AtomicBool::new(false)),
            which: Arc::new(AtomicUsize::new(0)),
            count: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Asks to stop as if `signal` had arrived (a caller that stops a run by other means).
    pub fn request(&self, signal: i32) {
        let sig_no = usize::try_from(signal).unwrap_or(0);
        let _ = self.which.compare_exchange(0, sig_no, Ordering::SeqCst, Ordering::SeqCst);
        self.count.fetch_add(1, Ordering::SeqCst);
        self.flag.store(true, Ordering::SeqCst);
    }

    /// The flag to poll (shared with the engines' `Control`).
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.flag)
    }

    /// True once a stop signal arrived.
    pub fn requested(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// How many stop signals arrived (or were requested).
    pub fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// The first signal that asked to stop, if any.
    pub fn signal(&self) -> Option<i32> {
        match self.which.load(Ordering::SeqCst) {
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

/// Sets the returned flag on the first SIGINT/SIGTERM/SIGHUP; a second one exits at once
/// with 128 + signal. For commands that change nothing on the machine (`serve`, `plugd
/// record`); a run uses [`StopSignals::install`], whose later signals wait for the restore.
pub fn install_signal_flag() -> Result<Arc<AtomicBool>, MachineError> {
    StopSignals::install_exiting_on_second().map(|s| s.flag())
}
