//! The op executor of one client: maps each loadfile op to the system calls dbench's
//! `fileio` backend makes, with a handle table, reused path buffers and pre-allocated
//! read/write buffers, so the replay loop does not allocate.

use super::loadfile::{Expect, Loadfile, Op, OpKind};
use std::ffi::CStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// NTCreateX create_options bit: the object is a directory.
const FILE_DIRECTORY_FILE: u32 = 0x1;
/// NTCreateX dispositions that add O_CREAT (FILE_CREATE) or O_CREAT|O_TRUNC (OVERWRITE[_IF]).
const FILE_CREATE: u32 = 2;
const FILE_OVERWRITE: u32 = 4;
const FILE_OVERWRITE_IF: u32 = 5;

/// dbench's -s, -S and -F.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExecConfig {
    /// O_SYNC on every open (-s).
    pub sync_open: bool,
    /// fdatasync the parent directory after unlink, rmdir and rename (-S).
    pub fsync_dirs: bool,
    /// fsync after every write (-F).
    pub fsync_writes: bool,
}

/// An error that ends the run: the disk is full, read-only, or out of descriptors.
#[derive(Debug)]
pub struct Fatal {
    pub line: u32,
    pub what: &'static str,
    pub path: PathBuf,
    pub source: io::Error,
}

/// True for errors that make further replay pointless.
pub fn is_fatal_errno(errno: i32) -> bool {
    matches!(errno, libc::ENOSPC | libc::EDQUOT | libc::EROFS | libc::EMFILE | libc::ENFILE)
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    fd: libc::c_int,
    path: u32,
}

const EMPTY: Slot = Slot { fd: -1, path: 0 };

/// One client's executor.
pub struct Executor<'a> {
    lf: &'a Loadfile,
    root: Vec<u8>,
    root_c: Vec<u8>,
    client: Vec<u8>,
    cfg: ExecConfig,
    slots: Vec<Slot>,
    read_buf: Vec<u8>,
    zero_buf: Vec<u8>,
    path_a: Vec<u8>,
    path_b: Vec<u8>,
    scratch: Vec<u8>,
    /// Ops whose outcome differed from the loadfile's expectation (dbench prints these).
    pub errors: u64,
    line: u32,
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// A NUL-terminated buffer as a C string (buffers are built by `compose`, which adds NUL).
fn cstr(buf: &[u8]) -> &CStr {
    CStr::from_bytes_until_nul(buf).unwrap_or(c"")
}

impl<'a> Executor<'a> {
    /// An executor for client `id` (0-based) working under `root`.
    pub fn new(lf: &'a Loadfile, root: &Path, id: usize, cfg: ExecConfig) -> Self {
        let root = root.as_os_str().as_bytes().to_vec();
        let mut root_c = root.clone();
        root_c.push(0);
        Executor {
            lf,
            root,
            root_c,
            client: format!("client{id}").into_bytes(),
            cfg,
            slots: vec![EMPTY; lf.handles],
            read_buf: vec![0; lf.max_io.max(1)],
            zero_buf: vec![0; lf.max_io.max(1)],
            path_a: Vec::with_capacity(512),
            path_b: Vec::with_capacity(512),
            scratch: Vec::with_capacity(512),
            errors: 0,
            line: 0,
        }
    }

    /// This client's own directory, `root/clients/client<id>`.
    #[cfg(test)]
    pub fn client_dir(&self) -> PathBuf {
        let mut p = PathBuf::from(std::ffi::OsStr::from_bytes(&self.root));
        p.push("clients");
        p.push(std::ffi::OsStr::from_bytes(&self.client));
        p
    }

    fn fatal(&self, what: &'static str, path: &[u8], err: i32) -> Fatal {
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(cstr(path).to_bytes()));
        Fatal { line: self.line, what, path, source: io::Error::from_raw_os_error(err) }
    }

    /// Counts a mismatch between outcome and expectation; full disks end the run.
    fn check(&mut self, ok: bool, expect: Expect, what: &'static str, path_is_b: bool) -> Result<(), Fatal> {
        if ok {
            if expect == Expect::Fail {
                self.errors += 1;
            }
            return Ok(());
        }
        let e = errno();
        if is_fatal_errno(e) {
            let p = if path_is_b { &self.path_b } else { &self.path_a };
            return Err(self.fatal(what, p, e));
        }
        if expect == Expect::Ok {
            self.errors += 1;
        }
        Ok(())
    }

    fn fd(&mut self, handle: u32) -> Option<libc::c_int> {
        match self.slots[handle as usize].fd {
            -1 => {
                self.errors += 1;
                None
            }
            fd => Some(fd),
        }
    }

    /// Runs one op. Returns the payload bytes (ReadX/WriteX requested size, else 0).
    pub fn exec(&mut self, op: &Op) -> Result<u64, Fatal> {
        self.line = op.line;
        match op.kind {
            OpKind::ReadX { handle, offset, size, ret_size } => {
                self.read(handle, offset, size, ret_size);
                return Ok(u64::from(size));
            }
            OpKind::WriteX { handle, offset, size, ret_size } => {
                if let Some(fd) = self.fd(handle) {
                    self.write(fd, handle, offset, size, ret_size)?;
                }
                return Ok(u64::from(size));
            }
            OpKind::NtCreateX { path, options, disposition, handle } => {
                self.compose(path, false);
                self.create(options, disposition, handle, path, op.expect)?;
            }
            OpKind::Unlink { .. }
            | OpKind::Rename { .. }
            | OpKind::Mkdir { .. }
            | OpKind::Rmdir { .. }
            | OpKind::Deltree { .. }
            | OpKind::QueryPath { .. }
            | OpKind::FindFirst { .. } => self.path_op(op.kind, op.expect)?,
            OpKind::Close { .. }
            | OpKind::Flush { .. }
            | OpKind::QueryFs
            | OpKind::QueryFile { .. }
            | OpKind::SetFile { .. }
            | OpKind::LockX { .. }
            | OpKind::UnlockX { .. } => self.handle_op(op.kind),
        }
        Ok(0)
    }

    /// Composes loadfile path `path` for this client into `path_b` (`use_b`) or `path_a`.
    fn compose(&mut self, path: u32, use_b: bool) {
        let out = if use_b { &mut self.path_b } else { &mut self.path_a };
        self.lf.paths[path as usize].compose(&self.root, &self.client, out);
    }

    /// ReadX: pread into the read buffer; a short or failed read is counted as an error.
    fn read(&mut self, handle: u32, offset: u64, size: u32, ret_size: u32) {
        let Some(fd) = self.fd(handle) else { return };
        // SAFETY: read_buf holds at least max_io >= size bytes.
        let r = unsafe {
            libc::pread(fd, self.read_buf.as_mut_ptr().cast(), size as usize, offset as libc::off_t)
        };
        if r != ret_size as isize {
            self.errors += 1;
        }
    }

    /// The ops on names: unlink, rename, mkdir, rmdir, deltree and the lookups.
    fn path_op(&mut self, kind: OpKind, expect: Expect) -> Result<(), Fatal> {
        match kind {
            OpKind::Unlink { path } => {
                self.compose(path, false);
                self.resolve(false);
                // SAFETY: path_a is NUL-terminated.
                let ok = unsafe { libc::unlink(cstr(&self.path_a).as_ptr()) } == 0;
                self.check(ok, expect, "unlink", false)?;
                self.sync_parent(false);
            }
            OpKind::Rename { from, to } => {
                self.compose(from, false);
                self.compose(to, true);
                self.resolve(false);
                self.resolve(true);
                // SAFETY: both buffers are NUL-terminated.
                let ok =
                    unsafe { libc::rename(cstr(&self.path_a).as_ptr(), cstr(&self.path_b).as_ptr()) } == 0;
                self.check(ok, expect, "rename", true)?;
                self.sync_parent(true);
            }
            OpKind::Mkdir { path } => {
                self.compose(path, false);
                self.resolve(false);
                // SAFETY: path_a is NUL-terminated. dbench ignores mkdir's result.
                if unsafe { libc::mkdir(cstr(&self.path_a).as_ptr(), 0o777) } != 0 && is_fatal_errno(errno())
                {
                    return Err(self.fatal("mkdir", &self.path_a, errno()));
                }
            }
            OpKind::Rmdir { path } => {
                self.compose(path, false);
                self.resolve(false);
                // SAFETY: path_a is NUL-terminated.
                let ok = unsafe { libc::rmdir(cstr(&self.path_a).as_ptr()) } == 0;
                self.check(ok, expect, "rmdir", false)?;
                self.sync_parent(false);
            }
            OpKind::Deltree { path } => {
                self.compose(path, false);
                self.path_a.pop();
                let mut p = std::mem::take(&mut self.path_a);
                self.errors += deltree(&mut p);
                self.path_a = p;
            }
            OpKind::QueryPath { path } => {
                self.compose(path, false);
                self.resolve(false);
            }
            OpKind::FindFirst { path, maxcnt, wildcard } => {
                self.compose(path, false);
                self.resolve(false);
                if wildcard {
                    self.list_parent(maxcnt);
                }
            }
            _ => unreachable!("not an op on a name: {kind:?}"),
        }
        Ok(())
    }

    /// The ops on open handles (and QUERY_FS_INFORMATION), which never end the run.
    fn handle_op(&mut self, kind: OpKind) {
        match kind {
            OpKind::Close { handle } => {
                if let Some(fd) = self.fd(handle) {
                    // SAFETY: fd is an open descriptor owned by this slot.
                    unsafe { libc::close(fd) };
                    self.slots[handle as usize] = EMPTY;
                }
            }
            OpKind::Flush { handle } => {
                if let Some(fd) = self.fd(handle) {
                    // SAFETY: plain syscall on an owned descriptor.
                    unsafe { libc::fsync(fd) };
                }
            }
            OpKind::QueryFs => {
                // SAFETY: statvfs writes into a zeroed struct we own.
                let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
                unsafe { libc::statvfs(cstr(&self.root_c).as_ptr(), &mut st) };
            }
            OpKind::QueryFile { handle } => {
                if let Some(fd) = self.fd(handle) {
                    // SAFETY: fstat writes into a zeroed struct we own.
                    let mut st: libc::stat = unsafe { std::mem::zeroed() };
                    unsafe { libc::fstat(fd, &mut st) };
                }
            }
            OpKind::SetFile { handle } => self.set_times(handle),
            OpKind::LockX { handle, offset, size } => self.lock(handle, offset, size, libc::F_WRLCK),
            OpKind::UnlockX { handle, offset, size } => self.lock(handle, offset, size, libc::F_UNLCK),
            _ => unreachable!("not an op on a handle: {kind:?}"),
        }
    }

    fn create(
        &mut self,
        options: u32,
        disposition: u32,
        handle: u32,
        path: u32,
        expect: Expect,
    ) -> Result<(), Fatal> {
        self.resolve(false);
        let mut flags = libc::O_RDWR | libc::O_CLOEXEC;
        if self.cfg.sync_open {
            flags |= libc::O_SYNC;
        }
        if disposition == FILE_CREATE {
            flags |= libc::O_CREAT;
        }
        if disposition == FILE_OVERWRITE || disposition == FILE_OVERWRITE_IF {
            flags |= libc::O_CREAT | libc::O_TRUNC;
        }
        let name = cstr(&self.path_a).as_ptr();
        if options & FILE_DIRECTORY_FILE != 0 {
            // SAFETY: name points into path_a, NUL-terminated. Like dbench, the result is ignored.
            if unsafe { libc::mkdir(name, 0o700) } != 0 && is_fatal_errno(errno()) {
                return Err(self.fatal("mkdir", &self.path_a, errno()));
            }
            flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
        }
        // SAFETY: as above; the mode argument is read only with O_CREAT.
        let mut fd = unsafe { libc::open(name, flags, 0o600) };
        if fd == -1 && errno() == libc::EISDIR {
            fd = unsafe { libc::open(name, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC, 0o600) };
        }
        if fd == -1 {
            return self.check(false, expect, "open", false);
        }
        if expect == Expect::Fail {
            self.errors += 1;
            // SAFETY: we own fd.
            unsafe { libc::close(fd) };
            return Ok(());
        }
        let slot = &mut self.slots[handle as usize];
        if slot.fd != -1 {
            // A handle reopened without Close: close the old descriptor so none leaks.
            unsafe { libc::close(slot.fd) };
        }
        *slot = Slot { fd, path };
        // SAFETY: fstat writes into a zeroed struct we own.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        unsafe { libc::fstat(fd, &mut st) };
        Ok(())
    }

    fn write(
        &mut self,
        fd: libc::c_int,
        _handle: u32,
        offset: u64,
        size: u32,
        ret_size: u32,
    ) -> Result<(), Fatal> {
        // SAFETY: zero_buf holds at least max_io >= size bytes.
        let r =
            unsafe { libc::pwrite(fd, self.zero_buf.as_ptr().cast(), size as usize, offset as libc::off_t) };
        if r == -1 {
            let e = errno();
            if is_fatal_errno(e) {
                let slot = self.slots.iter().find(|s| s.fd == fd).map_or(0, |s| s.path);
                let (lf, root, client) = (self.lf, self.root.clone(), self.client.clone());
                lf.paths[slot as usize].compose(&root, &client, &mut self.scratch);
                return Err(self.fatal("write", &self.scratch, e));
            }
            self.errors += 1;
        } else if r != ret_size as isize {
            self.errors += 1;
        }
        if self.cfg.fsync_writes {
            // SAFETY: plain syscall on an owned descriptor.
            unsafe { libc::fsync(fd) };
        }
        Ok(())
    }

    /// dbench's resolve_name: stat, and on failure a case-insensitive scan of the parent.
    fn resolve(&mut self, use_b: bool) {
        let path = if use_b { &self.path_b } else { &self.path_a };
        // SAFETY: stat writes into a zeroed struct we own; path is NUL-terminated.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::stat(cstr(path).as_ptr(), &mut st) } == 0 {
            return;
        }
        let bytes = cstr(path).to_bytes();
        let Some(slash) = bytes.iter().rposition(|&c| c == b'/') else { return };
        self.scratch.clear();
        self.scratch.extend_from_slice(&bytes[..slash]);
        self.scratch.push(0);
        let name = &bytes[slash + 1..];
        scan_dir(&self.scratch, |entry| entry.eq_ignore_ascii_case(name));
    }

    /// FIND_FIRST with a wildcard: read up to `maxcnt` entries of the pattern's directory.
    fn list_parent(&mut self, maxcnt: u32) {
        let bytes = cstr(&self.path_a).to_bytes();
        let Some(slash) = bytes.iter().rposition(|&c| c == b'/') else { return };
        self.scratch.clear();
        self.scratch.extend_from_slice(&bytes[..slash]);
        self.scratch.push(0);
        let mut left = maxcnt;
        scan_dir(&self.scratch, |_| {
            left = left.saturating_sub(1);
            left == 0
        });
    }

    /// -S: fdatasync the directory holding the (new) name.
    fn sync_parent(&mut self, use_b: bool) {
        if !self.cfg.fsync_dirs {
            return;
        }
        let bytes = cstr(if use_b { &self.path_b } else { &self.path_a }).to_bytes();
        let slash = bytes.iter().rposition(|&c| c == b'/').unwrap_or(0);
        self.scratch.clear();
        self.scratch.extend_from_slice(if slash == 0 { b"." } else { &bytes[..slash] });
        self.scratch.push(0);
        // SAFETY: scratch is NUL-terminated; we close the fd we open.
        unsafe {
            let fd = libc::open(cstr(&self.scratch).as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            if fd >= 0 {
                libc::fdatasync(fd);
                libc::close(fd);
            } else {
                self.errors += 1;
            }
        }
    }

    /// SET_FILE_INFORMATION: fstat, then utime(name, atime - 10, mtime - 12).
    fn set_times(&mut self, handle: u32) {
        let Some(fd) = self.fd(handle) else { return };
        let path = self.slots[handle as usize].path;
        self.lf.paths[path as usize].compose(&self.root, &self.client, &mut self.scratch);
        // SAFETY: fstat/utime with structs we own and a NUL-terminated name.
        unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            libc::fstat(fd, &mut st);
            let tm = libc::utimbuf { actime: st.st_atime - 10, modtime: st.st_mtime - 12 };
            libc::utime(cstr(&self.scratch).as_ptr(), &tm);
        }
    }

    fn lock(&mut self, handle: u32, offset: u64, size: u64, kind: libc::c_int) {
        let Some(fd) = self.fd(handle) else { return };
        // SAFETY: fcntl(F_SETLKW) with a flock we own.
        unsafe {
            let mut fl: libc::flock = std::mem::zeroed();
            fl.l_type = kind as libc::c_short;
            fl.l_whence = libc::SEEK_SET as libc::c_short;
            fl.l_start = offset as libc::off_t;
            fl.l_len = size as libc::off_t;
            libc::fcntl(fd, libc::F_SETLKW, &fl);
        }
    }

    /// Closes every handle still open (end of a pass, end of the run).
    pub fn close_all(&mut self) {
        for s in &mut self.slots {
            if s.fd != -1 {
                // SAFETY: we own the descriptor.
                unsafe { libc::close(s.fd) };
                *s = EMPTY;
            }
        }
    }
}

impl Drop for Executor<'_> {
    fn drop(&mut self) {
        self.close_all();
    }
}

/// Reads the entries of directory `dir` (NUL-terminated) until `stop(name)` returns true.
fn scan_dir(dir: &[u8], mut stop: impl FnMut(&[u8]) -> bool) {
    // SAFETY: opendir/readdir/closedir on a NUL-terminated path; entries are read before
    // the next readdir call and the stream is always closed.
    unsafe {
        let d = libc::opendir(cstr(dir).as_ptr());
        if d.is_null() {
            return;
        }
        loop {
            let e = libc::readdir64(d);
            if e.is_null() {
                break;
            }
            let name = CStr::from_ptr((*e).d_name.as_ptr()).to_bytes();
            if stop(name) {
                break;
            }
        }
        libc::closedir(d);
    }
}

/// dbench's Deltree: unlinks every non-directory below `dir` (no NUL), recursing into
/// directories via stat, without removing the directories. Returns failed unlinks.
pub fn deltree(dir: &mut Vec<u8>) -> u64 {
    let mut names: Vec<Vec<u8>> = Vec::new();
    dir.push(0);
    scan_dir(dir, |n| {
        if n != b"." && n != b".." {
            names.push(n.to_vec());
        }
        false
    });
    dir.pop();
    let mut failures = 0;
    let base = dir.len();
    for n in names {
        dir.push(b'/');
        dir.extend_from_slice(&n);
        dir.push(0);
        // SAFETY: dir is NUL-terminated here; stat writes into a struct we own.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::stat(cstr(dir).as_ptr(), &mut st) } == 0 {
            if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
                dir.pop();
                failures += deltree(dir);
            } else if unsafe { libc::unlink(cstr(dir).as_ptr()) } != 0 {
                failures += 1;
            }
        }
        dir.truncate(base);
    }
    failures
}

#[cfg(test)]
#[path = "exec_tests.rs"]
mod tests;
