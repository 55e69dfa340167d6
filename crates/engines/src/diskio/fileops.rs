//! File-level operations around the I/O: fsync inside the timing, evicting a file from the
//! page cache (cold reads without root), free space on a target, direct-I/O record sizes.

use crate::error::EngineError;
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// fsync the file (for fsync-inside-timing).
pub fn fsync(file: &File, path: &Path) -> Result<(), EngineError> {
    file.sync_all().map_err(|e| EngineError::Failed(format!("fsync of {} failed: {e}", path.display())))
}

/// Evicts the file's pages from the page cache without root: fdatasync, then
/// posix_fadvise(POSIX_FADV_DONTNEED) over the whole file (makes the next read cold).
pub fn evict_from_cache(file: &File, path: &Path) -> Result<(), EngineError> {
    file.sync_data()
        .map_err(|e| EngineError::Failed(format!("fdatasync of {} failed: {e}", path.display())))?;
    fadvise(file, path, libc::POSIX_FADV_DONTNEED, "")
}

/// posix_fadvise over the whole file; `hint` ends the error message.
fn fadvise(file: &File, path: &Path, advice: libc::c_int, hint: &str) -> Result<(), EngineError> {
    // SAFETY: plain syscall on a descriptor we borrow; offset 0 / len 0 means the whole file.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, advice) };
    if rc != 0 {
        return Err(EngineError::Failed(format!(
            "posix_fadvise({advice}) on {} failed: {}{hint}",
            path.display(),
            io::Error::from_raw_os_error(rc)
        )));
    }
    Ok(())
}

/// Advises the kernel of the access pattern over the whole file, as fio's `fadvise_hint=1`:
/// RANDOM (no readahead) for random phases, SEQUENTIAL (a doubled readahead window) for the
/// others.
pub fn advise(file: &File, path: &Path, random: bool) -> Result<(), EngineError> {
    let advice = if random { libc::POSIX_FADV_RANDOM } else { libc::POSIX_FADV_SEQUENTIAL };
    fadvise(file, path, advice, "; set fadvise_hint=false to run without advice")
}

/// Bytes of free space for unprivileged users on the filesystem holding `dir`
/// (statvfs f_bavail × f_frsize).
pub fn free_bytes(dir: &Path) -> Result<u64, EngineError> {
    let c_path = CString::new(dir.as_os_str().as_bytes()).map_err(|_| {
        EngineError::Usage(format!("{} contains a NUL byte; choose another directory", dir.display()))
    })?;
    // SAFETY: statvfs is plain old data; all-zero is a valid value.
    let mut vfs: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c_path is NUL-terminated and vfs is a valid, writable statvfs.
    let rc = unsafe { libc::statvfs(c_path.as_ptr(), &mut vfs) };
    if rc != 0 {
        let e = io::Error::last_os_error();
        return Err(EngineError::Usage(format!(
            "cannot read the free space of {}: {e}; choose an existing directory",
            dir.display()
        )));
    }
    #[allow(clippy::useless_conversion)] // the field types differ between targets
    let bytes = u64::from(vfs.f_bavail).saturating_mul(u64::from(vfs.f_frsize));
    Ok(bytes)
}
