//! lat_sig, lat_proc, lat_pipe and lat_ctx: signal handler installation and delivery, a
//! protection fault caught by a handler, fork/exec/shell, and pipe round trips between two
//! processes (the context switch is half a round trip less the pipe's own cost). Each is a
//! loop body of `n` operations; the baselines to subtract are bodies too.

use super::syscalls::Body;
use std::ffi::CString;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

static CAUGHT: AtomicU64 = AtomicU64::new(0);
/// Faults on the benchmark's page taken by on_segv.
static FAULTS: AtomicU64 = AtomicU64::new(0);
/// x86_64: the handler lets the store fault again until FAULTS reaches this, then steps over
/// it (lat_sig prot: the same store faults over and over until the interval ends).
static FAULT_TARGET: AtomicU64 = AtomicU64::new(0);
/// The page the protection-fault benchmark writes to (0 = none).
static PROT_PAGE: AtomicUsize = AtomicUsize::new(0);

extern "C" fn on_usr1(_: libc::c_int) {
    CAUGHT.fetch_add(1, Ordering::Relaxed);
}

/// Bytes of the faulting store `mov byte ptr [rdi], 1` (C6 07 01), which the handler skips.
#[cfg(target_arch = "x86_64")]
const STORE_LEN: i64 = 3;

/// The store the fault benchmark makes: on x86_64 an instruction of known length, so the
/// handler can step over it and the page stays read-only (lmbench's loop: fault, handler,
/// return; no mprotect in between). Elsewhere a plain store the handler makes succeed.
#[inline(always)]
unsafe fn faulting_store(p: *mut u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller passes our page; a fault there is handled by on_segv.
    unsafe {
        std::arch::asm!("mov byte ptr [rdi], 1", in("rdi") p, options(nostack))
    };
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: as above.
    unsafe {
        std::ptr::write_volatile(p, 1)
    };
}

extern "C" fn on_segv(_: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let page = PROT_PAGE.load(Ordering::Relaxed);
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let addr = unsafe { (*info).si_addr() } as usize;
    // SAFETY: the ucontext the kernel passes; mprotect and signal are async-signal-safe.
    unsafe {
        if page != 0 && (page..page + 4096).contains(&addr) {
            let taken = FAULTS.fetch_add(1, Ordering::Relaxed) + 1;
            #[cfg(target_arch = "x86_64")]
            if taken >= FAULT_TARGET.load(Ordering::Relaxed) {
                let uc = ctx.cast::<libc::ucontext_t>();
                (*uc).uc_mcontext.gregs[libc::REG_RIP as usize] += STORE_LEN;
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = taken;
            #[cfg(not(target_arch = "x86_64"))]
            {
                let _ = ctx;
                libc::mprotect(page as *mut libc::c_void, 4096, libc::PROT_READ | libc::PROT_WRITE);
            }
        } else {
            // Not ours: the default action happens when the access is retried.
            libc::signal(libc::SIGSEGV, libc::SIG_DFL);
        }
    }
}

/// One benchmark at a time owns a signal's handler (SIGUSR1, SIGSEGV): bodies built on
/// other threads wait for it.
static USR1_BUSY: AtomicBool = AtomicBool::new(false);
static SEGV_BUSY: AtomicBool = AtomicBool::new(false);

fn busy_flag(sig: libc::c_int) -> &'static AtomicBool {
    if sig == libc::SIGSEGV {
        &SEGV_BUSY
    } else {
        &USR1_BUSY
    }
}

/// Installs `handler` for `sig`; the old action comes back when the guard drops.
struct Handler {
    sig: libc::c_int,
    old: libc::sigaction,
}

impl Handler {
    fn install(sig: libc::c_int, handler: usize, siginfo: bool) -> Result<Handler, String> {
        let busy = busy_flag(sig);
        while busy.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        // SAFETY: zeroed sigaction structs are valid; the handler is an extern "C" fn.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = handler;
            act.sa_flags = if siginfo { libc::SA_SIGINFO } else { 0 };
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, &act, &mut old) != 0 {
                busy.store(false, Ordering::Release);
                return Err(format!("sigaction: {}", std::io::Error::last_os_error()));
            }
            Ok(Handler { sig, old })
        }
    }
}

impl Drop for Handler {
    fn drop(&mut self) {
        // SAFETY: puts back the action saved at install.
        unsafe { libc::sigaction(self.sig, &self.old, std::ptr::null_mut()) };
        busy_flag(self.sig).store(false, Ordering::Release);
    }
}

/// sig_install: sigaction(SIGUSR1) with a handler.
pub fn sig_install() -> Result<Body, String> {
    let guard = Handler::install(libc::SIGUSR1, on_usr1 as *const () as usize, false)?;
    Ok(Box::new(move |n| {
        let _g = &guard;
        // SAFETY: as in Handler::install.
        // lat_sig install: the action is filled in (with an empty mask) and the old one read
        // back on every call.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            let mut old: libc::sigaction = std::mem::zeroed();
            for _ in 0..n {
                act.sa_sigaction = on_usr1 as *const () as usize;
                libc::sigemptyset(&mut act.sa_mask);
                act.sa_flags = 0;
                black_box(libc::sigaction(libc::SIGUSR1, black_box(&act), &mut old));
            }
        }
    }))
}

fn tgkill_self(sig: libc::c_int) -> libc::c_long {
    // SAFETY: signals this very thread (a process-wide kill could land on another thread).
    unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), libc::gettid(), sig) }
}

/// sig_catch: SIGUSR1 sent to this thread and caught by an empty handler; with `baseline`,
/// the same call with signal 0 (nothing delivered), to subtract.
pub fn sig_catch(baseline: bool) -> Result<Body, String> {
    // Signal 0 delivers nothing: the baseline needs no handler.
    let guard = if baseline {
        None
    } else {
        Some(Handler::install(libc::SIGUSR1, on_usr1 as *const () as usize, false)?)
    };
    let sig = if baseline { 0 } else { libc::SIGUSR1 };
    Ok(Box::new(move |n| {
        let _g = &guard;
        for _ in 0..n {
            black_box(tgkill_self(sig));
        }
    }))
}

/// A read-only page, unmapped on drop; `.1`: it is the one in PROT_PAGE.
struct Page(*mut u8, bool);
unsafe impl Send for Page {}

impl Drop for Page {
    fn drop(&mut self) {
        if self.1 {
            // Only our own page: another benchmark may have taken the slot since.
            let _ = PROT_PAGE.compare_exchange(self.0 as usize, 0, Ordering::Relaxed, Ordering::Relaxed);
        }
        // SAFETY: the mapping made in prot_fault.
        unsafe { libc::munmap(self.0.cast(), 4096) };
    }
}

/// prot_fault: a write to a read-only page, caught by a SIGSEGV handler. On x86_64, as
/// lat_sig prot, one store faults `n` times: the handler returns to it until the n-th fault,
/// then steps over it (`baseline`: nothing to do). Elsewhere the handler makes the page
/// writable and the loop protects it again each time; `baseline` then does the two mprotect
/// calls by hand, to subtract.
pub fn prot_fault(baseline: bool) -> Result<Body, String> {
    // SAFETY: a fresh anonymous page; checked below.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(format!("mmap: {}", std::io::Error::last_os_error()));
    }
    let page = Page(p.cast(), !baseline);
    // The baseline never faults: it needs neither the handler nor the shared page slot.
    let guard = if baseline {
        None
    } else {
        let g = Handler::install(libc::SIGSEGV, on_segv as *const () as usize, true)?;
        PROT_PAGE.store(p as usize, Ordering::Relaxed);
        Some(g)
    };
    Ok(Box::new(move |n| {
        let (_g, page) = (&guard, &page);
        let base = page.0;
        if cfg!(target_arch = "x86_64") {
            if !baseline && n > 0 {
                // One store, n faults: the handler returns to it n - 1 times, then steps over.
                FAULT_TARGET.store(FAULTS.load(Ordering::Relaxed) + n, Ordering::Relaxed);
                // SAFETY: our page; on_segv handles every fault on it.
                unsafe { faulting_store(base) };
            }
            return;
        }
        for _ in 0..n {
            // SAFETY: our page; the store faults into on_segv, which opens the page; the
            // baseline stores only into a page it opened itself.
            unsafe {
                libc::mprotect(base.cast(), 4096, libc::PROT_READ);
                if baseline {
                    libc::mprotect(base.cast(), 4096, libc::PROT_READ | libc::PROT_WRITE);
                    std::ptr::write_volatile(base, 1);
                } else {
                    faulting_store(base);
                }
            }
        }
    }))
}

/// What the child of a fork does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Child {
    Exit,
    Exec,
    Shell,
}

/// fork + (exit | execve /bin/true | /bin/sh -c /bin/true) + waitpid. The child leaves with
/// _exit: lmbench's calls exit(), whose C library teardown in the child (exit handlers, stdio,
/// each touched page a copy-on-write fault) is the harness's cost, not fork's.
pub fn fork(child: Child) -> Result<Body, String> {
    let prog = CString::new(if child == Child::Shell { "/bin/sh" } else { "/bin/true" }).expect("path");
    let args: Vec<CString> = match child {
        Child::Shell => ["sh", "-c", "/bin/true"].iter().map(|a| CString::new(*a).expect("arg")).collect(),
        _ => vec![CString::new("true").expect("arg")],
    };
    let env = CString::new("PATH=/usr/bin:/bin").expect("env");
    Ok(Box::new(move |n| {
        let mut argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
        argv.push(std::ptr::null());
        let envp = [env.as_ptr(), std::ptr::null()];
        for _ in 0..n {
            // SAFETY: the child calls only async-signal-safe functions (execve, _exit).
            unsafe {
                let pid = libc::fork();
                if pid == 0 {
                    if child != Child::Exit {
                        libc::execve(prog.as_ptr(), argv.as_ptr(), envp.as_ptr());
                    }
                    libc::_exit(0);
                }
                if pid > 0 {
                    let mut status = 0;
                    libc::waitpid(pid, &mut status, 0);
                }
            }
        }
    }))
}

#[cfg(test)]
#[path = "procs_tests.rs"]
mod tests;
