//! Issue 47, case 1: a second and third stop signal never end a run's process (which
//! would cut its restore short); they are counted and the first one decides the exit code.
//! Own test binary: it installs process-wide signal handlers.

use racehorse_machine::StopSignals;

#[test]
fn issue47_second_sigint_does_not_end_the_process() {
    let s = StopSignals::install().expect("install");
    for sig in [libc::SIGINT, libc::SIGINT, libc::SIGTERM] {
        // SAFETY: raise delivers the signal to this thread; our handler sets flags and writes a line.
        assert_eq!(unsafe { libc::raise(sig) }, 0);
    }
    assert!(s.requested(), "flag set, process still alive");
    assert_eq!(s.count(), 3);
    assert_eq!((s.signal(), s.exit_code()), (Some(libc::SIGINT), 130), "the first signal decides");
}
