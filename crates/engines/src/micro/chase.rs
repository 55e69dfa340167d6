//! lat_mem_rd's pointer chase: a ring of pointers laid over a page-aligned buffer, walked by a
//! chain of dependent loads (`p = *p`), so each load waits for the one before and the time per
//! load is the latency of whichever level of the memory hierarchy holds the ring.

use super::mem::{page_bytes, PageBuf};
use crate::support::rng::SplitMix64;
use std::hint::black_box;

/// lat_mem_rd's smallest size.
pub const MIN_SIZE_BYTES: usize = 512;

/// A ring of pointers, one element every `stride_bytes`.
pub struct Chase {
    buf: PageBuf,
    stride_bytes: usize,
    /// Elements in the ring (the tests check the ring's shape with it).
    #[cfg(test)]
    len: usize,
    /// Where the next `run` starts (the chase carries on from where the last one stopped).
    at: *const u8,
}

// SAFETY: the ring's pointers all point into `buf`, which the Chase owns; moving it to another
// thread moves the whole structure.
unsafe impl Send for Chase {}

impl Chase {
    /// A ring of pointers over `size_bytes`: element `k` sits at byte `k * stride_bytes` (as many
    /// as start below `size_bytes`) and points `stride_bytes` ahead, the last one back to the
    /// first. With `random` the order is a random permutation that visits a different page each
    /// step where possible (lat_mem_rd -t). Needs `size_bytes >= 2 * stride_bytes` and a stride
    /// that is a non-zero multiple of the pointer size.
    pub fn new(size_bytes: usize, stride_bytes: usize, random: bool) -> Result<Chase, String> {
        let word = std::mem::size_of::<usize>();
        if stride_bytes < word || !stride_bytes.is_multiple_of(word) {
            return Err(format!("chase stride must be a multiple of {word} bytes: got {stride_bytes}"));
        }
        if size_bytes / 2 < stride_bytes {
            return Err(format!(
                "chase size must be at least twice the stride ({stride_bytes} bytes): got {size_bytes}"
            ));
        }
        let len = size_bytes.div_ceil(stride_bytes);
        // The last element's pointer may end past size_bytes when the stride does not divide it.
        let mut buf = PageBuf::zeroed((len - 1) * stride_bytes + word)?;
        let base = buf.as_mut_ptr();
        let slot = |k: usize| -> *mut u8 {
            // SAFETY: k < len, so k * stride is inside the buffer (offsets up to (len-1) * stride).
            unsafe { base.add(k * stride_bytes) }
        };
        let mut first = None;
        let mut prev = None;
        let mut link = |k: usize| {
            match prev {
                // SAFETY: slots are inside the buffer and pointer-aligned (the stride is a multiple
                // of the pointer size and the buffer is page-aligned).
                Some(p) => unsafe { (slot(p) as *mut *const u8).write(slot(k)) },
                None => first = Some(k),
            }
            prev = Some(k);
        };
        if random {
            page_hopping_order(len, stride_bytes, page_bytes(), seed(size_bytes, stride_bytes), &mut link);
        } else {
            (0..len).for_each(&mut link);
        }
        let (first, last) = (first.unwrap_or(0), prev.unwrap_or(0));
        // SAFETY: as in `link`; this closes the ring.
        unsafe { (slot(last) as *mut *const u8).write(slot(first)) };
        let at = slot(first) as *const u8;
        Ok(Chase {
            buf,
            stride_bytes,
            #[cfg(test)]
            len,
            at,
        })
    }

    /// Follows `loads` dependent loads (`p = *p`, unrolled 16 times); returns the index of the
    /// element reached, for `black_box`. The next call starts there.
    pub fn run(&mut self, loads: u64) -> usize {
        // SAFETY: `at` and every pointer stored in the ring point at elements of `buf`, each
        // holding a valid pointer to the next; `&mut self` keeps the buffer alive and unchanged.
        let p = unsafe { chase(self.at, loads) };
        self.at = p;
        black_box(self.index_of(p))
    }

    /// Elements in the ring.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Never true: a ring has at least two elements.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[cfg(test)]
    pub fn stride_bytes(&self) -> usize {
        self.stride_bytes
    }

    fn index_of(&self, p: *const u8) -> usize {
        (p as usize - self.buf.as_ptr() as usize) / self.stride_bytes
    }

    /// The element after element `index` (for checks).
    #[cfg(test)]
    pub(crate) fn next_index(&self, index: usize) -> usize {
        assert!(index < self.len);
        // SAFETY: element `index` lies inside the buffer and holds a pointer into it.
        let p = unsafe { (self.buf.as_ptr().add(index * self.stride_bytes) as *const *const u8).read() };
        self.index_of(p)
    }

    /// The element the next `run` starts from.
    #[cfg(test)]
    pub(crate) fn current_index(&self) -> usize {
        self.index_of(self.at)
    }
}

/// Follows `loads` links from `p`.
///
/// # Safety
/// `p` must point at a pointer-aligned slot holding a pointer with the same property, and so
/// on around a ring that stays valid for the call.
#[inline(never)]
unsafe fn chase(mut p: *const u8, loads: u64) -> *const u8 {
    macro_rules! step {
        () => {
            p = (p as *const *const u8).read()
        };
    }
    for _ in 0..loads / 16 {
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
    }
    for _ in 0..loads % 16 {
        step!();
    }
    p
}

/// A fixed seed per geometry, so a given size and stride always gives the same ring.
fn seed(size_bytes: usize, stride_bytes: usize) -> u64 {
    0x5eed_1a7e_0c4a_5e00 ^ (size_bytes as u64).rotate_left(17) ^ stride_bytes as u64
}

/// Fisher-Yates with the engines' deterministic generator.
fn shuffle<T>(rng: &mut SplitMix64, v: &mut [T]) {
    for i in (1..v.len()).rev() {
        v.swap(i, rng.below(i as u64 + 1) as usize);
    }
}

/// Visits `len` elements (`stride_bytes` apart) in an order that changes page at every step
/// where possible: the elements of each page are shuffled, the pages are put in a random order,
/// and the walk takes one element from each page in turn, round after round (lat_mem_rd -t does
/// the same with a bit-reversed order inside each page). Two steps in a row stay on one page only
/// when a round has a single page left to take from: rings of one page, or a short last round.
fn page_hopping_order(
    len: usize,
    stride_bytes: usize,
    page_bytes: usize,
    seed: u64,
    mut visit: impl FnMut(usize),
) {
    let mut rng = SplitMix64::new(seed);
    let pages = ((len - 1) * stride_bytes) / page_bytes + 1;
    // Page p holds elements starts[p]..starts[p + 1]: those whose offset lies in the page.
    let starts: Vec<usize> = (0..=pages).map(|p| (p * page_bytes).div_ceil(stride_bytes).min(len)).collect();
    let mut elems: Vec<usize> = (0..len).collect();
    for p in 0..pages {
        shuffle(&mut rng, &mut elems[starts[p]..starts[p + 1]]);
    }
    let mut page_order: Vec<usize> = (0..pages).collect();
    shuffle(&mut rng, &mut page_order);
    let rounds = (0..pages).map(|p| starts[p + 1] - starts[p]).max().unwrap_or(0);
    for round in 0..rounds {
        for &p in &page_order {
            if starts[p] + round < starts[p + 1] {
                visit(elems[starts[p] + round]);
            }
        }
    }
}

/// lat_mem_rd's series of sizes from 512 B up to `max_bytes`: doubling to 1 KiB, 1 KiB steps to
/// 4 KiB, 2 KiB steps to 32 KiB, then steps of 1/16 of the next power of two (8 points per
/// octave). The series stops below `max_bytes` and `max_bytes` itself ends it (lat_mem_rd's
/// limit is a whole number of MiB, which the series always hits). Empty below 512 B.
pub fn sizes(max_bytes: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut k = MIN_SIZE_BYTES;
    while k < max_bytes {
        out.push(k);
        k = next_size(k);
    }
    if max_bytes >= MIN_SIZE_BYTES {
        out.push(max_bytes);
    }
    out
}

/// The size after `k` in lat_mem_rd's series.
fn next_size(k: usize) -> usize {
    if k < 1024 {
        k * 2
    } else if k < 4096 {
        k + 1024
    } else {
        // The smallest power of two above k, but at least 32 KiB.
        let above = (k + 1).next_power_of_two().max(32 << 10);
        k + above / 16
    }
}

#[cfg(test)]
#[path = "chase_tests.rs"]
mod tests;
