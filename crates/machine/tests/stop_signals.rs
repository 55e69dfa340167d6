//! A closed terminal (SIGHUP) stops a run like Ctrl-C and is remembered for the exit code
//! 129 (issue 21, case 9). Own test binary: it installs process-wide signal handlers.

use racehorse_machine::StopSignals;

#[test]
fn sighup_sets_the_flag_and_names_exit_code_129() {
    let s = StopSignals::install().expect("install");
    assert!(!s.requested());
    assert_eq!(s.signal(), None);
    // SAFETY: raise delivers SIGHUP to this thread; our handler only sets the flags.
    assert_eq!(unsafe { libc::raise(libc::SIGHUP) }, 0);
    assert!(s.requested(), "flag set, process still alive");
    assert_eq!((s.signal(), s.exit_code()), (Some(libc::SIGHUP), 129));
}
