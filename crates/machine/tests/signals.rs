//! The first SIGINT only sets the abort flag (so Guards unwind and restore); it does not exit.
//! Own test binary: it installs process-wide signal handlers.

use std::sync::atomic::Ordering;

#[test]
fn first_sigint_sets_flag_without_exiting() {
    let flag = racehorse_machine::install_signal_flag().expect("install");
    assert!(!flag.load(Ordering::SeqCst));
    // SAFETY: raise delivers SIGINT to this thread; our handler only sets the flag.
    assert_eq!(unsafe { libc::raise(libc::SIGINT) }, 0);
    assert!(flag.load(Ordering::SeqCst), "flag set, process still alive");
}
