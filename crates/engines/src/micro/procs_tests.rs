//! Tests of the signal, fault and fork bodies: each runs, delivers what it claims and puts
//! the machine's signal handlers back.

use super::*;

#[test]
fn signals_are_caught_and_the_baseline_delivers_none() {
    CAUGHT.store(0, Ordering::Relaxed);
    let mut catch = sig_catch(false).expect("catch");
    catch(50);
    assert_eq!(CAUGHT.load(Ordering::Relaxed), 50, "every signal reached the handler");
    drop(catch);
    let mut base = sig_catch(true).expect("baseline");
    base(50);
    assert_eq!(CAUGHT.load(Ordering::Relaxed), 50, "signal 0 delivers nothing");
    sig_install().expect("install")(10);
}

#[test]
fn protection_faults_are_taken_and_the_old_handler_returns() {
    // SAFETY: reading the current action only.
    let before = unsafe {
        let mut a: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGSEGV, std::ptr::null(), &mut a);
        a.sa_sigaction
    };
    for baseline in [false, true] {
        let mut f = prot_fault(baseline).expect("prot");
        let before = FAULTS.load(Ordering::Relaxed);
        f(20);
        let taken = FAULTS.load(Ordering::Relaxed) - before;
        assert_eq!(taken, if baseline { 0 } else { 20 }, "baseline {baseline}: one fault per store");
    }
    // SAFETY: as above.
    let after = unsafe {
        let mut a: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGSEGV, std::ptr::null(), &mut a);
        a.sa_sigaction
    };
    assert_eq!(before, after, "the SIGSEGV action is put back");
    assert_eq!(PROT_PAGE.load(Ordering::Relaxed), 0);
}

#[test]
fn forks_run_their_child_and_reap_it() {
    for c in [Child::Exit, Child::Exec, Child::Shell] {
        let mut f = fork(c).expect("fork");
        f(2);
    }
}
