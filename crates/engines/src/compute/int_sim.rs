//! Integer kernels of simulation and number crunching: a discrete-event simulation (a
//! closed queueing network driven by a binary-heap event list), a prime sieve, and
//! multi-precision arithmetic (factorials in base 10^9). Checksums are reproduced by the C
//! versions.

use super::common::{check, check_eq, fold};
use crate::support::rng::SplitMix64;
use std::hint::black_box;

pub const DES_QUEUES: usize = 64;
pub const DES_CUSTOMERS: usize = 1024;
pub const DES_EVENTS: u64 = 400_000;

/// A binary min-heap of u64 keys (the event list).
#[derive(Default)]
pub struct Heap(Vec<u64>);

impl Heap {
    pub fn push(&mut self, k: u64) {
        let h = &mut self.0;
        h.push(k);
        let mut i = h.len() - 1;
        while i > 0 && h[(i - 1) / 2] > h[i] {
            h.swap(i, (i - 1) / 2);
            i = (i - 1) / 2;
        }
    }
    pub fn pop(&mut self) -> Option<u64> {
        let h = &mut self.0;
        let top = *h.first()?;
        let last = h.pop()?;
        if !h.is_empty() {
            h[0] = last;
            let mut i = 0;
            loop {
                let (l, r) = (2 * i + 1, 2 * i + 2);
                let mut m = i;
                if l < h.len() && h[l] < h[m] {
                    m = l;
                }
                if r < h.len() && h[r] < h[m] {
                    m = r;
                }
                if m == i {
                    break;
                }
                h.swap(i, m);
                i = m;
            }
        }
        Some(top)
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The network's state: FIFO queues (front = in service) and arrival times.
struct Net {
    queues: Vec<std::collections::VecDeque<u32>>,
    arrived: Vec<u64>,
    heap: Heap,
    seq: u64,
    r: SplitMix64,
}

impl Net {
    /// Schedules the completion of queue q's front customer at now + service time.
    fn start(&mut self, q: usize, now: u64) {
        let t = now + 1 + self.r.below_mod(100 + 4 * q as u64);
        self.heap.push((t << 30) | ((self.seq & 0xFF_FFFF) << 6) | q as u64);
        self.seq += 1;
    }
}

/// A closed network of 64 FIFO servers and 1,024 customers; each completion sends the
/// customer to a random queue. 400,000 events per repetition; checksum = Σ sojourn times.
pub fn des(reps: u64) -> Result<u64, String> {
    let mut acc = 0;
    for rep in 0..reps {
        let mut n = Net {
            queues: vec![Default::default(); DES_QUEUES],
            arrived: vec![0; DES_CUSTOMERS],
            heap: Heap::default(),
            seq: 0,
            r: SplitMix64::new(black_box(rep ^ 0x4445)),
        };
        for c in 0..DES_CUSTOMERS {
            n.queues[c % DES_QUEUES].push_back(c as u32);
        }
        for q in 0..DES_QUEUES {
            n.start(q, 0);
        }
        let (mut now, mut sojourn, mut monotone) = (0u64, 0u64, true);
        for _ in 0..DES_EVENTS {
            if n.heap.is_empty() {
                break;
            }
            let k = n.heap.pop().unwrap_or(0);
            let (t, q) = (k >> 30, (k & 63) as usize);
            monotone &= t >= now;
            now = t;
            let c = n.queues[q].pop_front().unwrap_or(0) as usize;
            sojourn = sojourn.wrapping_add(now - n.arrived[c]);
            if !n.queues[q].is_empty() {
                n.start(q, now);
            }
            let to = n.r.below_mod(DES_QUEUES as u64) as usize;
            n.arrived[c] = now;
            n.queues[to].push_back(c as u32);
            if n.queues[to].len() == 1 {
                n.start(to, now);
            }
        }
        check("des", "event times never go back", monotone)?;
        let present: usize = n.queues.iter().map(|q| q.len()).sum();
        check_eq("des", "customers in the network", present as u64, DES_CUSTOMERS as u64)?;
        let busy = n.queues.iter().filter(|q| !q.is_empty()).count();
        check_eq("des", "pending events = busy servers", n.heap.len() as u64, busy as u64)?;
        acc = fold(acc, sojourn ^ (now << 40));
    }
    Ok(acc)
}

pub const SIEVE_N: usize = 10_000_000;
/// π(10^7).
pub const PI_1E7: u64 = 664_579;

/// Bytes (one per odd number) of one segment of the sieve: resident in the L2 cache of
/// current CPUs, so that the case measures the core and its private caches, not the L3 and
/// memory that the neighbours of a shared machine load (it varied by 3-5% from run to run
/// over the whole 5 MB array).
pub const SIEVE_SEGMENT: usize = 128 << 10;

/// Odd primes ≤ `root` by a plain sieve (the striking primes of the segments).
fn odd_primes_upto(root: usize) -> Vec<usize> {
    let mut composite = vec![false; root / 2 + 1];
    let mut primes = Vec::new();
    let mut p = 3;
    while p <= root {
        if !composite[p / 2] {
            primes.push(p);
            let mut j = p * p;
            while j <= root {
                composite[j / 2] = true;
                j += 2 * p;
            }
        }
        p += 2;
    }
    primes
}

/// Primes ≤ n by a segmented sieve of Eratosthenes over odd numbers (index k stands for
/// 2k + 1), [`SIEVE_SEGMENT`] numbers at a time: (count, Σ primes).
pub fn sieve_count(n: usize, segment: &mut Vec<u8>) -> (u64, u64) {
    if n < 2 {
        return (0, 0);
    }
    let mut root = (n as f64).sqrt() as usize;
    while root * root > n {
        root -= 1;
    }
    while (root + 1) * (root + 1) <= n {
        root += 1;
    }
    let primes = odd_primes_upto(root);
    // The index of each prime's next odd multiple to strike, from its square on.
    let mut next: Vec<usize> = primes.iter().map(|p| p * p / 2).collect();
    segment.clear();
    segment.resize(SIEVE_SEGMENT, 0);
    let half = n.div_ceil(2);
    let (mut count, mut sum) = (1u64, 2u64);
    let mut lo = 1;
    while lo < half {
        let hi = (lo + SIEVE_SEGMENT).min(half);
        let seg = &mut segment[..hi - lo];
        seg.fill(0);
        for (p, j) in primes.iter().zip(next.iter_mut()) {
            while *j < hi {
                seg[*j - lo] = 1;
                *j += p;
            }
        }
        for (k, c) in seg.iter().enumerate() {
            if *c == 0 {
                count += 1;
                sum = sum.wrapping_add(2 * (lo + k) as u64 + 1);
            }
        }
        lo = hi;
    }
    (count, sum)
}

/// Sieves to 10^7 per repetition; checked against π(10^7) = 664,579.
pub fn sieve(reps: u64) -> Result<u64, String> {
    let mut acc = 0;
    let mut buf = Vec::new();
    for _ in 0..reps {
        let (count, sum) = sieve_count(black_box(SIEVE_N), &mut buf);
        check_eq("sieve", "π(10^7)", count, PI_1E7)?;
        acc = fold(acc, sum);
    }
    Ok(acc)
}

const BASE: u64 = 1_000_000_000;
const P: u64 = 1_000_000_007;

/// n! in base 10^9, least significant limb first.
pub fn factorial(n: u64) -> Vec<u32> {
    let mut limbs = vec![1u32];
    for k in 2..=n {
        let mut carry = 0u64;
        for l in limbs.iter_mut() {
            let v = u64::from(*l) * k + carry;
            *l = (v % BASE) as u32;
            carry = v / BASE;
        }
        while carry > 0 {
            limbs.push((carry % BASE) as u32);
            carry /= BASE;
        }
    }
    limbs
}

/// The number mod 10^9+7 (Horner from the top limb).
fn big_mod(limbs: &[u32]) -> u64 {
    limbs.iter().rev().fold(0, |m, l| (m * BASE + u64::from(*l)) % P)
}

/// n! for n = 1,500..1,999 (one per repetition); checked mod 10^9+7 against the product
/// taken modulo directly.
pub fn bignum(reps: u64) -> Result<u64, String> {
    let mut acc = 0;
    for rep in 0..reps {
        let n = 1500 + rep % 500;
        let f = factorial(black_box(n));
        let want = (2..=n).fold(1u64, |m, k| m * k % P);
        check_eq("bignum", &format!("{n}! mod 1e9+7"), big_mod(&f), want)?;
        let sum = f.iter().fold(0u64, |s, l| s.wrapping_mul(31).wrapping_add(u64::from(*l)));
        acc = fold(acc, sum ^ f.len() as u64);
    }
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_pops_in_order() {
        let mut h = Heap::default();
        let mut r = SplitMix64::new(1);
        let mut v: Vec<u64> = (0..1000).map(|_| r.below_mod(100)).collect();
        v.iter().for_each(|k| h.push(*k));
        v.sort_unstable();
        let out: Vec<u64> = std::iter::from_fn(|| h.pop()).collect();
        assert_eq!(out, v);
        assert!(h.is_empty());
    }

    #[test]
    fn sieve_and_factorial_known_values() {
        let mut b = Vec::new();
        assert_eq!(sieve_count(10, &mut b), (4, 17));
        assert_eq!(sieve_count(100, &mut b).0, 25);
        assert_eq!(sieve_count(2, &mut b), (1, 2));
        assert_eq!(factorial(20), vec![176_640_000, 432_902_008, 2]);
    }

    #[test]
    fn kernels_check_themselves() {
        assert!(des(1).is_ok());
        assert!(sieve(1).is_ok());
        assert!(bignum(3).is_ok());
    }
}
