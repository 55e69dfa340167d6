//! Processor-bound tasks: arithmetic loops (12 operations per loop as in AIM), numeric
//! routines, sieve, sort, strings and memory. Inputs pass through `black_box` so that the
//! compiler cannot fold the loops away.

use super::TaskEnv;
use std::hint::black_box;

/// A loop of 12 operations: `$op` is a method of the type (`wrapping_add`, `mul` …).
macro_rules! arith {
    ($name:ident, $t:ty, $loops:expr, $op:ident, $a:expr, $b:expr) => {
        pub fn $name(env: &mut TaskEnv) -> Result<(), String> {
            let (mut x, y): ($t, $t) = (black_box($a), black_box($b));
            let mut acc: $t = black_box($a);
            for _ in 0..black_box($loops) {
                x = x.$op(y);
                acc = acc.$op(x);
                x = x.$op(y);
                acc = acc.$op(x);
                x = x.$op(y);
                acc = acc.$op(x);
                x = x.$op(y);
                acc = acc.$op(x);
                x = x.$op(y);
                acc = acc.$op(x);
                x = x.$op(y);
                acc = acc.$op(x);
                x = black_box(x);
            }
            env.sink = env.sink.wrapping_add(black_box(acc) as u64);
            Ok(())
        }
    };
}

use std::ops::{Add, Div, Mul};

arith!(add_int, i32, 3_400_000u32, wrapping_add, 3, -3);
arith!(add_long, i64, 3_400_000u32, wrapping_add, 3, -3);
arith!(add_short, i16, 600_000u32, wrapping_add, 3, -3);
arith!(add_double, f64, 1_000_000u32, add, 3.0, -3.0);
arith!(mul_int, i32, 20_000u32, wrapping_mul, 1, 1);
arith!(mul_long, i64, 70_000u32, wrapping_mul, 1, 1);
arith!(mul_short, i16, 50_000u32, wrapping_mul, 1, 1);
arith!(mul_double, f64, 680_000u32, mul, 1.0, 1.000_000_1);
arith!(div_int, i32, 75_000u32, wrapping_div, 1, 1);
arith!(div_long, i64, 75_000u32, wrapping_div, 1, 1);
arith!(div_short, i16, 45_000u32, wrapping_div, 1, 1);
arith!(div_double, f64, 380_000u32, div, 1.0, 1.000_000_1);

/// One level of a nested call chain that exits early from the bottom.
fn dive(depth: u32) -> Result<u32, u32> {
    if depth == 0 {
        return Err(black_box(7));
    }
    dive(black_box(depth - 1)).map(|v| v + 1)
}

pub fn jmp_test(env: &mut TaskEnv) -> Result<(), String> {
    for _ in 0..1000 {
        if let Err(v) = dive(black_box(16)) {
            env.sink = env.sink.wrapping_add(u64::from(v));
        }
    }
    Ok(())
}

pub fn matrix_rtns(env: &mut TaskEnv) -> Result<(), String> {
    const N: usize = 24;
    let a: Vec<f64> = (0..N * N).map(|i| (i % 7) as f64 + 0.5).collect();
    let b: Vec<f64> = (0..N * N).map(|i| (i % 5) as f64 - 1.5).collect();
    let mut c = vec![0.0f64; N * N];
    for _ in 0..20 {
        for i in 0..N {
            for j in 0..N {
                let mut s = 0.0;
                for k in 0..N {
                    s += a[i * N + k] * b[k * N + j];
                }
                c[i * N + j] = s;
            }
        }
        black_box(&mut c);
    }
    env.sink = env.sink.wrapping_add(c[N + 1] as u64);
    Ok(())
}

pub fn array_rtns(env: &mut TaskEnv) -> Result<(), String> {
    let v: Vec<i32> = (0..10_000).map(|_| (env.rng.next_u64() % 1000) as i32).collect();
    for pass in 0..500 {
        let sum: i64 = black_box(&v).iter().map(|&x| i64::from(x)).sum();
        let found = v.iter().position(|&x| x == pass * 50).unwrap_or(v.len());
        let max = v.iter().copied().max().unwrap_or(0);
        env.sink = env.sink.wrapping_add(sum as u64 + found as u64 + max as u64);
    }
    Ok(())
}

pub fn new_raph(env: &mut TaskEnv) -> Result<(), String> {
    for round in 0..40 {
        for k in 1..=100 {
            let n = black_box(f64::from(k * (round + 1)));
            let mut x = n / 2.0 + 1.0;
            for _ in 0..30 {
                let next = 0.5 * (x + n / x);
                if (next - x).abs() < 1e-12 {
                    break;
                }
                x = next;
            }
            env.sink = env.sink.wrapping_add(x as u64);
        }
    }
    Ok(())
}

pub fn num_rtns_1(env: &mut TaskEnv) -> Result<(), String> {
    for i in 1..=100u64 {
        for j in 1..=20u64 {
            let a = black_box(i * 7919 + j);
            let g = gcd(a, black_box(j * 104_729 + 1));
            let f = (a as f64).sqrt().ln() + (j as f64).powf(1.5) + (a as f64).log10().floor();
            env.sink = env.sink.wrapping_add(g + f as u64 + a.count_ones() as u64 + (a % 97).pow(2));
        }
    }
    Ok(())
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

pub fn series_1(env: &mut TaskEnv) -> Result<(), String> {
    let (mut pi, mut e, mut fact) = (0.0f64, 1.0f64, 1.0f64);
    for k in 0..black_box(100_000u32) {
        let kf = f64::from(k);
        pi += if k % 2 == 0 { 4.0 } else { -4.0 } / (2.0 * kf + 1.0);
        if k > 0 && k < 30 {
            fact *= kf;
            e += 1.0 / fact;
        }
    }
    env.sink = env.sink.wrapping_add((black_box(pi) * 1e6) as u64 + (e * 1e6) as u64);
    Ok(())
}

pub fn trig_rtns(env: &mut TaskEnv) -> Result<(), String> {
    let mut acc = 0.0f64;
    for i in 0..100 {
        for j in 0..460 {
            let x = black_box(f64::from(i) * 0.01 + f64::from(j) * 0.0001);
            acc += x.sin() * x.cos() + (x * 0.5).tan() + x.atan();
        }
    }
    env.sink = env.sink.wrapping_add(acc as u64);
    Ok(())
}

pub fn sieve(env: &mut TaskEnv) -> Result<(), String> {
    const LIMIT: usize = 1_000_000;
    let mut composite = vec![false; LIMIT + 1];
    for _ in 0..5 {
        composite.iter_mut().for_each(|c| *c = false);
        let mut count = 0u64;
        for i in 2..=LIMIT {
            if !composite[i] {
                count += 1;
                let mut m = i * i;
                while m <= LIMIT {
                    composite[m] = true;
                    m += i;
                }
            }
        }
        env.sink = env.sink.wrapping_add(black_box(count));
    }
    Ok(())
}

pub fn sort_rtns_1(env: &mut TaskEnv) -> Result<(), String> {
    let mut v: Vec<u32> = vec![0; 10_000];
    for _ in 0..10 {
        v.iter_mut().for_each(|x| *x = env.rng.next_u64() as u32);
        v.sort_unstable();
        env.sink = env.sink.wrapping_add(u64::from(v[v.len() / 2]));
    }
    Ok(())
}

pub fn string_rtns(env: &mut TaskEnv) -> Result<(), String> {
    let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"];
    for round in 0..1500 {
        let mut s = String::with_capacity(512);
        for (i, w) in words.iter().cycle().take(40).enumerate() {
            s.push_str(w);
            s.push(if (i + round) % 3 == 0 { ',' } else { ' ' });
        }
        let upper = s.to_uppercase();
        let copy = black_box(s.clone());
        let cmp = copy.cmp(&upper) as i64;
        let found = s.matches("delta").count() + s.find("hotel,").unwrap_or(0);
        let formatted = format!("{round:08}:{}:{}", s.len(), &upper[..16]);
        let parts = s.split(',').filter(|p| p.contains("echo")).count();
        env.sink =
            env.sink.wrapping_add((cmp + 2) as u64 + found as u64 + formatted.len() as u64 + parts as u64);
    }
    Ok(())
}

/// A block of memory on a cache-line boundary.
#[repr(C, align(64))]
struct Block([u8; 8192]);

/// Fills and copies 8 KiB blocks. Both start on a cache line: where two heap allocations
/// land depends on what the user ran before, a copy between buffers misaligned against each
/// other runs at under half the aligned speed here (glibc's memmove on this CPU), and inside
/// a mix this task cost 9× its cost alone.
pub fn mem_rtns_1(env: &mut TaskEnv) -> Result<(), String> {
    let (mut a, mut b) = (Box::new(Block([0; 8192])), Box::new(Block([0; 8192])));
    let (a, b) = (&mut a.0, &mut b.0);
    for round in 0..4000usize {
        a.fill(round as u8);
        b.copy_from_slice(black_box(&a[..]));
        b[(round * 64) % 8192] ^= 1;
        env.sink =
            env.sink.wrapping_add((black_box(&a[..]) == black_box(&b[..])) as u64 + u64::from(b[8191]));
    }
    Ok(())
}

pub fn mem_rtns_2(env: &mut TaskEnv) -> Result<(), String> {
    for round in 0..100usize {
        let mut v: Vec<u8> = Vec::with_capacity(64 << 10);
        v.resize(64 << 10, round as u8);
        for i in (0..v.len()).step_by(4096) {
            v[i] = v[i].wrapping_add(1);
        }
        env.sink = env.sink.wrapping_add(u64::from(black_box(&v)[4096]));
    }
    Ok(())
}

pub fn misc_rtns_1(env: &mut TaskEnv) -> Result<(), String> {
    for _ in 0..10 {
        for _ in 0..40 {
            // SAFETY: plain system calls on owned, correctly sized out-parameters.
            let (pid, t, u, r) = unsafe {
                let mut uts: libc::utsname = std::mem::zeroed();
                let mut ru: libc::rusage = std::mem::zeroed();
                (
                    libc::getpid(),
                    libc::time(std::ptr::null_mut()),
                    libc::uname(&mut uts),
                    libc::getrusage(libc::RUSAGE_SELF, &mut ru),
                )
            };
            env.sink = env.sink.wrapping_add(pid as u64 ^ t as u64 ^ (u + r) as u64);
        }
    }
    Ok(())
}

pub fn ram_copy(env: &mut TaskEnv) -> Result<(), String> {
    let mut a = vec![1u8; 1024];
    let mut b = vec![2u8; 1024];
    for i in 0..25_000usize {
        if i % 2 == 0 {
            b.copy_from_slice(black_box(&a[..]));
        } else {
            a.copy_from_slice(black_box(&b));
        }
    }
    env.sink = env.sink.wrapping_add(u64::from(a[5]) + u64::from(b[7]));
    Ok(())
}
