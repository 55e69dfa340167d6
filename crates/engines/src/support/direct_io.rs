//! Files for I/O that may bypass the page cache, shared by the disk engines (diskio, paging,
//! smallread): 4 KiB-aligned buffers of incompressible, non-repeating bytes (O_DIRECT-safe), and
//! opening a file with the modes they need, with errors that say what to do.

use std::alloc::{self, Layout};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use super::rng::SplitMix64;
use crate::error::EngineError;

/// How [`open_file`] opens a file. The file is always readable; `create_truncate` implies `write`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpenMode {
    pub write: bool,
    pub create_truncate: bool,
    pub direct: bool,
}

/// Opens `path` for reading (and writing with `write`/`create_truncate`, creating it with mode 0644);
/// with `direct`, O_DIRECT. EINVAL on an O_DIRECT open means the filesystem doesn't support it.
pub fn open_file(path: &Path, mode: OpenMode) -> Result<File, EngineError> {
    let mut opts = OpenOptions::new();
    opts.read(true).write(mode.write || mode.create_truncate);
    if mode.create_truncate {
        opts.create(true).truncate(true).mode(0o644);
    }
    if mode.direct {
        opts.custom_flags(libc::O_DIRECT);
    }
    let file = opts.open(path).map_err(|e| open_error(path, mode, &e))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(open_error(path, mode, &io::Error::from_raw_os_error(libc::EISDIR)));
    }
    Ok(file)
}

fn direct_unsupported(path: &str) -> EngineError {
    EngineError::Usage(format!(
        "O_DIRECT is not supported by the filesystem of {path}; use direct=false or another target"
    ))
}

fn open_error(path: &Path, mode: OpenMode, e: &io::Error) -> EngineError {
    let shown = path.display();
    let how = if mode.write || mode.create_truncate { "reading and writing" } else { "reading" };
    match e.raw_os_error() {
        Some(libc::EINVAL) if mode.direct => direct_unsupported(&shown.to_string()),
        Some(libc::ENOENT) if mode.create_truncate => EngineError::Usage(format!(
            "cannot create {shown}: its directory does not exist ({e}); create the directory or choose another target"
        )),
        Some(libc::ENOENT) => EngineError::Usage(format!(
            "cannot open {shown}: no such file ({e}); lay the file out first or choose another target"
        )),
        Some(libc::EACCES | libc::EPERM | libc::EROFS) => EngineError::Usage(format!(
            "cannot open {shown} for {how}: {e}; choose a target you may write to"
        )),
        Some(libc::EISDIR) => {
            EngineError::Usage(format!("{shown} is a directory; give a file path inside it as the target"))
        }
        _ => EngineError::Failed(format!("cannot open {shown} for {how}: {e}")),
    }
}

/// Alignment of every [`AlignedBuf`]; enough for O_DIRECT on any device with blocks up to 4 KiB.
pub const BUF_ALIGN_BYTES: usize = 4096;
/// Distinct seed per buffer so two buffers never hold the same bytes.
static BUF_SEED: AtomicU64 = AtomicU64::new(0x005E_ED0F_D15C);

/// Size and alignment of a transparent huge page on x86-64 and arm64 (4 KiB base pages).
const HUGE_BYTES: usize = 2 << 20;

/// Buffers from this size on get a huge page of their own. A 1 MiB buffer of 4 KiB pages
/// (one 1 MiB record at iodepth 1) reached a loop device as two 512 KiB requests, at half
/// fio's rate, whose 1 MiB arrived whole (BENCHMARKS.md, issue 24).
const HUGE_FROM_BYTES: usize = 512 << 10;

/// Where an [`AlignedBuf`]'s memory comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backing {
    /// The allocator below 512 KiB, its own huge-page mapping from there on.
    Auto,
    /// Its own 2 MiB-aligned mapping marked MADV_HUGEPAGE, whatever the size: physically
    /// contiguous when the kernel grants the huge page. A 64 KiB read into such a buffer
    /// reached this VM's virtio disk as one segment and was served 4-5x faster than into
    /// scattered 4 KiB pages (BENCHMARKS.md, issue 24).
    HugePages,
    /// The allocator whatever the size, as fio's default `mem=malloc`.
    Heap,
}

/// A buffer aligned to 4096 bytes (O_DIRECT-safe), filled with pseudo-random bytes that differ in
/// every 4 KiB block and between buffers (so compression or dedup can't cheat). With
/// [`Backing::HugePages`] (and [`Backing::Auto`] from 512 KiB on) it is its own 2 MiB-aligned
/// anonymous mapping (whole huge pages) marked MADV_HUGEPAGE before it is touched:
/// registered with io_uring, pages of one huge page count as one segment, so a 1 MiB I/O
/// stays within a device's segment limit (128 × 4 KiB pages would not, and the kernel then
/// splits it on io_uring's worker threads instead of submitting it inline).
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
    /// Length of the mapping when the buffer is mmap'ed (None: from the allocator).
    mapped: Option<usize>,
}

/// A 2 MiB-aligned anonymous mapping of at least `len` bytes with MADV_HUGEPAGE set, or None.
fn huge_mapping(len: usize) -> Option<(NonNull<u8>, usize)> {
    let size = len.div_ceil(HUGE_BYTES).checked_mul(HUGE_BYTES)?;
    let over = size.checked_add(HUGE_BYTES)?;
    // SAFETY: an anonymous private mapping with no address hint; checked for MAP_FAILED.
    let raw = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            over,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if raw == libc::MAP_FAILED {
        return None;
    }
    let start = raw as usize;
    let aligned = start.div_ceil(HUGE_BYTES) * HUGE_BYTES;
    // SAFETY: both trimmed ranges lie inside the mapping just made and are not used again.
    unsafe {
        if aligned > start {
            libc::munmap(raw, aligned - start);
        }
        let tail = start + over - (aligned + size);
        if tail > 0 {
            libc::munmap((aligned + size) as *mut libc::c_void, tail);
        }
        libc::madvise(aligned as *mut libc::c_void, size, libc::MADV_HUGEPAGE);
    }
    NonNull::new(aligned as *mut u8).map(|p| (p, size))
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Box<[u8]>.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared access only hands out `&[u8]`; there is no interior mutability.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// A buffer of `len_bytes` with [`Backing::Auto`].
    pub fn new(len_bytes: usize) -> Result<AlignedBuf, EngineError> {
        AlignedBuf::with_backing(len_bytes, Backing::Auto)
    }

    /// A buffer of `len_bytes` from `backing` (the heap when a huge-page mapping cannot be made).
    pub fn with_backing(len_bytes: usize, backing: Backing) -> Result<AlignedBuf, EngineError> {
        if len_bytes == 0 {
            return Err(EngineError::Usage("an I/O buffer needs at least 1 byte; bs must be > 0".into()));
        }
        let too_big = || {
            EngineError::Usage(format!(
                "cannot allocate {len_bytes} bytes of aligned I/O buffers; lower bs or iodepth"
            ))
        };
        let layout = Layout::from_size_align(len_bytes, BUF_ALIGN_BYTES).map_err(|_| too_big())?;
        let huge = match backing {
            Backing::HugePages => huge_mapping(len_bytes),
            Backing::Auto if len_bytes >= HUGE_FROM_BYTES => huge_mapping(len_bytes),
            Backing::Auto | Backing::Heap => None,
        };
        let mut buf = match huge {
            Some((ptr, size)) => AlignedBuf { ptr, layout, mapped: Some(size) },
            None => {
                // SAFETY: the layout has a non-zero size (checked above).
                let raw = unsafe { alloc::alloc_zeroed(layout) };
                AlignedBuf { ptr: NonNull::new(raw).ok_or_else(too_big)?, layout, mapped: None }
            }
        };
        let mut rng = SplitMix64::new(BUF_SEED.fetch_add(0x9E37_79B9, Ordering::Relaxed));
        for chunk in buf.as_mut_slice().chunks_mut(8) {
            let word = rng.next_u64().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
        Ok(buf)
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is a live, initialised allocation of layout.size() bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    #[cfg(test)] // beside `len` for clippy; only the tests ask
    pub fn is_empty(&self) -> bool {
        self.layout.size() == 0
    }

    /// Bytes of the buffer's own mapping that the kernel backs with transparent huge pages,
    /// and the mapping's size: (0, length) for a heap buffer; (0, size) when unreadable. Read from
    /// /proc/self/smaps: `AnonHugePages` of the kernel mapping holding the buffer, in
    /// proportion to the buffer's part of it (two buffers' mappings side by side can be
    /// merged into one, and then share its figure).
    pub fn huge_page_bytes(&self) -> (u64, u64) {
        let Some(size) = self.mapped else { return (0, self.len() as u64) };
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
        let size = size as u64;
        let huge = match anon_huge_bytes(&smaps, self.ptr.as_ptr() as usize) {
            Some((huge, span)) if span > 0 => (huge as u128 * u128::from(size) / u128::from(span)) as u64,
            _ => 0,
        };
        (huge.min(size), size)
    }

    /// Raw pointer `start` bytes into the buffer, made without creating a reference (the kernel may be
    /// writing other parts of the buffer at the same time).
    pub(crate) fn raw_at(&self, start: usize) -> *mut u8 {
        debug_assert!(start <= self.len());
        self.ptr.as_ptr().wrapping_add(start)
    }
}

/// `AnonHugePages` (bytes) of the mapping in `smaps` (the text of /proc/PID/smaps) that
/// holds `addr`, and that mapping's length; None when no mapping holds it or the field is
/// missing.
fn anon_huge_bytes(smaps: &str, addr: usize) -> Option<(u64, u64)> {
    let mut inside: Option<u64> = None;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((lo, hi)) = first.split_once('-') {
            if let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16)) {
                inside = (lo..hi).contains(&addr).then_some((hi - lo) as u64);
                continue;
            }
        }
        if let (Some(span), Some(kib)) = (inside, line.strip_prefix("AnonHugePages:")) {
            let kib: u64 = kib.trim().trim_end_matches("kB").trim().parse().ok()?;
            return Some((kib * 1024, span));
        }
    }
    None
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        match self.mapped {
            // SAFETY: ptr..ptr+size is the mapping made by huge_mapping, unmapped only here.
            Some(size) => unsafe {
                libc::munmap(self.ptr.as_ptr().cast(), size);
            },
            // SAFETY: ptr was allocated with exactly this layout and is freed only here.
            None => unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    const MIB: usize = 1024 * 1024;

    #[test]
    fn aligned_buf_is_aligned_and_filled_with_distinct_blocks() {
        let a = AlignedBuf::new(64 * 1024 + 100).expect("buf");
        let b = AlignedBuf::new(64 * 1024 + 100).expect("buf");
        assert_eq!(a.as_slice().as_ptr() as usize % 4096, 0);
        assert_eq!(a.len(), 64 * 1024 + 100);
        assert!(!a.is_empty());
        let blocks: HashSet<&[u8]> = a.as_slice().chunks(4096).collect();
        assert_eq!(blocks.len(), a.len().div_ceil(4096));
        assert!(a.as_slice().chunks(4096).all(|blk| blk.iter().any(|&x| x != 0)));
        assert_ne!(a.as_slice(), b.as_slice(), "two buffers must differ");
        assert!(matches!(AlignedBuf::new(0), Err(EngineError::Usage(_))));
        assert!(matches!(AlignedBuf::new(usize::MAX - 10), Err(EngineError::Usage(_))));
    }

    #[test]
    fn large_buffers_are_huge_page_aligned_mappings() {
        let big = AlignedBuf::new(8 * MIB + 4096).expect("buf");
        assert_eq!(big.as_slice().as_ptr() as usize % (2 << 20), 0, "2 MiB-aligned for huge pages");
        assert_eq!(big.len(), 8 * MIB + 4096);
        let blocks: HashSet<&[u8]> = big.as_slice().chunks(4096).collect();
        assert_eq!(blocks.len(), big.len() / 4096, "filled like the small ones");
        drop(big);
        let again = AlignedBuf::new(4 * MIB).expect("mapping freed and made again");
        assert_eq!(again.as_slice().as_ptr() as usize % (2 << 20), 0);
    }

    #[test]
    fn small_buffers_can_have_a_huge_page_of_their_own_or_stay_on_the_heap() {
        let huge = AlignedBuf::with_backing(64 * 1024, Backing::HugePages).expect("buf");
        assert_eq!(huge.as_slice().as_ptr() as usize % (2 << 20), 0, "its own 2 MiB-aligned mapping");
        let (_, mapped) = huge.huge_page_bytes();
        assert_eq!(mapped, 2 << 20, "one whole huge page");
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
        if thp.contains("[always]") || thp.contains("[madvise]") {
            // Compaction may fail on a fragmented machine; the kernel then maps 4 KiB pages.
            let (got, _) = huge.huge_page_bytes();
            assert!(got == 0 || got == 2 << 20, "{got}");
        }
        let heap = AlignedBuf::with_backing(2 * MIB, Backing::Heap).expect("buf");
        assert_eq!(heap.huge_page_bytes(), (0, 2 * MIB as u64), "from the allocator");
        assert_eq!(AlignedBuf::new(64 * 1024).expect("buf").huge_page_bytes(), (0, 64 * 1024));
    }

    #[test]
    fn the_huge_page_share_is_read_from_the_mapping_that_holds_the_buffer() {
        let smaps =
            "7f0000000000-7f0000200000 rw-p 00000000 00:00 0\nSize: 2048 kB\nAnonHugePages: 2048 kB\n\
                     7f0000200000-7f0000600000 rw-p 00000000 00:00 0\nAnonHugePages:        2048 kB\n";
        assert_eq!(anon_huge_bytes(smaps, 0x7f00_0000_0000), Some((2 << 20, 2 << 20)));
        assert_eq!(anon_huge_bytes(smaps, 0x7f00_001f_f000), Some((2 << 20, 2 << 20)));
        assert_eq!(anon_huge_bytes(smaps, 0x7f00_0020_0000), Some((2 << 20, 4 << 20)), "two merged");
        assert_eq!(anon_huge_bytes(smaps, 0x7f00_0060_0000), None, "no mapping holds it");
        assert_eq!(anon_huge_bytes("garbage\nAnonHugePages: x kB", 5), None);
    }

    #[test]
    fn direct_on_a_filesystem_without_o_direct_is_a_clear_usage_error() {
        // procfs never supports O_DIRECT: the open fails with EINVAL.
        let err = open_file(Path::new("/proc/self/status"), OpenMode { direct: true, ..OpenMode::default() })
            .expect_err("procfs has no O_DIRECT");
        match err {
            EngineError::Usage(msg) => {
                assert!(
                    msg.contains("O_DIRECT is not supported by the filesystem of /proc/self/status"),
                    "{msg}"
                );
                assert!(msg.contains("use direct=false or another target"), "{msg}");
            }
            other => panic!("expected Usage, got {other:?}"),
        }
    }

    #[test]
    fn open_errors_name_the_path() {
        let dir = tempfile::tempdir_in("/var/tmp").expect("tempdir in /var/tmp");
        let missing = dir.path().join("nope");
        let err = open_file(&missing, OpenMode::default()).expect_err("missing");
        assert!(matches!(&err, EngineError::Usage(m) if m.contains("nope")), "{err:?}");
        let err = open_file(dir.path(), OpenMode::default()).expect_err("a directory");
        assert!(matches!(&err, EngineError::Usage(m) if m.contains("is a directory")), "{err:?}");
    }

    #[test]
    fn created_files_are_readable_and_writable() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("f");
        let mode = OpenMode { write: true, create_truncate: true, direct: false };
        let file = open_file(&path, mode).expect("create");
        std::os::unix::fs::FileExt::write_all_at(&file, b"abc", 0).expect("write");
        let ro = open_file(&path, OpenMode::default()).expect("open");
        let mut got = [0u8; 3];
        std::os::unix::fs::FileExt::read_exact_at(&ro, &mut got, 0).expect("read");
        assert_eq!(&got, b"abc");
    }
}
