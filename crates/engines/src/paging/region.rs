//! The paging engine's region: an anonymous or file-backed mapping, filled once, then touched
//! one page at a time at random. Unmapped on drop; the file lives in the cell's work directory.

use crate::support::direct_io::{open_file, AlignedBuf, OpenMode};
use crate::support::rng::SplitMix64;
use crate::EngineError;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Bytes written per call while creating the backing file.
const FILL_CHUNK: usize = 1 << 20;

/// A mapped region of `pages` pages.
pub struct Region {
    base: *mut u8,
    len: usize,
    page: usize,
    /// Kept open for the mapping's life (file-backed only).
    _file: Option<File>,
}

// The mapping is plain memory shared by the touching threads; touches are single-byte
// volatile reads or writes, and no Rust reference into it is ever made.
unsafe impl Send for Region {}
unsafe impl Sync for Region {}

pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as usize
    } else {
        4096
    }
}

fn map(len: usize, fd: Option<&File>) -> Result<*mut u8, EngineError> {
    use std::os::fd::AsRawFd;
    let (flags, raw) = match fd {
        Some(f) => (libc::MAP_SHARED, f.as_raw_fd()),
        None => (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE, -1),
    };
    // SAFETY: a fresh mapping at an address of the kernel's choosing; checked below.
    let p =
        unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, flags, raw, 0) };
    if p == libc::MAP_FAILED {
        return Err(EngineError::Failed(format!(
            "cannot map the {} MiB region: {}",
            len >> 20,
            std::io::Error::last_os_error()
        )));
    }
    // Random access: no readahead, so one fault moves one page (as a pager does).
    // SAFETY: advice on the mapping just made; failure only loses the hint.
    unsafe { libc::madvise(p, len, libc::MADV_RANDOM) };
    Ok(p.cast())
}

/// Writes `len` bytes of pseudo-random data to `path`, with O_DIRECT where the filesystem
/// allows it so that creating the file fills neither the page cache nor the memory limit.
fn create_file(path: &Path, len: usize) -> Result<File, EngineError> {
    let mut buf = AlignedBuf::new(FILL_CHUNK)?;
    let mut rng = SplitMix64::new(0x5eed);
    for w in buf.as_mut_slice().chunks_exact_mut(8) {
        w.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    let direct = OpenMode { write: true, create_truncate: true, direct: true };
    let (file, direct) = match open_file(path, direct) {
        Ok(f) => (f, true),
        Err(_) => (open_file(path, OpenMode { direct: false, ..direct })?, false),
    };
    let full = |e| EngineError::io("cannot write the paging file; is the target full?", path, e);
    let mut done = 0usize;
    while done < len {
        let n = (len - done).min(FILL_CHUNK);
        file.write_all_at(&buf.as_slice()[..n], done as u64).map_err(full)?;
        done += n;
        if !direct && done.is_multiple_of(64 << 20) {
            file.sync_data().map_err(full)?;
        }
    }
    let mut f = &file;
    f.flush().and_then(|_| file.sync_all()).map_err(full)?;
    drop(file);
    open_file(path, OpenMode { write: true, ..OpenMode::default() })
}

impl Region {
    /// An anonymous region, every page written once (so each holds data that must be
    /// swapped out, not a shared zero page).
    pub fn anonymous(len: usize) -> Result<Region, EngineError> {
        let page = page_size();
        let base = map(len, None)?;
        let r = Region { base, len, page, _file: None };
        let mut rng = SplitMix64::new(0xa11);
        for p in 0..r.pages() {
            // SAFETY: inside the mapping; 8 bytes at a page start are in bounds.
            unsafe { std::ptr::write_volatile(base.add(p * page).cast::<u64>(), rng.next_u64()) };
        }
        Ok(r)
    }

    /// A region mapped from a new file `path` of `len` bytes.
    pub fn file_backed(path: &Path, len: usize) -> Result<Region, EngineError> {
        let file = create_file(path, len)?;
        let base = map(len, Some(&file))?;
        Ok(Region { base, len, page: page_size(), _file: Some(file) })
    }

    pub fn pages(&self) -> usize {
        self.len / self.page
    }

    /// Touches page `index`: reads its first byte, or with `write` adds one to it.
    pub fn touch(&self, index: usize, write: bool) -> u8 {
        assert!(index < self.pages(), "page {index} outside the region");
        // SAFETY: in bounds (checked above); volatile so the access really happens.
        unsafe {
            let p = self.base.add(index * self.page);
            let v = std::ptr::read_volatile(p);
            if write {
                std::ptr::write_volatile(p, v.wrapping_add(1));
            }
            v
        }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_hold_their_data_and_count_pages() {
        let a = Region::anonymous(64 * page_size()).expect("anon");
        assert_eq!(a.pages(), 64);
        let before = a.touch(3, true);
        assert_eq!(a.touch(3, false), before.wrapping_add(1), "a write touch changes the page");
        let dir = tempfile::tempdir_in("/var/tmp").expect("tmp");
        let path = dir.path().join("r.dat");
        let f = Region::file_backed(&path, 32 * page_size()).expect("file");
        assert_eq!(f.pages(), 32);
        assert_eq!(std::fs::metadata(&path).expect("file").len(), 32 * page_size() as u64);
        let v = f.touch(31, true);
        drop(f);
        let on_disk = std::fs::read(&path).expect("read");
        assert_eq!(on_disk[31 * page_size()], v.wrapping_add(1), "shared mapping writes reach the file");
    }
}
