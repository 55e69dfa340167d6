//! Tests of the bw_mem kernels: each op's effect on small buffers, layout, and validation.

use super::*;

const SMALL_BYTES: usize = 2048;
const WORDS: usize = SMALL_BYTES / 4;

/// A small bench whose source holds the word pattern 0, 1, 2, ... so effects are checkable.
fn bench(op: MemOp) -> MemBench {
    let mut b = MemBench::new(op, SMALL_BYTES).unwrap();
    assert!(b.src_words().iter().chain(b.dst_words()).all(|&w| w == 0), "buffers start zeroed");
    for (i, w) in b.src_words_mut().iter_mut().enumerate() {
        *w = i as u32;
    }
    b
}

/// Sum of the initial pattern 0, 1, 2, ... over the words `pick` selects.
fn pattern_sum(pick: impl Fn(usize) -> bool) -> u32 {
    (0..WORDS).filter(|&i| pick(i)).fold(0u32, |s, i| s.wrapping_add(i as u32))
}

#[test]
fn names_round_trip() {
    for op in MemOp::ALL {
        assert_eq!(MemOp::parse(op.name()), Some(op));
    }
    let names: Vec<_> = MemOp::ALL.iter().map(|o| o.name()).collect();
    assert_eq!(
        names,
        [
            "rd",
            "wr",
            "rdwr",
            "cp",
            "frd",
            "fwr",
            "fcp",
            "bzero",
            "bcopy",
            "bcopy_aligned",
            "ubcopy",
            "ubcopy_aligned"
        ]
    );
    assert_eq!(MemOp::parse("RD"), None);
    assert_eq!(MemOp::parse(""), None);
}

#[test]
fn two_buffer_ops() {
    let two: Vec<_> = MemOp::ALL.into_iter().filter(|o| o.uses_two_buffers()).map(|o| o.name()).collect();
    assert_eq!(two, ["cp", "fcp", "bcopy", "bcopy_aligned", "ubcopy", "ubcopy_aligned"]);
    for op in MemOp::ALL {
        assert_eq!(bench(op).dst_layout().is_some(), op.uses_two_buffers(), "{op:?}");
    }
}

#[test]
fn size_validation() {
    for bad in [0, 1, 511, 513, 1000, 4096 + 256] {
        let err = MemBench::new(MemOp::Frd, bad).err().unwrap();
        assert!(err.contains("512") && err.contains(&bad.to_string()), "{err}");
    }
    for good in [512, 1024, 1536, 65536] {
        assert_eq!(MemBench::new(MemOp::Fcp, good).unwrap().bytes_per_pass(), good as u64);
    }
}

#[test]
fn bytes_per_pass_is_the_size_for_every_op() {
    for op in MemOp::ALL {
        let b = MemBench::new(op, 8192).unwrap();
        assert_eq!(b.bytes_per_pass(), 8192, "{op:?}");
        assert_eq!(b.size_bytes(), 8192);
        assert_eq!(b.op(), op);
    }
}

#[test]
fn buffers_are_page_aligned_and_conflict_layout_is_offset() {
    let b = bench(MemOp::Frd);
    assert_eq!(b.src_words().as_ptr() as usize % page_bytes(), 0);
    for (op, offset) in [
        (MemOp::Cp, 0),
        (MemOp::Fcp, 0),
        (MemOp::Bcopy, 0),
        (MemOp::UnrolledBcopy, 0),
        (MemOp::BcopyAligned, 1920),
        (MemOp::UnrolledBcopyAligned, 1920),
    ] {
        let b = bench(op);
        assert_eq!(b.dst_layout(), Some((offset, SMALL_BYTES + 2048)), "{op:?}");
        assert_eq!(b.src_words().as_ptr() as usize % page_bytes(), 0);
    }
}

#[test]
fn rd_sums_every_fourth_word() {
    let mut b = bench(MemOp::Rd);
    let one = pattern_sum(|i| i % 4 == 0);
    assert_eq!(b.run(1), u64::from(one));
    assert_eq!(b.run(3), u64::from(one.wrapping_mul(3)));
    assert_eq!(b.run(0), 0);
}

#[test]
fn frd_sums_every_word() {
    let mut b = bench(MemOp::Frd);
    assert_eq!(b.run(1), u64::from(pattern_sum(|_| true)));
    assert_eq!(b.run(2), u64::from(pattern_sum(|_| true).wrapping_mul(2)));
}

#[test]
fn wr_stores_exactly_every_fourth_word() {
    let mut b = bench(MemOp::Wr);
    b.run(1);
    for (i, &w) in b.src_words().iter().enumerate() {
        let want = if i % 4 == 0 { STORE_VALUE } else { i as u32 };
        assert_eq!(w, want, "word {i}");
    }
}

#[test]
fn fwr_stores_every_word() {
    let mut b = bench(MemOp::Fwr);
    b.run(2);
    assert!(b.src_words().iter().all(|&w| w == STORE_VALUE));
}

#[test]
fn rdwr_reads_then_stores_every_fourth_word() {
    let mut b = bench(MemOp::Rdwr);
    assert_eq!(b.run(1), u64::from(pattern_sum(|i| i % 4 == 0)));
    for (i, &w) in b.src_words().iter().enumerate() {
        assert_eq!(w, if i % 4 == 0 { STORE_VALUE } else { i as u32 }, "word {i}");
    }
    // The second pass reads back the stored words.
    assert_eq!(b.run(1), (WORDS / 4) as u64 * u64::from(STORE_VALUE));
}

#[test]
fn cp_copies_exactly_every_fourth_word() {
    let mut b = bench(MemOp::Cp);
    b.run(1);
    for (i, &w) in b.dst_words().iter().enumerate() {
        assert_eq!(w, if i % 4 == 0 { i as u32 } else { 0 }, "word {i}");
    }
    assert!(b.src_words().iter().enumerate().all(|(i, &w)| w == i as u32), "source untouched");
}

#[test]
fn full_copies_copy_every_word() {
    for op in
        [MemOp::Fcp, MemOp::UnrolledBcopy, MemOp::UnrolledBcopyAligned, MemOp::Bcopy, MemOp::BcopyAligned]
    {
        let mut b = bench(op);
        b.run(1);
        assert_eq!(b.dst_words(), b.src_words(), "{op:?}");
        assert!(b.src_words().iter().enumerate().all(|(i, &w)| w == i as u32), "{op:?} source untouched");
    }
}

#[test]
fn bzero_clears_the_buffer() {
    let mut b = bench(MemOp::Bzero);
    assert!(b.src_words()[1..].iter().all(|&w| w != 0));
    assert_eq!(b.run(1), 0);
    assert!(b.src_words().iter().all(|&w| w == 0));
}

#[test]
fn zero_passes_change_nothing() {
    for op in MemOp::ALL {
        let mut b = bench(op);
        b.run(0);
        assert!(b.src_words().iter().enumerate().all(|(i, &w)| w == i as u32), "{op:?}");
        assert!(b.dst_words().iter().all(|&w| w == 0), "{op:?}");
    }
}

#[test]
fn every_op_runs_on_a_larger_buffer() {
    for op in MemOp::ALL {
        let mut b = MemBench::new(op, 1 << 20).unwrap();
        std::hint::black_box(b.run(2));
    }
}

#[test]
fn frd_in_cache_is_fast() {
    let mut b = MemBench::new(MemOp::Frd, 16 << 10).unwrap();
    b.run(10);
    let passes = if cfg!(debug_assertions) { 200 } else { 20_000 };
    let start = std::time::Instant::now();
    std::hint::black_box(b.run(passes));
    let secs = start.elapsed().as_secs_f64();
    let mb_per_s = (passes * b.bytes_per_pass()) as f64 / secs / 1e6;
    // Debug builds are slow; only check that the number is sane there.
    let floor_mb_per_s = if cfg!(debug_assertions) { 1.0 } else { 1000.0 };
    assert!(mb_per_s > floor_mb_per_s, "frd 16 KiB: {mb_per_s:.0} MB/s");
}
