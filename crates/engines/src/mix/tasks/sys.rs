//! System-call tasks: files and directories, links, signals, paging and the heap, System V
//! shared memory, socket pairs, TCP and UDP on 127.0.0.1, fork and exec. Message tasks
//! send and receive in the same process (the kernel paths of a round trip without a
//! second scheduler hop); every socket has a receive timeout so that nothing hangs.

use super::{ioe, TaskEnv};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream, UdpSocket};
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How long a message task waits for a reply before failing.
const RECV_TIMEOUT: Duration = Duration::from_secs(10);
const MSG_BYTES: usize = 1024;

fn os_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

pub fn creat_clo(env: &mut TaskEnv) -> Result<(), String> {
    let path = env.dir.join("creat_clo");
    for _ in 0..1000 {
        drop(std::fs::File::create(&path).map_err(ioe("creat"))?);
    }
    std::fs::remove_file(&path).map_err(ioe("unlink"))
}

pub fn dir_rtns_1(env: &mut TaskEnv) -> Result<(), String> {
    // SAFETY: opendir/readdir/rewinddir/closedir on one stream owned by this function.
    unsafe {
        let dir = libc::opendir(c"/bin".as_ptr());
        if dir.is_null() {
            return Err(os_err("opendir /bin"));
        }
        let mut rewinds = 0u64;
        for _ in 0..10_000 {
            if libc::readdir(dir).is_null() {
                rewinds += 1;
                libc::rewinddir(dir);
            }
        }
        libc::closedir(dir);
        env.sink = env.sink.wrapping_add(rewinds);
    }
    Ok(())
}

pub fn link_test(env: &mut TaskEnv) -> Result<(), String> {
    let (a, b) = (env.dir.join("link_a"), env.dir.join("link_b"));
    std::fs::write(&a, b"link").map_err(ioe("create"))?;
    for _ in 0..40 {
        std::fs::hard_link(&a, &b).map_err(ioe("link"))?;
        std::fs::remove_file(&b).map_err(ioe("unlink"))?;
    }
    std::fs::remove_file(&a).map_err(ioe("unlink"))
}

static SIGNALS: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_usr2(_: libc::c_int) {
    SIGNALS.fetch_add(1, Ordering::Relaxed);
}

pub fn signal_test(env: &mut TaskEnv) -> Result<(), String> {
    // SAFETY: installs an async-signal-safe handler (one atomic add) in this user process.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_usr2 as extern "C" fn(libc::c_int) as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        if libc::sigaction(libc::SIGUSR2, &sa, std::ptr::null_mut()) != 0 {
            return Err(os_err("sigaction"));
        }
    }
    let before = SIGNALS.load(Ordering::Relaxed);
    for _ in 0..1000 {
        // SAFETY: signals this thread (in a user process, the process: kill(self) as in AIM),
        // whose SIGUSR2 handler is installed above.
        if unsafe { libc::raise(libc::SIGUSR2) } != 0 {
            return Err(os_err("raise"));
        }
    }
    let got = SIGNALS.load(Ordering::Relaxed) - before;
    env.sink = env.sink.wrapping_add(got);
    if got == 0 {
        return Err("no SIGUSR2 arrived".into());
    }
    Ok(())
}

const PAGE: usize = 4096;

pub fn page_test(env: &mut TaskEnv) -> Result<(), String> {
    const REGION: usize = 1 << 20;
    const CHUNK: usize = 64 << 10;
    // SAFETY: a private anonymous mapping used only here and unmapped before returning.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            REGION,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(os_err("mmap"));
    }
    let p = base.cast::<u8>();
    // SAFETY: every offset written is inside the REGION-byte mapping.
    unsafe {
        for off in (0..REGION).step_by(PAGE) {
            p.add(off).write_volatile(1);
        }
        for round in 0..150usize {
            let start = (round * CHUNK) % REGION;
            libc::madvise(p.add(start).cast(), CHUNK, libc::MADV_DONTNEED);
            for step in 0..16 {
                p.add(start + step * PAGE).write_volatile(round as u8);
            }
        }
        env.sink = env.sink.wrapping_add(u64::from(p.read_volatile()));
        libc::munmap(base, REGION);
    }
    Ok(())
}

pub fn brk_test(env: &mut TaskEnv) -> Result<(), String> {
    const STEP: libc::intptr_t = 64 << 10;
    for _ in 0..1000 {
        // SAFETY: grows the break and gives the same amount back with no allocation in
        // between, so the allocator finds the break where it left it.
        unsafe {
            let old = libc::sbrk(STEP);
            if old as isize == -1 {
                return Err(os_err("sbrk"));
            }
            old.cast::<u8>().write_volatile(1);
            libc::sbrk(-STEP);
        }
        env.sink = env.sink.wrapping_add(1);
    }
    Ok(())
}

pub fn shared_memory(env: &mut TaskEnv) -> Result<(), String> {
    const BYTES: usize = 4 << 10;
    for round in 0..20u8 {
        // SAFETY: a private segment attached, written inside its size, detached and removed.
        unsafe {
            let id = libc::shmget(libc::IPC_PRIVATE, BYTES, libc::IPC_CREAT | 0o600);
            if id < 0 {
                return Err(os_err("shmget"));
            }
            let at = libc::shmat(id, std::ptr::null(), 0);
            if at as isize == -1 {
                libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
                return Err(os_err("shmat"));
            }
            std::ptr::write_bytes(at.cast::<u8>(), round, BYTES);
            env.sink = env.sink.wrapping_add(u64::from(at.cast::<u8>().add(BYTES - 1).read_volatile()));
            libc::shmdt(at);
            libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
        }
    }
    Ok(())
}

/// `n` round trips of 1 KiB between two connected stream ends.
fn stream_round_trips(a: &mut impl ReadWrite, b: &mut impl ReadWrite, n: usize) -> Result<u64, String> {
    let out = [7u8; MSG_BYTES];
    let mut buf = [0u8; MSG_BYTES];
    let mut got = 0u64;
    for _ in 0..n {
        a.write_all(&out).map_err(ioe("send"))?;
        b.read_exact(&mut buf).map_err(ioe("receive"))?;
        b.write_all(&buf).map_err(ioe("reply"))?;
        a.read_exact(&mut buf).map_err(ioe("receive the reply"))?;
        got += buf.len() as u64;
    }
    Ok(got)
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

pub fn stream_pipe(env: &mut TaskEnv) -> Result<(), String> {
    let (mut a, mut b) = UnixStream::pair().map_err(ioe("socketpair"))?;
    for s in [&a, &b] {
        s.set_read_timeout(Some(RECV_TIMEOUT)).map_err(ioe("timeout"))?;
    }
    env.sink = env.sink.wrapping_add(stream_round_trips(&mut a, &mut b, 100)?);
    Ok(())
}

pub fn dgram_pipe(env: &mut TaskEnv) -> Result<(), String> {
    let (a, b) = UnixDatagram::pair().map_err(ioe("socketpair"))?;
    for s in [&a, &b] {
        s.set_read_timeout(Some(RECV_TIMEOUT)).map_err(ioe("timeout"))?;
    }
    let mut buf = [0u8; MSG_BYTES];
    for _ in 0..100 {
        a.send(&[3u8; MSG_BYTES]).map_err(ioe("send"))?;
        let n = b.recv(&mut buf).map_err(ioe("receive"))?;
        b.send(&buf[..n]).map_err(ioe("reply"))?;
        env.sink = env.sink.wrapping_add(a.recv(&mut buf).map_err(ioe("receive the reply"))? as u64);
    }
    Ok(())
}

pub fn tcp_test(env: &mut TaskEnv) -> Result<(), String> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(ioe("bind 127.0.0.1"))?;
    let addr = listener.local_addr().map_err(ioe("local address"))?;
    let mut client = TcpStream::connect_timeout(&addr, RECV_TIMEOUT).map_err(ioe("connect"))?;
    let (mut server, _) = listener.accept().map_err(ioe("accept"))?;
    for s in [&client, &server] {
        s.set_read_timeout(Some(RECV_TIMEOUT)).map_err(ioe("timeout"))?;
        s.set_nodelay(true).map_err(ioe("nodelay"))?;
    }
    env.sink = env.sink.wrapping_add(stream_round_trips(&mut client, &mut server, 90)?);
    Ok(())
}

pub fn udp_test(env: &mut TaskEnv) -> Result<(), String> {
    let a = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).map_err(ioe("bind 127.0.0.1"))?;
    let b = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).map_err(ioe("bind 127.0.0.1"))?;
    let (aa, ba) = (a.local_addr().map_err(ioe("address"))?, b.local_addr().map_err(ioe("address"))?);
    for s in [&a, &b] {
        s.set_read_timeout(Some(RECV_TIMEOUT)).map_err(ioe("timeout"))?;
    }
    let mut buf = [0u8; MSG_BYTES];
    for _ in 0..55 {
        a.send_to(&[5u8; MSG_BYTES], ba).map_err(ioe("send"))?;
        let (n, _) = b.recv_from(&mut buf).map_err(ioe("receive"))?;
        b.send_to(&buf[..n], aa).map_err(ioe("reply"))?;
        env.sink = env.sink.wrapping_add(a.recv_from(&mut buf).map_err(ioe("receive the reply"))?.0 as u64);
    }
    Ok(())
}

/// Forks; the child runs `child` and `_exit`s, and the parent waits for it.
fn fork_wait(child: impl FnOnce()) -> Result<i32, String> {
    // SAFETY: the child only calls async-signal-safe functions (execv, _exit).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(os_err("fork"));
    }
    if pid == 0 {
        child();
        // SAFETY: leaves the forked child at once.
        unsafe { libc::_exit(127) };
    }
    let mut status = 0;
    // SAFETY: waits for the child just forked.
    if unsafe { libc::waitpid(pid, &mut status, 0) } != pid {
        return Err(os_err("waitpid"));
    }
    Ok(status)
}

pub fn fork_test(env: &mut TaskEnv) -> Result<(), String> {
    for _ in 0..100 {
        // SAFETY: _exit in the forked child.
        let status = fork_wait(|| unsafe { libc::_exit(0) })?;
        env.sink = env.sink.wrapping_add(status as u64);
    }
    Ok(())
}

pub fn exec_test(env: &mut TaskEnv) -> Result<(), String> {
    const TRUE: &std::ffi::CStr = c"/bin/true";
    if !std::path::Path::new("/bin/true").exists() {
        return Err("/bin/true is missing; install coreutils or drop exec_test from the workfile".into());
    }
    for _ in 0..5 {
        let status = fork_wait(|| {
            let argv = [TRUE.as_ptr(), std::ptr::null()];
            // SAFETY: execv with a NUL-terminated argv (fork_wait _exits if it fails).
            unsafe { libc::execv(TRUE.as_ptr(), argv.as_ptr()) };
        })?;
        if status != 0 {
            return Err(format!("/bin/true ended with status {status}"));
        }
        env.sink = env.sink.wrapping_add(1);
    }
    Ok(())
}
