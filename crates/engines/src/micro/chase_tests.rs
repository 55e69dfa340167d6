//! Tests of the pointer chase: ring shape in both modes, page hopping, run bookkeeping, and the
//! size series.

use super::*;

/// Walks the ring from element 0 and returns the visiting order (one full lap).
fn lap(c: &Chase) -> Vec<usize> {
    let mut seen = vec![false; c.len()];
    let mut order = Vec::with_capacity(c.len());
    let mut k = 0;
    loop {
        assert!(!seen[k], "element {k} visited twice before the ring closed");
        seen[k] = true;
        order.push(k);
        k = c.next_index(k);
        if k == 0 {
            break;
        }
    }
    assert_eq!(order.len(), c.len(), "the ring closed before visiting every element");
    order
}

#[test]
fn sequential_ring_steps_one_stride() {
    let c = Chase::new(4096, 64, false).unwrap();
    assert_eq!(c.len(), 64);
    assert_eq!(c.stride_bytes(), 64);
    assert!(!c.is_empty());
    assert_eq!(lap(&c), (0..64).collect::<Vec<_>>());
}

#[test]
fn rings_visit_every_element_once() {
    for random in [false, true] {
        for (size, stride) in [(16, 8), (512, 64), (4096, 16), (100_000, 24), (1 << 20, 128), (3 << 20, 4096)]
        {
            let c = Chase::new(size, stride, random).unwrap();
            assert_eq!(c.len(), size.div_ceil(stride));
            lap(&c);
        }
    }
}

#[test]
fn size_not_a_multiple_of_the_stride_rounds_up() {
    // lat_mem_rd puts an element at every stride below the size.
    let c = Chase::new(2560, 1024, false).unwrap();
    assert_eq!(c.len(), 3);
    assert_eq!(lap(&c), [0, 1, 2]);
}

/// Consecutive steps that stay on the same page, over one lap.
fn same_page_steps(c: &Chase) -> usize {
    let page = page_bytes();
    let order = lap(c);
    (0..order.len())
        .filter(|&i| {
            let (a, b) = (order[i], order[(i + 1) % order.len()]);
            a * c.stride_bytes() / page == b * c.stride_bytes() / page
        })
        .count()
}

#[test]
fn random_ring_changes_page_at_almost_every_step() {
    let page = page_bytes();
    for (size, stride) in [(64 * page, 64), (16 * page + 3 * 512, 16), (8 * page, 24), (100 * page, page)] {
        let c = Chase::new(size, stride, true).unwrap();
        let same = same_page_steps(&c);
        assert!(same * 100 <= c.len(), "{size}/{stride}: {same} of {} steps stay on a page", c.len());
    }
    // The sequential ring mostly stays on a page.
    let seq = Chase::new(64 * page, 64, false).unwrap();
    assert!(same_page_steps(&seq) > seq.len() / 2);
}

#[test]
fn random_ring_is_shuffled_and_repeatable() {
    let a = Chase::new(1 << 20, 64, true).unwrap();
    let b = Chase::new(1 << 20, 64, true).unwrap();
    let order = lap(&a);
    assert_eq!(order, lap(&b), "the same geometry gives the same ring");
    let forward = (0..order.len()).filter(|&i| order[(i + 1) % order.len()] == order[i] + 1).count();
    assert!(forward < order.len() / 100, "{forward} sequential steps");
}

#[test]
fn single_page_random_ring_still_works() {
    let c = Chase::new(2048, 64, true).unwrap();
    assert_eq!(c.len(), 32);
    assert_ne!(lap(&c), (0..32).collect::<Vec<_>>());
}

#[test]
fn run_follows_the_ring_and_carries_on() {
    let mut c = Chase::new(8192, 64, true).unwrap();
    let start = c.current_index();
    let mut want = start;
    for _ in 0..37 {
        want = c.next_index(want);
    }
    assert_eq!(c.run(37), want);
    assert_eq!(c.current_index(), want);
    // A whole number of laps comes back to where it started; 0 loads stay put.
    assert_eq!(c.run(3 * c.len() as u64), want);
    assert_eq!(c.run(0), want);
    assert_eq!(c.run(16), (0..16).fold(want, |k, _| c.next_index(k)));
}

#[test]
fn validation() {
    for (size, stride) in [(1024, 0), (1024, 4), (1024, 12), (4096, 1004)] {
        let err = Chase::new(size, stride, false).err().unwrap();
        assert!(err.contains("multiple"), "{err}");
    }
    for (size, stride) in [(64, 64), (127, 64), (0, 8), (1536, 1024)] {
        let err = Chase::new(size, stride, true).err().unwrap();
        assert!(err.contains("twice"), "{err}");
    }
    assert!(Chase::new(128, 64, false).is_ok());
}

#[test]
fn size_series_matches_lat_mem_rd() {
    let s = sizes(64 << 10);
    let head: Vec<usize> = s.iter().copied().take(8).collect();
    assert_eq!(head, [512, 1024, 2048, 3072, 4096, 6144, 8192, 10240]);
    // 2 KiB steps to 32 KiB, then 4 KiB steps (1/16 of 64 KiB) to 64 KiB.
    let tail: Vec<usize> = s.iter().copied().skip_while(|&k| k < 30 << 10).collect();
    assert_eq!(tail, [30720, 32768, 36864, 40960, 45056, 49152, 53248, 57344, 61440, 65536]);
}

#[test]
fn size_series_shape() {
    let max = 64 << 20;
    let s = sizes(max);
    assert!(s.windows(2).all(|w| w[0] < w[1]), "strictly increasing");
    assert_eq!(s.first(), Some(&512));
    assert_eq!(s.last(), Some(&max));
    // Past 32 KiB there are 8 points per octave: every power of two is hit.
    for p in 15..=26 {
        assert!(s.contains(&(1usize << p)), "2^{p}");
        let octave = s.iter().filter(|&&k| k > 1 << p && k <= 1 << (p + 1)).count();
        if p < 26 {
            assert_eq!(octave, 8, "octave above 2^{p}");
        }
    }
    // lat_mem_rd 64 (MB) gives 512 B..64 MiB: 5 to 4 KiB, 14 to 32 KiB, 8 per octave after.
    assert_eq!(s.len(), 5 + 14 + 11 * 8);
}

#[test]
fn size_series_odd_limits() {
    assert!(sizes(0).is_empty());
    assert!(sizes(511).is_empty());
    assert_eq!(sizes(512), [512]);
    assert_eq!(sizes(700), [512, 700]);
    assert_eq!(sizes(5000), [512, 1024, 2048, 3072, 4096, 5000]);
}
