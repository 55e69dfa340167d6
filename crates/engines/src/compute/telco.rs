//! telco, Cowlishaw's decimal billing benchmark (workload catalog §8): per call, price =
//! rate × seconds rounded half-even to cents, a base tax (6.75%) and for distance calls a
//! district tax (3.41%) truncated to cents, the total written as text; in exact decimal
//! arithmetic ([`super::decimal`]). The input is generated from the published distribution
//! (exponential, mean 180 s) and checked; the totals are checked against an independent
//! integer computation, the output file against its digest, and the test file against the
//! catalog's control totals.

use super::common::{check, check_eq, fault_injected, fold};
use super::decimal::{Decimal, Rounding};
use crate::support::rng::SplitMix64;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// The catalog's telco.testb durations.
pub const TESTB: [u64; 10] = [308, 76, 68, 323, 82, 329, 14, 101, 522, 50];
/// Control totals of telco.testb in cents (sumT, sumB, sumD).
pub const TESTB_TOTALS_CENTS: [i64; 3] = [891, 50, 22];
/// Control totals of the published expon180.1e6b in cents; our file is another sample of the
/// same distribution, so its totals must come within [`SAMPLE_TOLERANCE`] of these.
pub const PUBLISHED_TOTALS_CENTS: [i64; 3] = [100_473_758, 5_762_830, 2_504_217];
/// Relative distance allowed between our sample's totals and the published ones (the
/// sampling spread of a sum over 10^6 calls is about 0.15%).
pub const SAMPLE_TOLERANCE: f64 = 0.01;
pub const CALLS: usize = 1_000_000;

/// Sums of one billing pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sums {
    pub total: Decimal,
    pub base_tax: Decimal,
    pub dist_tax: Decimal,
}

impl Sums {
    fn cents(&self) -> [i64; 3] {
        [self.total, self.base_tax, self.dist_tax].map(|d| d.quantize(-2, Rounding::Down).coef as i64)
    }
}

/// Writes `n` durations (8-byte big-endian seconds) drawn from the exponential distribution
/// of mean 180 s, rounded to whole seconds.
pub fn generate(path: &Path, n: usize, seed: u64) -> std::io::Result<()> {
    let mut r = SplitMix64::new(seed);
    let mut w = BufWriter::new(std::fs::File::create(path)?);
    for _ in 0..n {
        let secs = (-180.0 * (1.0 - r.unit_f64()).ln()).round() as u64;
        w.write_all(&secs.to_be_bytes())?;
    }
    w.into_inner().map_err(|e| e.into_error())?.sync_all()
}

/// The durations of a file; a trailing partial record (testb's newline) is ignored.
pub fn read_calls(path: &Path) -> std::io::Result<Vec<u64>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.read_to_end(&mut bytes)?;
    Ok(bytes.chunks_exact(8).map(|c| u64::from_be_bytes(c.try_into().unwrap_or([0; 8]))).collect())
}

/// One billing pass: read → compute → write → close, in exact decimal.
pub fn bill(input: &Path, output: &Path) -> std::io::Result<Sums> {
    let calls = read_calls(input)?;
    let rate = |text| Decimal::parse(text).unwrap_or(Decimal::new(0, 0));
    let (local, dist) = (rate("0.0013"), rate("0.00894"));
    let (btax_rate, dtax_rate) = (rate("0.0675"), rate("0.0341"));
    let zero = Decimal::new(0, -2);
    let mut s = Sums { total: zero, base_tax: zero, dist_tax: zero };
    let mut w = BufWriter::with_capacity(64 << 10, std::fs::File::create(output)?);
    for n in calls {
        let distance = n & 1 == 1;
        let rate = if distance { dist } else { local };
        let price = rate.mul(Decimal::from_int(i128::from(n))).quantize(-2, Rounding::HalfEven);
        let btax = price.mul(btax_rate).quantize(-2, Rounding::Down);
        let mut total = price.add(btax);
        s.base_tax = s.base_tax.add(btax);
        if distance {
            let dtax = price.mul(dtax_rate).quantize(-2, Rounding::Down);
            total = total.add(dtax);
            s.dist_tax = s.dist_tax.add(dtax);
        }
        s.total = s.total.add(total);
        write!(w, "{total}\r\n")?;
    }
    w.into_inner().map_err(|e| e.into_error())?;
    Ok(s)
}

/// FNV-1a, 64 bits.
fn fnv(h: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(h, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3))
}
const FNV0: u64 = 0xcbf2_9ce4_8422_2325;

/// The same bill in integer cents, written independently of the decimal type: the sums in
/// cents and the digest of the expected output.
pub fn expected(calls: &[u64]) -> ([i64; 3], u64) {
    let half_even = |num: i64, den: i64| {
        let (q, r) = (num / den, num % den);
        if 2 * r > den || (2 * r == den && q % 2 == 1) {
            q + 1
        } else {
            q
        }
    };
    let (mut sums, mut h) = ([0i64; 3], FNV0);
    for &n in calls {
        let n = n as i64;
        let distance = n & 1 == 1;
        let price = if distance { half_even(n * 894, 1000) } else { half_even(n * 13, 100) };
        let btax = price * 675 / 10_000;
        let dtax = if distance { price * 341 / 10_000 } else { 0 };
        let total = price + btax + dtax;
        sums[0] += total;
        sums[1] += btax;
        sums[2] += dtax;
        h = fnv(h, format!("{}.{:02}\r\n", total / 100, total % 100).as_bytes());
    }
    (sums, h)
}

/// A prepared telco cell: the input file and what its bill must come to.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Prepared {
    pub input: PathBuf,
    pub output: PathBuf,
    pub want_cents: [i64; 3],
    pub want_digest: u64,
}

fn io(what: &str, p: &Path, e: std::io::Error) -> String {
    format!("telco: {what} {}: {e}", p.display())
}

/// Checks the catalog's test file (exactly its control totals) in `dir`.
pub fn check_testb(dir: &Path) -> Result<(), String> {
    let (input, output) = (testb_path(dir), dir.join("telco.testb.out"));
    let mut bytes: Vec<u8> = TESTB.iter().flat_map(|n| n.to_be_bytes()).collect();
    bytes.push(0x0a);
    std::fs::write(&input, bytes).map_err(|e| io("cannot write", &input, e))?;
    let s = bill(&input, &output).map_err(|e| io("cannot bill", &input, e))?;
    let got = s.cents();
    for (k, name) in ["sumT", "sumB", "sumD"].iter().enumerate() {
        check_eq("telco", &format!("testb {name} (cents)"), got[k] as u64, TESTB_TOTALS_CENTS[k] as u64)?;
    }
    Ok(())
}

/// Generates the million-call input in `dir` and checks it: mean near 180 s, and totals
/// within [`SAMPLE_TOLERANCE`] of the published control totals; the test file too.
pub fn prepare(dir: &Path) -> Result<Prepared, String> {
    check_testb(dir)?;
    let input = dir.join("expon180.1e6b");
    generate(&input, CALLS, 180).map_err(|e| io("cannot write", &input, e))?;
    let calls = read_calls(&input).map_err(|e| io("cannot read", &input, e))?;
    let mean = calls.iter().sum::<u64>() as f64 / calls.len().max(1) as f64;
    check(
        "telco",
        &format!("generated mean duration {mean:.2} s is within 1% of 180 s"),
        (mean - 180.0).abs() < 1.8,
    )?;
    let (want_cents, want_digest) = expected(&calls);
    for (k, name) in ["sumT", "sumB", "sumD"].iter().enumerate() {
        let rel = (want_cents[k] - PUBLISHED_TOTALS_CENTS[k]) as f64 / PUBLISHED_TOTALS_CENTS[k] as f64;
        check(
            "telco",
            &format!("{name} {} is within 1% of the published {}", want_cents[k], PUBLISHED_TOTALS_CENTS[k]),
            rel.abs() < SAMPLE_TOLERANCE,
        )?;
    }
    Ok(Prepared { input, output: dir.join("telco.out"), want_cents, want_digest })
}

/// `passes` billing passes of the million calls (the output deleted before each); the sums of
/// each and the last output file are checked. Returns the digest of the output.
pub fn run(p: &Prepared, passes: u64) -> Result<u64, String> {
    for _ in 0..passes {
        let _ = std::fs::remove_file(&p.output);
        let s = bill(&p.input, &p.output).map_err(|e| io("cannot bill", &p.input, e))?;
        let got = s.cents();
        for (k, name) in ["sumT", "sumB", "sumD"].iter().enumerate() {
            check_eq(
                "telco",
                &format!("{name} (cents) vs the integer bill"),
                got[k] as u64,
                p.want_cents[k] as u64,
            )?;
        }
    }
    check_output(p)
}

/// Checks the last pass's output file against the integer bill's digest; the digest.
pub fn check_output(p: &Prepared) -> Result<u64, String> {
    let text = std::fs::read(&p.output).map_err(|e| io("cannot read", &p.output, e))?;
    let digest = fnv(FNV0, &text);
    let digest = if fault_injected("telco-output") { digest ^ 1 } else { digest };
    check_eq("telco", "digest of the output file", digest, p.want_digest)?;
    Ok(digest)
}

/// The checksum a C form prints after `passes` passes that each summed to `cents` (sumT,
/// sumB, sumD folded in turn per pass, as c_kernels/telco.c does).
pub fn c_checksum(cents: [i64; 3], passes: u64) -> u64 {
    (0..passes).fold(0, |acc, _| cents.iter().fold(acc, |a, c| fold(a, *c as u64)))
}

/// The test file's path in `dir` (written by [`check_testb`]).
pub fn testb_path(dir: &Path) -> PathBuf {
    dir.join("telco.testb")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn testb_gives_the_catalog_control_totals() {
        let dir = tempfile::tempdir().unwrap();
        check_testb(dir.path()).unwrap();
        let out = std::fs::read_to_string(dir.path().join("telco.testb.out")).unwrap();
        assert!(out.starts_with("0.42\r\n"), "308 s local: 0.40 + 0.02 → {out}");
        let (cents, _) = expected(&TESTB);
        assert_eq!(cents, TESTB_TOTALS_CENTS, "the integer bill agrees");
    }

    #[test]
    fn a_small_generated_bill_matches_the_integer_bill() {
        let dir = tempfile::tempdir().unwrap();
        let (input, output) = (dir.path().join("in"), dir.path().join("out"));
        generate(&input, 20_000, 5).unwrap();
        let s = bill(&input, &output).unwrap();
        let (cents, digest) = expected(&read_calls(&input).unwrap());
        assert_eq!(s.cents(), cents);
        assert_eq!(fnv(FNV0, &std::fs::read(&output).unwrap()), digest);
    }

    #[test]
    fn the_c_checksum_folds_each_pass() {
        assert_eq!(c_checksum(TESTB_TOTALS_CENTS, 0), 0);
        // The value c_kernels/telco.c printed for one pass of testb.
        assert_eq!(c_checksum(TESTB_TOTALS_CENTS, 1), 1_215_631_650_312_254_526);
        assert_ne!(c_checksum(TESTB_TOTALS_CENTS, 2), c_checksum(TESTB_TOTALS_CENTS, 1));
    }

    #[test]
    fn the_million_calls_come_near_the_published_control_totals() {
        let dir = tempfile::tempdir().unwrap();
        let p = prepare(dir.path()).unwrap();
        run(&p, 1).unwrap();
    }
}
