//! Which operation comes next — the sequential, random and mixed read/write offset patterns of one
//! worker — and the stamps that keep the same buffer distinct at every offset it is written to.
//!
//! A [`Pattern`] yields `(direction, byte offset)` pairs, always record-aligned (`offset % bs == 0`)
//! and inside the file (`offset + bs <= file_size`). Random patterns draw from a seeded
//! [`SplitMix64`], so a given seed always yields the same sequence.

use crate::support::direct_io::BUF_ALIGN_BYTES;
use crate::support::rng::SplitMix64;
use std::os::fd::RawFd;

/// Direction of one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoDir {
    Read,
    Write,
}

/// How directions are chosen.
#[derive(Debug, Clone, Copy)]
enum DirChoice {
    Fixed(IoDir),
    /// Read with probability `pct / 100`, else write.
    ReadPct(u32),
}

#[derive(Debug, Clone)]
enum Kind {
    Sequential { dir: IoDir, next_rec: u64, wrap: bool },
    Random { dir: DirChoice, remaining: Option<u64>, rng: SplitMix64 },
}

/// The sequence of operations of one worker on one file.
///
/// Only whole records are visited: `nrecs = file_size / bs`. Callers must make `file_size` a multiple
/// of `bs` (diskio's settings check it); a trailing partial record is never accessed. A pattern with
/// no whole record (`bs == 0` or `file_size < bs`) is empty, even with `wrap` or `ops == None`.
#[derive(Debug, Clone)]
pub struct Pattern {
    bs_bytes: u64,
    nrecs: u64,
    kind: Kind,
    /// A file to drop from the page cache each time a sequential pattern wraps to record 0,
    /// and how.
    evict_fd: Option<(RawFd, WrapEvict)>,
    /// How many times it was dropped.
    evictions: u64,
}

fn records(file_size_bytes: u64, bs_bytes: u64) -> u64 {
    file_size_bytes.checked_div(bs_bytes).unwrap_or(0)
}

impl Pattern {
    /// 0, bs, 2·bs … up to the last whole record; `wrap` = start again at 0 forever (time-based runs).
    pub fn sequential(dir: IoDir, file_size_bytes: u64, bs_bytes: u64, wrap: bool) -> Pattern {
        Pattern {
            bs_bytes,
            nrecs: records(file_size_bytes, bs_bytes),
            kind: Kind::Sequential { dir, next_rec: 0, wrap },
            evict_fd: None,
            evictions: 0,
        }
    }

    /// IOzone random: offset = bs · (rand % nrecs), uniform with replacement; `ops` operations then
    /// `None`, or forever when `ops` is `None`.
    pub fn random(dir: IoDir, file_size_bytes: u64, bs_bytes: u64, ops: Option<u64>, seed: u64) -> Pattern {
        Pattern {
            bs_bytes,
            nrecs: records(file_size_bytes, bs_bytes),
            kind: Kind::Random { dir: DirChoice::Fixed(dir), remaining: ops, rng: SplitMix64::new(seed) },
            evict_fd: None,
            evictions: 0,
        }
    }

    /// fio randrw: like [`Pattern::random`], each op a read with probability `read_pct / 100`
    /// (values above 100 count as 100), else a write.
    pub fn mixed(read_pct: u32, file_size_bytes: u64, bs_bytes: u64, ops: Option<u64>, seed: u64) -> Pattern {
        Pattern {
            bs_bytes,
            nrecs: records(file_size_bytes, bs_bytes),
            kind: Kind::Random {
                dir: DirChoice::ReadPct(read_pct.min(100)),
                remaining: ops,
                rng: SplitMix64::new(seed),
            },
            evict_fd: None,
            evictions: 0,
        }
    }

    /// Next (direction, byte offset), or `None` when the pass is over.
    // An inherent method on purpose (the engine API); an Iterator impl would invite adapters that
    // make no sense on endless patterns.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<(IoDir, u64)> {
        if self.nrecs == 0 {
            return None;
        }
        match &mut self.kind {
            Kind::Sequential { dir, next_rec, wrap } => {
                if *next_rec >= self.nrecs {
                    if !*wrap {
                        return None;
                    }
                    *next_rec = 0;
                    if let Some((fd, how)) = self.evict_fd {
                        drop_cache(fd, how);
                        self.evictions += 1;
                    }
                }
                let rec = *next_rec;
                *next_rec += 1;
                Some((*dir, rec * self.bs_bytes))
            }
            Kind::Random { dir, remaining, rng } => {
                if let Some(left) = remaining {
                    if *left == 0 {
                        return None;
                    }
                    *left -= 1;
                }
                let dir = match *dir {
                    DirChoice::Fixed(dir) => dir,
                    DirChoice::ReadPct(pct) if rng.below(100) < u64::from(pct) => IoDir::Read,
                    DirChoice::ReadPct(_) => IoDir::Write,
                };
                Some((dir, rng.below(self.nrecs) * self.bs_bytes))
            }
        }
    }

    pub fn bs_bytes(&self) -> u64 {
        self.bs_bytes
    }

    /// Drops `fd`'s pages from the page cache `how` each time a wrapping sequential pattern
    /// starts over, as fio does for a time-based job with `invalidate=1`. The descriptor must
    /// stay open while the pattern is used. Random patterns never wrap, so they never evict.
    pub fn evict_on_wrap(&mut self, fd: RawFd, how: WrapEvict) {
        self.evict_fd = Some((fd, how));
    }

    /// How many times the file was dropped from the cache.
    pub fn evictions(&self) -> u64 {
        self.evictions
    }
}

/// How a wrapping pattern drops its file from the page cache: what fio's
/// `loop_cache_invalidate` does for the file's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WrapEvict {
    /// A file: posix_fadvise(DONTNEED), which starts the writeback of dirty pages without
    /// waiting and drops the clean ones.
    Advise,
    /// A block device: ioctl(BLKFLSBUF), which writes every dirty page of the device and
    /// waits, then drops its whole cache. It needs CAP_SYS_ADMIN; without it (or on any
    /// failure) the device is advised as a file is.
    FlushBuffers,
}

/// `_IO(0x12, 97)`: flush a block device's buffers (linux/fs.h), absent from the libc crate.
const BLKFLSBUF: u64 = 0x1261;

/// Drops `fd` from the page cache `how`. As in fio, a failure only leaves pages cached.
fn drop_cache(fd: RawFd, how: WrapEvict) {
    if how == WrapEvict::FlushBuffers {
        // SAFETY: BLKFLSBUF takes no argument; a plain ioctl on a descriptor the caller keeps open.
        if unsafe { libc::ioctl(fd, BLKFLSBUF as _) } == 0 {
            return;
        }
    }
    // SAFETY: a plain syscall on a descriptor the caller keeps open.
    let _ = unsafe { libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED) };
}

/// Writes each 4 KiB block's file offset into its first 8 bytes before a write, so the same buffer
/// written at different offsets never produces two identical blocks on disk.
pub(super) fn stamp_blocks(buf: &mut [u8], offset: u64) {
    let mut block_offset = offset;
    for block in buf.chunks_mut(BUF_ALIGN_BYTES) {
        let tag = (block_offset ^ 0xA5A5_5A5A_0F0F_F0F0).to_le_bytes();
        let n = block.len().min(8);
        block[..n].copy_from_slice(&tag[..n]);
        block_offset = block_offset.wrapping_add(BUF_ALIGN_BYTES as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn drain(p: &mut Pattern) -> Vec<(IoDir, u64)> {
        std::iter::from_fn(|| p.next()).collect()
    }

    #[test]
    fn sequential_covers_every_record_once_in_order() {
        let mut p = Pattern::sequential(IoDir::Write, 64 * 4096, 4096, false);
        let ops = drain(&mut p);
        assert_eq!(ops.len(), 64);
        for (i, (dir, off)) in ops.iter().enumerate() {
            assert_eq!(*dir, IoDir::Write);
            assert_eq!(*off, i as u64 * 4096);
        }
        assert_eq!(p.next(), None);
        assert_eq!(p.bs_bytes(), 4096);
    }

    #[test]
    fn sequential_wrap_loops_forever() {
        let mut p = Pattern::sequential(IoDir::Read, 4 * 512, 512, true);
        let offs: Vec<u64> = (0..10).filter_map(|_| p.next()).map(|(_, o)| o).collect();
        assert_eq!(offs, vec![0, 512, 1024, 1536, 0, 512, 1024, 1536, 0, 512]);
    }

    #[test]
    fn a_wrapping_pattern_drops_its_file_from_the_cache_each_time_it_starts_over() {
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir_in("/var/tmp").expect("tmp");
        let f = crate::support::residency::tests::written_file(dir.path(), 4 * 16384);
        f.sync_all().expect("sync");
        let cached = |f: &std::fs::File| crate::support::residency::cached_bytes(f).expect("mincore");
        assert_eq!(cached(&f), 4 * 16384, "just written, still cached");
        let mut p = Pattern::sequential(IoDir::Read, 4 * 16384, 16384, true);
        p.evict_on_wrap(f.as_raw_fd(), WrapEvict::Advise);
        for _ in 0..4 {
            p.next();
        }
        assert_eq!((p.evictions(), cached(&f)), (0, 4 * 16384), "no wrap yet");
        assert_eq!(p.next(), Some((IoDir::Read, 0)));
        assert_eq!((p.evictions(), cached(&f)), (1, 0), "dropped as it wrapped");
        std::fs::read(dir.path().join("f")).expect("read the file back into the cache");
        assert_eq!(cached(&f), 4 * 16384, "cached again");
        let mut d = Pattern::sequential(IoDir::Read, 4 * 16384, 16384, true);
        d.evict_on_wrap(f.as_raw_fd(), WrapEvict::FlushBuffers);
        for _ in 0..5 {
            let _ = d.next();
        }
        assert_eq!((d.evictions(), cached(&f)), (1, 0), "a file refuses BLKFLSBUF and is advised instead");
        let mut r = Pattern::random(IoDir::Read, 4 * 16384, 16384, None, 1);
        r.evict_on_wrap(f.as_raw_fd(), WrapEvict::Advise);
        for _ in 0..100 {
            let _ = r.next();
        }
        assert_eq!(r.evictions(), 0, "random patterns never wrap");
    }

    #[test]
    fn degenerate_geometry_is_empty_not_endless() {
        assert_eq!(Pattern::sequential(IoDir::Read, 100, 0, true).next(), None);
        assert_eq!(Pattern::sequential(IoDir::Read, 100, 4096, true).next(), None);
        assert_eq!(Pattern::random(IoDir::Read, 0, 4096, None, 1).next(), None);
        // A trailing partial record is never visited.
        let mut p = Pattern::sequential(IoDir::Read, 3 * 4096 + 100, 4096, false);
        assert_eq!(drain(&mut p).len(), 3);
    }

    #[test]
    fn random_is_aligned_in_range_counted_and_roughly_uniform() {
        let nrecs = 64u64;
        let draws = 64_000u64;
        let mut p = Pattern::random(IoDir::Read, nrecs * 8192, 8192, Some(draws), 42);
        let ops = drain(&mut p);
        assert_eq!(ops.len() as u64, draws);
        let mut counts = vec![0u64; nrecs as usize];
        for (dir, off) in ops {
            assert_eq!(dir, IoDir::Read);
            assert_eq!(off % 8192, 0);
            assert!(off < nrecs * 8192);
            counts[(off / 8192) as usize] += 1;
        }
        let expected = (draws / nrecs) as f64;
        let chi2: f64 = counts.iter().map(|&c| (c as f64 - expected).powi(2) / expected).sum();
        // 63 degrees of freedom: mean 63, p=0.999 quantile ≈ 104. Loose bound.
        assert!(chi2 < 130.0, "chi-square {chi2} too large: {counts:?}");
    }

    #[test]
    fn random_without_ops_is_endless() {
        let mut p = Pattern::random(IoDir::Write, 1 << 20, 4096, None, 7);
        assert_eq!((0..100_000).filter_map(|_| p.next()).count(), 100_000);
    }

    #[test]
    fn mixed_read_fraction_matches_read_pct() {
        for pct in [0u32, 30, 70, 100] {
            let mut p = Pattern::mixed(pct, 1 << 30, 4096, Some(100_000), 9);
            let reads = drain(&mut p).iter().filter(|(d, _)| *d == IoDir::Read).count();
            let frac = reads as f64 / 100_000.0;
            assert!((frac - f64::from(pct) / 100.0).abs() < 0.01, "pct {pct}: read fraction {frac}");
        }
    }

    #[test]
    fn same_seed_same_sequence_different_seed_different() {
        let a = drain(&mut Pattern::mixed(50, 1 << 24, 4096, Some(1000), 5));
        let b = drain(&mut Pattern::mixed(50, 1 << 24, 4096, Some(1000), 5));
        let c = drain(&mut Pattern::mixed(50, 1 << 24, 4096, Some(1000), 6));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    proptest! {
        #[test]
        fn offsets_always_aligned_and_inside(
            nrecs in 1u64..5000,
            bs_pow in 9u32..21,
            seed in any::<u64>(),
            pct in 0u32..=100,
            kind in 0u8..3,
        ) {
            let bs = 1u64 << bs_pow;
            let size = nrecs * bs;
            let mut p = match kind {
                0 => Pattern::sequential(IoDir::Read, size, bs, true),
                1 => Pattern::random(IoDir::Write, size, bs, Some(300), seed),
                _ => Pattern::mixed(pct, size, bs, None, seed),
            };
            for _ in 0..300 {
                let (_, off) = p.next().ok_or_else(|| TestCaseError::fail("pattern ended early"))?;
                prop_assert_eq!(off % bs, 0);
                prop_assert!(off + bs <= size);
            }
        }
    }
}
