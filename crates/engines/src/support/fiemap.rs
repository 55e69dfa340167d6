//! How a file's bytes sit on its filesystem, read with the FIEMAP ioctl: which ranges are
//! allocated, and which of those are unwritten (fallocated, reading as zeros). The disk
//! engines record it for the files a window starts with, and tests pin their layouts by it.

use std::fs::File;
use std::os::unix::io::AsRawFd;

/// `_IOWR('f', 11, struct fiemap)`.
const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
/// Flush dirty data first, so that delayed allocation shows as allocated.
const FIEMAP_FLAG_SYNC: u32 = 0x1;
const FIEMAP_EXTENT_LAST: u32 = 0x1;
const FIEMAP_EXTENT_UNWRITTEN: u32 = 0x800;
/// Extents asked for per call.
const BATCH: usize = 256;

/// `struct fiemap_extent` (56 bytes).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct RawExtent {
    logical: u64,
    physical: u64,
    length: u64,
    reserved64: [u64; 2],
    flags: u32,
    reserved: [u32; 3],
}

/// `struct fiemap` with room for BATCH extents.
#[repr(C)]
struct Request {
    start: u64,
    length: u64,
    flags: u32,
    mapped_extents: u32,
    extent_count: u32,
    reserved: u32,
    extents: [RawExtent; BATCH],
}

/// What a file's extents add up to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Allocation {
    /// Bytes in extents (written or not).
    pub mapped_bytes: u64,
    /// Bytes in unwritten extents.
    pub unwritten_bytes: u64,
    pub extents: u64,
}

/// The allocation of `file` over its whole length; an error (EOPNOTSUPP on tmpfs, for one)
/// where the filesystem has no FIEMAP.
pub fn allocation(file: &File) -> std::io::Result<Allocation> {
    let mut out = Allocation::default();
    let mut start = 0u64;
    loop {
        let mut req = Request {
            start,
            length: u64::MAX - start,
            flags: FIEMAP_FLAG_SYNC,
            mapped_extents: 0,
            extent_count: BATCH as u32,
            reserved: 0,
            extents: [RawExtent::default(); BATCH],
        };
        // SAFETY: `req` is a valid, writable `struct fiemap` with `extent_count` extents of room.
        if unsafe { libc::ioctl(file.as_raw_fd(), FS_IOC_FIEMAP, &mut req as *mut Request) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let got = &req.extents[..(req.mapped_extents as usize).min(BATCH)];
        for e in got {
            out.extents += 1;
            out.mapped_bytes += e.length;
            if e.flags & FIEMAP_EXTENT_UNWRITTEN != 0 {
                out.unwritten_bytes += e.length;
            }
        }
        match got.last() {
            Some(e) if e.flags & FIEMAP_EXTENT_LAST == 0 && got.len() == BATCH => {
                start = e.logical + e.length
            }
            _ => return Ok(out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn written_fallocated_and_sparse_files_are_told_apart() {
        // /var/tmp is on the root filesystem (ext4 here and in CI), unlike a tmpfs /tmp.
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let mut w = File::create(dir.path().join("w")).unwrap();
        w.write_all(&vec![7u8; 1 << 20]).unwrap();
        let a = match allocation(&w) {
            Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => {
                racehorse_testkit::skip!("/var/tmp's filesystem has no FIEMAP ({e})");
                return;
            }
            a => a.unwrap(),
        };
        assert_eq!((a.mapped_bytes, a.unwritten_bytes), (1 << 20, 0), "{a:?}");
        let f = File::create(dir.path().join("f")).unwrap();
        crate::support::disk_layout::fallocate(&f, 1 << 20).unwrap();
        let a = allocation(&f).unwrap();
        assert_eq!((a.mapped_bytes, a.unwritten_bytes), (1 << 20, 1 << 20), "{a:?}");
        let s = File::create(dir.path().join("s")).unwrap();
        s.set_len(1 << 20).unwrap();
        assert_eq!(allocation(&s).unwrap(), Allocation::default());
    }
}
