//! How much of a file the page cache holds, read with mincore(2) over a read-only shared
//! mapping (no page is faulted in: mincore only reports).

use std::fs::File;
use std::os::unix::io::AsRawFd;

/// Bytes of `file` resident in the page cache (whole pages; 0 for an empty file). The file
/// must be open for reading (it is mapped read-only).
pub fn cached_bytes(file: &File) -> std::io::Result<u64> {
    cached_bytes_of(file, file.metadata()?.len())
}

/// Bytes of the first `len` bytes of `file` resident in the page cache: for a block device,
/// whose metadata gives no length, `len` is its size.
pub fn cached_bytes_of(file: &File, len: u64) -> std::io::Result<u64> {
    if len == 0 {
        return Ok(0);
    }
    // SAFETY: sysconf has no memory effects.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    let map_len = usize::try_from(len).map_err(|_| std::io::Error::other("file too large to map"))?;
    // SAFETY: a fresh read-only shared mapping of an open file; unmapped below on every path.
    let addr = unsafe {
        libc::mmap(std::ptr::null_mut(), map_len, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0)
    };
    if addr == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    let pages = len.div_ceil(page) as usize;
    let mut vec = vec![0u8; pages];
    // SAFETY: `addr` maps `map_len` bytes and `vec` has one byte per page of it.
    let rc = unsafe { libc::mincore(addr, map_len, vec.as_mut_ptr()) };
    let err = (rc != 0).then(std::io::Error::last_os_error);
    // SAFETY: `addr`/`map_len` are exactly the mapping made above, used no more.
    unsafe { libc::munmap(addr, map_len) };
    if let Some(e) = err {
        return Err(e);
    }
    let resident = vec.iter().filter(|b| **b & 1 == 1).count() as u64;
    Ok((resident * page).min(len))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    /// A new file `f` in `dir` (readable, so it can be mapped) with `bytes` bytes written.
    pub(crate) fn written_file(dir: &std::path::Path, bytes: usize) -> File {
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(dir.join("f"))
            .expect("create a test file");
        f.write_all(&vec![7u8; bytes]).expect("write the test file");
        f
    }

    #[test]
    fn a_file_just_written_is_cached_and_an_evicted_one_is_not() {
        // /var/tmp: a disk filesystem (on tmpfs the pages could not be evicted).
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let f = written_file(dir.path(), 1 << 20);
        assert_eq!(cached_bytes(&f).unwrap(), 1 << 20, "just written: every page cached");
        f.sync_all().unwrap();
        // SAFETY: plain advice call on an open file.
        let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        assert_eq!(rc, 0);
        assert!(cached_bytes(&f).unwrap() < 1 << 20, "evicted: pages left the cache");
        assert_eq!(cached_bytes(&File::create(dir.path().join("e")).unwrap()).unwrap(), 0);
    }
}
