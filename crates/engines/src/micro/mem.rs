//! Memory bandwidth kernels after lmbench3's bw_mem: walks of a page-aligned buffer in 512-byte
//! chunks with hand-unrolled 4-byte loads and stores (the partial variants touch one word in four,
//! the full ones every word), plus libc's memset and memcpy.
//!
//! The buffer layout follows bw_mem.c: a copy's destination is a second buffer of `size + 2048`
//! bytes. By default both start on a page boundary (what the lmbench script calls "unaligned",
//! though bw_mem's code offsets nothing); the `_aligned` variants (bw_mem's third argument,
//! "conflict") move the destination 2048 - 128 = 1920 bytes into its buffer. Every pointer stays
//! 128-byte aligned either way. (bw_mem calls bcopy(), which glibc implements as memmove; the
//! copy here is memcpy, the same code in glibc for buffers that do not overlap.)

use std::alloc::Layout;
use std::ptr::NonNull;

/// Bytes walked by one unrolled block, as in bw_mem.
pub const CHUNK_BYTES: usize = 512;
/// 4-byte words in a chunk.
const CHUNK_WORDS: usize = CHUNK_BYTES / 4;
/// Extra bytes in the destination buffer (bw_mem allocates `size + 2048`).
const DST_SLACK_BYTES: usize = 2048;
/// Where the "aligned" (conflict) variants put the destination inside its buffer.
const CONFLICT_OFFSET_BYTES: usize = 2048 - 128;
/// The word the store kernels write (bw_mem stores 1; not a repeated byte, so no memset idiom).
pub const STORE_VALUE: u32 = 1;

/// What one pass over the working set does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemOp {
    /// Sum one word in every 16 bytes.
    Rd,
    /// Store one word in every 16 bytes.
    Wr,
    /// Load and store the same word, one in every 16 bytes.
    Rdwr,
    /// Copy one word in every 16 bytes to the second buffer.
    Cp,
    /// Sum every word.
    Frd,
    /// Store every word.
    Fwr,
    /// Copy every word.
    Fcp,
    /// libc memset of the whole buffer.
    Bzero,
    /// libc memcpy, bw_mem's default layout.
    Bcopy,
    /// libc memcpy, bw_mem's "conflict" layout.
    BcopyAligned,
    /// The unrolled word copy (lmbench's "unrolled bcopy" is `fcp`), default layout.
    UnrolledBcopy,
    /// The unrolled word copy, "conflict" layout.
    UnrolledBcopyAligned,
}

impl MemOp {
    pub const ALL: [MemOp; 12] = [
        MemOp::Rd,
        MemOp::Wr,
        MemOp::Rdwr,
        MemOp::Cp,
        MemOp::Frd,
        MemOp::Fwr,
        MemOp::Fcp,
        MemOp::Bzero,
        MemOp::Bcopy,
        MemOp::BcopyAligned,
        MemOp::UnrolledBcopy,
        MemOp::UnrolledBcopyAligned,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MemOp::Rd => "rd",
            MemOp::Wr => "wr",
            MemOp::Rdwr => "rdwr",
            MemOp::Cp => "cp",
            MemOp::Frd => "frd",
            MemOp::Fwr => "fwr",
            MemOp::Fcp => "fcp",
            MemOp::Bzero => "bzero",
            MemOp::Bcopy => "bcopy",
            MemOp::BcopyAligned => "bcopy_aligned",
            MemOp::UnrolledBcopy => "ubcopy",
            MemOp::UnrolledBcopyAligned => "ubcopy_aligned",
        }
    }

    pub fn parse(s: &str) -> Option<MemOp> {
        MemOp::ALL.into_iter().find(|op| op.name() == s)
    }

    /// Copies read one buffer and write a second.
    pub fn uses_two_buffers(self) -> bool {
        matches!(
            self,
            MemOp::Cp
                | MemOp::Fcp
                | MemOp::Bcopy
                | MemOp::BcopyAligned
                | MemOp::UnrolledBcopy
                | MemOp::UnrolledBcopyAligned
        )
    }

    /// Where the destination starts inside its buffer.
    fn dst_offset_bytes(self) -> usize {
        match self {
            MemOp::BcopyAligned | MemOp::UnrolledBcopyAligned => CONFLICT_OFFSET_BYTES,
            _ => 0,
        }
    }
}

/// The system page size (4096 when sysconf does not say).
pub(crate) fn page_bytes() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as usize
    } else {
        4096
    }
}

/// An owned, page-aligned heap buffer whose pages have all been written once (so they are resident).
pub(crate) struct PageBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: PageBuf owns its allocation exclusively; nothing else aliases it.
unsafe impl Send for PageBuf {}

impl PageBuf {
    /// Allocates `len_bytes` (at least 1) aligned to a page and fills them with zeros.
    pub(crate) fn zeroed(len_bytes: usize) -> Result<PageBuf, String> {
        let layout = Layout::from_size_align(len_bytes.max(1), page_bytes())
            .map_err(|e| format!("cannot lay out a {len_bytes}-byte buffer: {e}"))?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { std::alloc::alloc(layout) };
        let ptr = NonNull::new(raw).ok_or_else(|| format!("cannot allocate {len_bytes} bytes"))?;
        // SAFETY: the allocation is `layout.size()` bytes long. Writing (rather than relying on
        // calloc's fresh zero pages) makes every page resident now, not during the first pass.
        unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, layout.size()) };
        Ok(PageBuf { ptr, layout })
    }

    #[cfg(test)]
    pub(crate) fn len_bytes(&self) -> usize {
        self.layout.size()
    }

    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for PageBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this very layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

/// One bw_mem working set, ready to run passes over.
pub struct MemBench {
    op: MemOp,
    size_bytes: usize,
    src: PageBuf,
    /// The copy destination's buffer (`size + 2048` bytes) for two-buffer ops.
    dst: Option<PageBuf>,
}

impl MemBench {
    /// Buffers of `size_bytes` (two for copies), page-aligned, touched once so they are resident.
    /// They hold zeros, as bw_mem's do (it bzero()s its buffer; on some machines, this one among
    /// them, copying zeros from memory is measurably faster than copying other data, so the
    /// contents matter for comparisons). `size_bytes` must be at least 512 and a multiple of 512.
    pub fn new(op: MemOp, size_bytes: usize) -> Result<MemBench, String> {
        if size_bytes < CHUNK_BYTES || !size_bytes.is_multiple_of(CHUNK_BYTES) {
            return Err(format!(
                "bw_mem size must be at least {CHUNK_BYTES} bytes and a multiple of {CHUNK_BYTES}: got {size_bytes}"
            ));
        }
        let src = PageBuf::zeroed(size_bytes)?;
        let dst =
            if op.uses_two_buffers() { Some(PageBuf::zeroed(size_bytes + DST_SLACK_BYTES)?) } else { None };
        Ok(MemBench { op, size_bytes, src, dst })
    }

    #[cfg(test)] // the accessors are for the tests
    pub fn op(&self) -> MemOp {
        self.op
    }

    #[cfg(test)]
    pub fn size_bytes(&self) -> usize {
        self.size_bytes
    }

    /// Bytes counted per pass: the working-set size, as bw_mem counts it (even for the partial
    /// variants, and only one side of a copy).
    pub fn bytes_per_pass(&self) -> u64 {
        self.size_bytes as u64
    }

    /// `passes` passes over the working set; returns a value to feed to `black_box` (a sum for
    /// the loads, a word of the written buffer otherwise) so nothing is optimised away.
    pub fn run(&mut self, passes: u64) -> u64 {
        let chunks = self.size_bytes / CHUNK_BYTES;
        let src = self.src.as_mut_ptr() as *mut u32;
        let dst = match self.dst.as_mut() {
            // SAFETY: the offset (at most 1920) plus size_bytes fits in the size+2048 buffer.
            Some(d) => unsafe { d.as_mut_ptr().add(self.op.dst_offset_bytes()) as *mut u32 },
            None => std::ptr::null_mut(),
        };
        // SAFETY: `src` holds `chunks` chunks; for two-buffer ops `dst` has room for as many, and
        // the two do not overlap (separate allocations). `&mut self` gives exclusive access.
        unsafe {
            match self.op {
                MemOp::Rd => u64::from(rd(src, chunks, passes)),
                MemOp::Wr => wr(src, chunks, passes),
                MemOp::Rdwr => u64::from(rdwr(src, chunks, passes)),
                MemOp::Cp => cp(src, dst, chunks, passes),
                MemOp::Frd => u64::from(frd(src, chunks, passes)),
                MemOp::Fwr => fwr(src, chunks, passes),
                MemOp::Fcp | MemOp::UnrolledBcopy | MemOp::UnrolledBcopyAligned => {
                    fcp(src, dst, chunks, passes)
                }
                MemOp::Bzero => bzero(src as *mut u8, self.size_bytes, passes),
                MemOp::Bcopy | MemOp::BcopyAligned => {
                    bcopy(src as *mut u8, dst as *mut u8, self.size_bytes, passes)
                }
            }
        }
    }

    /// The source buffer's words (for checks).
    #[cfg(test)]
    pub(crate) fn src_words(&self) -> &[u32] {
        // SAFETY: size_bytes/4 initialised words; `&self` keeps them alive and unaliased by writes.
        unsafe { std::slice::from_raw_parts(self.src.as_ptr() as *const u32, self.size_bytes / 4) }
    }

    /// The source buffer's words, writable (to set up checks).
    #[cfg(test)]
    pub(crate) fn src_words_mut(&mut self) -> &mut [u32] {
        // SAFETY: as for src_words, with `&mut self` for exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.src.as_mut_ptr() as *mut u32, self.size_bytes / 4) }
    }

    /// The copy destination's words (empty for one-buffer ops).
    #[cfg(test)]
    pub(crate) fn dst_words(&self) -> &[u32] {
        match &self.dst {
            // SAFETY: as for src_words, starting at the op's offset inside the larger buffer.
            Some(d) => unsafe {
                std::slice::from_raw_parts(
                    d.as_ptr().add(self.op.dst_offset_bytes()) as *const u32,
                    self.size_bytes / 4,
                )
            },
            None => &[],
        }
    }

    /// The destination pointer's offset from its page, and its buffer's length (for checks).
    #[cfg(test)]
    pub(crate) fn dst_layout(&self) -> Option<(usize, usize)> {
        let d = self.dst.as_ref()?;
        let at = d.as_ptr() as usize + self.op.dst_offset_bytes();
        Some((at % page_bytes(), d.len_bytes()))
    }
}

/// Expands `$body` once per word offset: `$n` copies, starting at `$at` and `$step` words apart,
/// with `$i` bound to the (constant) offset. A hand-unrolled block, as in bw_mem's DOIT macros:
/// the compiler sees straight-line code, so copies stay word copies rather than becoming memcpy.
macro_rules! unroll {
    (1; $at:expr, $step:expr; $i:ident => $body:block) => {{
        let $i: usize = $at;
        $body
    }};
    (2; $at:expr, $step:expr; $i:ident => $body:block) => {
        unroll!(1; $at, $step; $i => $body);
        unroll!(1; $at + $step, $step; $i => $body);
    };
    (4; $at:expr, $step:expr; $i:ident => $body:block) => {
        unroll!(2; $at, $step; $i => $body);
        unroll!(2; $at + 2 * $step, $step; $i => $body);
    };
    (8; $at:expr, $step:expr; $i:ident => $body:block) => {
        unroll!(4; $at, $step; $i => $body);
        unroll!(4; $at + 4 * $step, $step; $i => $body);
    };
    (16; $at:expr, $step:expr; $i:ident => $body:block) => {
        unroll!(8; $at, $step; $i => $body);
        unroll!(8; $at + 8 * $step, $step; $i => $body);
    };
    (32; $at:expr, $step:expr; $i:ident => $body:block) => {
        unroll!(16; $at, $step; $i => $body);
        unroll!(16; $at + 16 * $step, $step; $i => $body);
    };
    (64; $at:expr, $step:expr; $i:ident => $body:block) => {
        unroll!(32; $at, $step; $i => $body);
        unroll!(32; $at + 32 * $step, $step; $i => $body);
    };
    (128; $at:expr, $step:expr; $i:ident => $body:block) => {
        unroll!(64; $at, $step; $i => $body);
        unroll!(64; $at + 64 * $step, $step; $i => $body);
    };
}

/// `x`, hidden from the optimiser without a trip through memory: an empty asm statement on the
/// value's register. It keeps the compiler from folding a chunk's chain of adds into the running
/// total, which would make the whole pass one long dependency chain.
#[inline(always)]
fn opaque_u32(x: u32) -> u32 {
    let mut wide = u64::from(x);
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "riscv64"))]
    // SAFETY: an empty template; the value stays in its register, nothing else is touched.
    unsafe {
        std::arch::asm!("/* {0} */", inout(reg) wide, options(nomem, nostack, preserves_flags))
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "riscv64")))]
    {
        wide = std::hint::black_box(wide);
    }
    wide as u32
}

/// `p`, hidden from the optimiser as `opaque_u32` does; the asm statement may also, for all the
/// compiler knows, read and write memory. Taken at the start of each pass, it stops the compiler
/// from merging passes or dropping stores that a later pass overwrites. Unlike `black_box`, it
/// leaves the pointer in a register: through `black_box`'s stack slot, the compiler reloads the
/// pointer after every store.
#[inline(always)]
fn opaque_ptr<T>(p: *mut T) -> *mut T {
    let mut p = p;
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "riscv64"))]
    // SAFETY: an empty template; the pointer stays in its register, nothing is touched.
    unsafe {
        std::arch::asm!("/* {0} */", inout(reg) p, options(nostack, preserves_flags))
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "riscv64")))]
    {
        p = std::hint::black_box(p);
    }
    p
}

// The kernels. Each takes `chunks` 512-byte chunks at `p` (and `d`), valid for the access
// described, and runs `passes` passes, walking a pointer up 512 bytes at a time as bw_mem does.

/// Sums one word in every 16 bytes.
#[inline(never)]
unsafe fn rd(p: *mut u32, chunks: usize, passes: u64) -> u32 {
    let mut sum = 0u32;
    for _ in 0..passes {
        let mut q = opaque_ptr(p);
        for _ in 0..chunks {
            // A chain per chunk, as in bw_mem, so consecutive chunks' loads overlap.
            let mut chunk_sum = 0u32;
            unroll!(32; 0, 4; i => { chunk_sum = chunk_sum.wrapping_add(*q.add(i)); });
            sum = sum.wrapping_add(opaque_u32(chunk_sum));
            q = q.add(CHUNK_WORDS);
        }
    }
    sum
}

/// Stores one word in every 16 bytes.
#[inline(never)]
unsafe fn wr(p: *mut u32, chunks: usize, passes: u64) -> u64 {
    for _ in 0..passes {
        let mut q = opaque_ptr(p);
        for _ in 0..chunks {
            unroll!(32; 0, 4; i => { *q.add(i) = STORE_VALUE; });
            q = q.add(CHUNK_WORDS);
        }
    }
    u64::from(opaque_ptr(p).read())
}

/// Loads then stores the same word, one in every 16 bytes.
#[inline(never)]
unsafe fn rdwr(p: *mut u32, chunks: usize, passes: u64) -> u32 {
    let mut sum = 0u32;
    for _ in 0..passes {
        let mut q = opaque_ptr(p);
        for _ in 0..chunks {
            unroll!(32; 0, 4; i => {
                sum = sum.wrapping_add(*q.add(i));
                *q.add(i) = STORE_VALUE;
            });
            q = q.add(CHUNK_WORDS);
        }
    }
    sum
}

/// Copies one word in every 16 bytes from `s` to `d`.
#[inline(never)]
unsafe fn cp(s: *mut u32, d: *mut u32, chunks: usize, passes: u64) -> u64 {
    for _ in 0..passes {
        let (mut qs, mut qd) = (opaque_ptr(s), opaque_ptr(d));
        for _ in 0..chunks {
            copy_partial_chunk(&mut *(qd as *mut Chunk), &*(qs as *const Chunk));
            qs = qs.add(CHUNK_WORDS);
            qd = qd.add(CHUNK_WORDS);
        }
    }
    u64::from(opaque_ptr(d).read())
}

/// One chunk's words.
type Chunk = [u32; CHUNK_WORDS];

/// Copies one word in four. Taking references tells the compiler the chunks do not overlap, so
/// it may schedule the loads ahead of the stores.
#[inline(always)]
fn copy_partial_chunk(d: &mut Chunk, s: &Chunk) {
    unroll!(32; 0, 4; i => { d[i] = s[i]; });
}

/// Copies every word; with the chunks known not to overlap the copy is done in vector registers.
#[inline(always)]
fn copy_full_chunk(d: &mut Chunk, s: &Chunk) {
    unroll!(128; 0, 1; i => { d[i] = s[i]; });
}

/// Sums every word.
#[inline(never)]
unsafe fn frd(p: *mut u32, chunks: usize, passes: u64) -> u32 {
    let mut sum = 0u32;
    for _ in 0..passes {
        let mut q = opaque_ptr(p);
        for _ in 0..chunks {
            unroll!(128; 0, 1; i => { sum = sum.wrapping_add(*q.add(i)); });
            q = q.add(CHUNK_WORDS);
        }
    }
    sum
}

/// Stores every word.
#[inline(never)]
unsafe fn fwr(p: *mut u32, chunks: usize, passes: u64) -> u64 {
    for _ in 0..passes {
        let mut q = opaque_ptr(p);
        for _ in 0..chunks {
            unroll!(128; 0, 1; i => { *q.add(i) = STORE_VALUE; });
            q = q.add(CHUNK_WORDS);
        }
    }
    u64::from(opaque_ptr(p).read())
}

/// Copies every word from `s` to `d`.
#[inline(never)]
unsafe fn fcp(s: *mut u32, d: *mut u32, chunks: usize, passes: u64) -> u64 {
    for _ in 0..passes {
        let (mut qs, mut qd) = (opaque_ptr(s), opaque_ptr(d));
        for _ in 0..chunks {
            copy_full_chunk(&mut *(qd as *mut Chunk), &*(qs as *const Chunk));
            qs = qs.add(CHUNK_WORDS);
            qd = qd.add(CHUNK_WORDS);
        }
    }
    u64::from(opaque_ptr(d).read())
}

/// libc memset of `len` bytes.
#[inline(never)]
unsafe fn bzero(p: *mut u8, len: usize, passes: u64) -> u64 {
    for _ in 0..passes {
        std::ptr::write_bytes(opaque_ptr(p), 0, len);
    }
    u64::from(opaque_ptr(p).read())
}

/// libc memcpy of `len` bytes.
#[inline(never)]
unsafe fn bcopy(s: *mut u8, d: *mut u8, len: usize, passes: u64) -> u64 {
    for _ in 0..passes {
        std::ptr::copy_nonoverlapping(opaque_ptr(s), opaque_ptr(d), len);
    }
    u64::from(opaque_ptr(d).read())
}

#[cfg(test)]
#[path = "mem_tests.rs"]
mod tests;
