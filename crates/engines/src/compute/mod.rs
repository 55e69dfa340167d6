//! The `compute` engine: seed 000's single-threaded, compute-intense suite. Twelve integer and
//! six floating-point test cases modelled on application classes, and telco (exact decimal
//! billing). Each case runs in its own process on one pinned CPU, checks its own result (a
//! failed check fails the cell loudly), and scores reference time / time; a cell of several
//! cases (`case=int`, `fp`, `all`) also reports the geometric mean of their scores, as seed
//! 000 reports its suites. With `cc` the integer cases run as C programs compiled from the
//! sources embedded here (with `cflags`), their checksums verified against the Rust kernels';
//! telco has three arithmetic forms (`arith`: Rust exact decimal, C `_Decimal64`, C `double`),
//! as seed 002 compares decimal floating point.

mod c_build;
pub(crate) mod child;
mod common;
mod decimal;
mod fp_linalg;
mod fp_phys;
mod int_data;
mod int_search;
mod int_sim;
mod int_text;
mod paced;
mod run;
mod telco;

use crate::info::{EngineInfo, Shortcut, ShortcutForm};
use crate::support::pace;
use crate::{
    AreaRule, Caps, CellContext, Engine, EngineError, Figure, OptKind, OptionSpec, SummaryArea, Workload,
};
use racehorse_core::{Value, WorkUnit};

pub struct Compute;

/// The suite a case belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suite {
    Int,
    Fp,
    Decimal,
}

/// How a case computes.
#[derive(Clone, Copy)]
pub enum Kernel {
    /// Integer: repetitions → checksum (reproduced by the C version).
    Int(fn(u64) -> Result<u64, String>),
    /// Floating point: repetitions → a result value (checked inside).
    Fp(fn(u64) -> Result<f64, String>),
    /// telco: passes over the prepared million calls.
    Telco,
}

/// One test case: its repetitions per size and its reference times.
pub struct Case {
    pub name: &'static str,
    pub suite: Suite,
    pub kernel: Kernel,
    pub quick_reps: u64,
    pub standard_reps: u64,
    /// Reference times in seconds for the quick and standard sizes (see [`CASES`]).
    pub reference_s: [f64; 2],
}

const fn case(
    name: &'static str,
    suite: Suite,
    kernel: Kernel,
    reps: [u64; 2],
    reference_s: [f64; 2],
) -> Case {
    Case { name, suite, kernel, quick_reps: reps[0], standard_reps: reps[1], reference_s }
}

use Kernel::{Fp, Int};
use Suite::{Decimal as Dec, Fp as F, Int as I};

/// Every case. The reference times (the score's numerator, like SPEC's reference machine)
/// are a definition, not a result: CPU seconds of the Rust kernels (release build) measured
/// once on the development VM (2 vCPUs of a shared x86-64 host, 2026-11-22, each case in a
/// fresh process) with scripts/bench-compute.sh: quick = the medians of 10 runs (telco: of
/// its own 10-run cell), standard = the medians of 3; a score of 1.0 means as fast as that
/// machine was.
pub const CASES: &[Case] = &[
    case("sort", I, Int(int_data::sort), [10, 128], [REFERENCE_QUICK_S[0], REFERENCE_STANDARD_S[0]]),
    case("hash", I, Int(int_data::hash), [414, 5175], [REFERENCE_QUICK_S[1], REFERENCE_STANDARD_S[1]]),
    case("lz", I, Int(int_data::lz), [101, 1266], [REFERENCE_QUICK_S[2], REFERENCE_STANDARD_S[2]]),
    case("regex", I, Int(int_text::regex), [14, 174], [REFERENCE_QUICK_S[3], REFERENCE_STANDARD_S[3]]),
    case("parse", I, Int(int_text::parse), [11, 134], [REFERENCE_QUICK_S[4], REFERENCE_STANDARD_S[4]]),
    case("align", I, Int(int_text::align), [82, 1020], [REFERENCE_QUICK_S[5], REFERENCE_STANDARD_S[5]]),
    case("bfs", I, Int(int_search::bfs), [155, 1938], [REFERENCE_QUICK_S[6], REFERENCE_STANDARD_S[6]]),
    case(
        "tictactoe",
        I,
        Int(int_search::tictactoe),
        [108, 1347],
        [REFERENCE_QUICK_S[7], REFERENCE_STANDARD_S[7]],
    ),
    case(
        "nqueens",
        I,
        Int(int_search::nqueens),
        [327, 4092],
        [REFERENCE_QUICK_S[8], REFERENCE_STANDARD_S[8]],
    ),
    case("des", I, Int(int_sim::des), [40, 494], [REFERENCE_QUICK_S[9], REFERENCE_STANDARD_S[9]]),
    case("sieve", I, Int(int_sim::sieve), [53, 663], [REFERENCE_QUICK_S[10], REFERENCE_STANDARD_S[10]]),
    case("bignum", I, Int(int_sim::bignum), [852, 10644], [REFERENCE_QUICK_S[11], REFERENCE_STANDARD_S[11]]),
    case("nbody", F, Fp(fp_phys::nbody), [88, 1097], [REFERENCE_QUICK_S[12], REFERENCE_STANDARD_S[12]]),
    case("stencil", F, Fp(fp_phys::stencil), [55, 685], [REFERENCE_QUICK_S[13], REFERENCE_STANDARD_S[13]]),
    case(
        "montecarlo",
        F,
        Fp(fp_phys::montecarlo),
        [33, 412],
        [REFERENCE_QUICK_S[14], REFERENCE_STANDARD_S[14]],
    ),
    case(
        "spectral",
        F,
        Fp(fp_linalg::spectral),
        [14, 173],
        [REFERENCE_QUICK_S[15], REFERENCE_STANDARD_S[15]],
    ),
    case("lu", F, Fp(fp_linalg::lu), [250, 3123], [REFERENCE_QUICK_S[16], REFERENCE_STANDARD_S[16]]),
    case("fft", F, Fp(fp_linalg::fft_kernel), [45, 561], [REFERENCE_QUICK_S[17], REFERENCE_STANDARD_S[17]]),
    case("telco", Dec, Kernel::Telco, [4, 53], [REFERENCE_QUICK_S[18], REFERENCE_STANDARD_S[18]]),
];

/// Reference CPU seconds, quick size, in [`CASES`] order.
#[rustfmt::skip]
const REFERENCE_QUICK_S: [f64; 19] = [
    0.776, 0.805, 0.887, 0.629, 0.798, 0.798, 0.809, 0.841, 0.792, 0.792, 0.799, 0.800, 0.792, 0.835, 0.784, 0.799, 0.976, 0.845, 0.750,
];
/// Reference CPU seconds, standard size, in [`CASES`] order.
#[rustfmt::skip]
const REFERENCE_STANDARD_S: [f64; 19] = [
    9.90, 10.06, 11.05, 6.82, 9.56, 9.81, 9.82, 10.46, 9.92, 9.84, 10.01, 10.36, 9.89, 10.27, 9.78, 9.87, 11.82, 10.49, 9.86,
];

/// Names accepted by the `case` option: every case, and the suites.
pub const CASE_CHOICES: &[&str] = &[
    "all",
    "int",
    "fp",
    "sort",
    "hash",
    "lz",
    "regex",
    "parse",
    "align",
    "bfs",
    "tictactoe",
    "nqueens",
    "des",
    "sieve",
    "bignum",
    "nbody",
    "stencil",
    "montecarlo",
    "spectral",
    "lu",
    "fft",
    "telco",
];

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "case",
        kind: OptKind::Choice(CASE_CHOICES),
        default: "all",
        help: "a test case, or a suite run as one cell with the geometric mean of its scores: int (12 \
               cases), fp (6), all (both and telco)",
    },
    OptionSpec {
        name: "size",
        kind: OptKind::Choice(&["quick", "standard"]),
        default: "quick",
        help: "problem size: quick (< 2 s per case) or standard (5-30 s per case)",
    },
    OptionSpec {
        name: "reps",
        kind: OptKind::Int { min: 0, max: 1_000_000 },
        default: "0",
        help: "repetitions of each case's kernel instead of the size's (0: the size's); the score \
               is then not defined",
    },
    OptionSpec {
        name: "clock",
        kind: OptKind::Choice(&["cpu", "wall"]),
        default: "cpu",
        help: "what times a case: its process's CPU time (robust on a shared machine) or elapsed time \
               (SPEC's; equal on an idle machine)",
    },
    OptionSpec {
        name: "cc",
        kind: OptKind::Str,
        default: "",
        help: "C compiler for the cases' C versions (compiled at prepare into the cell's directory, \
               results checked as the Rust kernels'; recorded with its version); empty: Rust kernels",
    },
    OptionSpec {
        name: "arith",
        kind: OptKind::Choice(ARITH_CHOICES),
        default: "rust-decimal",
        help: "telco's arithmetic: rust-decimal (exact decimal in Rust), c-decimal64 (C _Decimal64, the \
               compiler's decimal library: BID on x86) or c-double (C binary double rounded to cents at \
               each step); the c- forms need cc",
    },
    OptionSpec {
        name: "cflags",
        kind: OptKind::Str,
        default: "-O2",
        help: "flags for cc, e.g. \"-O3 -march=native\" (a list is an axis: compare variants)",
    },
];

/// The option table with `rate` and `qos` (a paced cell is a duty cycle of one case).
static PACED_OPTIONS: [OptionSpec; OPTIONS.len() + 2] = pace::with_pace_options(OPTIONS);

/// telco's arithmetic forms (the `arith` option).
pub const ARITH_CHOICES: &[&str] = &["rust-decimal", "c-decimal64", "c-double"];

/// How telco computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arith {
    /// Exact decimal in Rust ([`decimal`]).
    RustDecimal,
    /// C `_Decimal64` (IEEE 754 decimal64 as the compiler implements it).
    CDecimal64,
    /// C binary `double`, rounded to cents at each step.
    CDouble,
}

impl Arith {
    /// The form an `arith` value names (the default for anything else).
    pub fn of(choice: &str) -> Arith {
        match choice {
            "c-decimal64" => Arith::CDecimal64,
            "c-double" => Arith::CDouble,
            _ => Arith::RustDecimal,
        }
    }
    /// Its `arith` value.
    pub fn name(self) -> &'static str {
        match self {
            Arith::RustDecimal => "rust-decimal",
            Arith::CDecimal64 => "c-decimal64",
            Arith::CDouble => "c-double",
        }
    }
    /// The case name of its C form in the compiled program, if it is one.
    pub fn c_case(self) -> Option<&'static str> {
        match self {
            Arith::RustDecimal => None,
            Arith::CDecimal64 => Some("telco-decimal64"),
            Arith::CDouble => Some("telco-double"),
        }
    }
}

/// True when case `c` runs as a C kernel in a cell with a compiler and telco form `arith`.
pub fn has_c_kernel(c: &Case, arith: Arith) -> bool {
    match c.kernel {
        Kernel::Int(_) => true,
        Kernel::Fp(_) => c_build::FP_CASES.contains(&c.name),
        Kernel::Telco => arith.c_case().is_some(),
    }
}

/// Drops `arith` from cells without telco, and `cc` and `cflags` from cells where no C
/// kernel runs (no compiler given, or only telco in Rust).
fn drop_unused(params: &mut racehorse_core::Params) {
    let text = |p: &racehorse_core::Params, k: &str| match p.get(k) {
        Some(Value::Str(s)) => s.trim().to_string(),
        _ => String::new(),
    };
    let cases = cases_of(&text(params, "case"));
    let arith = Arith::of(&text(params, "arith"));
    if !cases.iter().any(|c| c.kernel_is_telco()) {
        params.remove("arith");
    }
    if text(params, "cc").is_empty() || !cases.iter().any(|c| has_c_kernel(c, arith)) {
        params.remove("cc");
        params.remove("cflags");
    }
}

impl Case {
    fn kernel_is_telco(&self) -> bool {
        matches!(self.kernel, Kernel::Telco)
    }
}

/// The cases a `case` value names, in [`CASES`] order.
pub fn cases_of(choice: &str) -> Vec<&'static Case> {
    CASES
        .iter()
        .filter(|c| match choice {
            "all" => true,
            "int" => c.suite == Suite::Int,
            "fp" => c.suite == Suite::Fp,
            name => c.name == name,
        })
        .collect()
}

/// The geometric mean of positive, finite scores (None when there is none or one is not).
pub fn geomean(scores: &[f64]) -> Option<f64> {
    if scores.is_empty() || scores.iter().any(|s| !s.is_finite() || *s <= 0.0) {
        return None;
    }
    Some((scores.iter().map(|s| s.ln()).sum::<f64>() / scores.len() as f64).exp())
}

/// `--cc gcc`.
const CC_SHORTCUT: Shortcut = Shortcut {
    flag: "cc",
    option: "cc",
    form: ShortcutForm::Whole,
    value_name: "CC",
    help: "C compiler for the compute engine's C kernels (integer and floating-point cases, telco's \
           c- forms; compiled at prepare time, checked against the Rust kernels)",
};

/// `--cflags=-O2 --cflags='-O3 -march=native'`.
const CFLAGS_SHORTCUT: Shortcut = Shortcut {
    flag: "cflags",
    option: "cflags",
    form: ShortcutForm::Repeat,
    value_name: "FLAGS",
    help: "Flags for --cc, taken whole; repeat to compare variants (an axis), e.g. --cflags=-O2 \
           --cflags='-O3 -march=native'",
};

/// Each case's time, score and whether its kernel is C (one case: no suffix; several:
/// `_CASE`), the suites' geometric means, telco's, then the paced cell's and pace's figures.
const OWN_FIGURES: &[Figure] = &[
    Figure::info("time_s*", "time*", "s"),
    Figure::info("score*", "score*", "score"),
    Figure::info("c_kernel*", "C kernel*", "1 = C"),
    Figure::info("score_geomean_int", "integer suite's geometric mean", "score"),
    Figure::info("score_geomean_fp", "floating-point suite's geometric mean", "score"),
    Figure::info("score_geomean", "geometric mean of every score", "score"),
    Figure::info("batch_s", "telco's time per batch", "s"),
    Figure::info("cpu_ns_per_call", "telco's CPU per call", "ns"),
    Figure::info("wall_s", "wall time", "s"),
    Figure::info("cpu_s", "CPU time", "cpu_s"),
    Figure::info("duty_cycle_pct", "paced duty cycle", "%"),
    Figure::info("reps_per_call", "repetitions per paced unit", "count"),
];

static FIGURES: [Figure; OWN_FIGURES.len() + pace::FIGURES.len()] = pace::with_pace_figures(OWN_FIGURES);

/// What `Compute` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "compute",
    about: "seed 000's compute-intense suite: 12 integer, 6 floating-point cases and telco, one pinned process each, \
         self-checked; score = reference time / time, geometric mean per suite; C variants via cc/cflags",
    area: "Compute",
    summary_area: AreaRule::Fixed(SummaryArea::CpuIntense),
    unit: WorkUnit::Iterations,
    caps: Caps { needs_disk: true, paced: true, ..Caps::NONE },
    options: &PACED_OPTIONS,
    figures: &FIGURES,
    shortcuts: &[CC_SHORTCUT, CFLAGS_SHORTCUT],
};

impl Engine for Compute {
    fn info(&self) -> &'static EngineInfo {
        &INFO
    }
    fn drop_unused(&self, params: &mut racehorse_core::Params) {
        drop_unused(params);
    }
    fn validate(&self, ctx: &CellContext) -> Result<(), EngineError> {
        run::Setup::of(ctx).map(|_| ())
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        Ok(Box::new(run::Cell::prepare(run::Setup::of(ctx)?, &ctx.work_dir)?))
    }
}

#[cfg(test)]
mod tests;
