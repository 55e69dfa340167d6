//! One compute cell: the checked settings, what prepare builds (telco's input, the compiled C
//! kernels and the Rust checksums they must reproduce), and the run: each case in its own
//! process on one pinned CPU, timed by itself, its self-check failing the cell loudly.

use super::child::{self, Times};
use super::{c_build, cases_of, geomean, has_c_kernel, telco, Arith, Case, Kernel, Suite};
use crate::support::forked;
use crate::support::pace::PaceSpec;
use crate::{CellContext, Control, EngineError, Recorder, WorkerStats, Workload};
use racehorse_core::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A cell's settings, checked.
#[derive(Debug, Clone)]
pub(crate) struct Setup {
    pub cases: Vec<&'static str>,
    pub standard: bool,
    /// Repetitions instead of the size's (0: the size's).
    pub reps: u64,
    /// The compiler, when at least one of the cases runs as a C kernel.
    pub cc: Option<PathBuf>,
    pub cflags: Vec<String>,
    /// telco's arithmetic.
    pub arith: Arith,
    /// Time cases by their process's CPU time (else elapsed time).
    pub cpu_clock: bool,
    /// A paced cell (`rate`, `qos`): a duty cycle of one case's kernel (see `super::paced`).
    pub pace: PaceSpec,
}

fn usage(msg: String) -> EngineError {
    EngineError::Usage(msg)
}

impl Setup {
    pub fn of(ctx: &CellContext) -> Result<Setup, EngineError> {
        let choice = ctx.get_str("case")?;
        let cases: Vec<&'static str> = cases_of(choice).iter().map(|c| c.name).collect();
        if cases.is_empty() {
            return Err(usage(format!(
                "compute: no case '{choice}'; choose one of {}",
                super::CASE_CHOICES.join(", ")
            )));
        }
        let cc = match ctx.spec.params.get("cc") {
            Some(Value::Str(s)) if !s.trim().is_empty() => {
                Some(c_build::find_cc(s.trim()).ok_or_else(|| {
                    usage(format!(
                        "compute: the C compiler '{}' was not found (not an executable file, nor on PATH); install \
                         one (e.g. apt-get install gcc) and give its name or path, or leave out --cc to run the \
                         Rust kernels",
                        s.trim()
                    ))
                })?)
            }
            _ => None,
        };
        let cflags: Vec<String> = match ctx.spec.params.get("cflags") {
            Some(Value::Str(s)) => s.split_whitespace().map(str::to_string).collect(),
            _ => Vec::new(),
        };
        let arith = match ctx.spec.params.get("arith") {
            Some(Value::Str(s)) => Arith::of(s),
            _ => Arith::RustDecimal,
        };
        let cc = cc.filter(|_| cases.iter().any(|n| has_c_kernel(case(n), arith)));
        check_arith(&cases, arith, cc.as_deref(), &cflags)?;
        let pace = PaceSpec::of(ctx)?;
        if pace.active() && (cases.len() != 1 || cc.is_some()) {
            return Err(usage(format!(
                "compute: a paced cell (rate, qos) calls one case's Rust kernel at the pace in this process; \
                 choose one case (e.g. case=hash, not '{choice}') and leave out cc"
            )));
        }
        Ok(Setup {
            cases,
            standard: ctx.get_str("size")? == "standard",
            reps: ctx.get_u64("reps")?,
            cc,
            cflags,
            arith,
            cpu_clock: ctx.get_str("clock")? == "cpu",
            pace,
        })
    }

    /// True when case `c` runs as a C kernel in this cell.
    fn in_c(&self, c: &Case) -> bool {
        self.cc.is_some() && has_c_kernel(c, self.arith)
    }

    /// Repetitions of case `c`'s kernel per run of the case (per call in a paced cell: 1 by
    /// default).
    pub(super) fn reps_of(&self, c: &Case) -> u64 {
        if self.pace.active() {
            return self.reps.max(1);
        }
        match (self.reps, self.standard) {
            (0, true) => c.standard_reps,
            (0, false) => c.quick_reps,
            (n, _) => n,
        }
    }
}

/// Refuses a C form of telco without a compiler, or `c-decimal64` with a compiler that lacks
/// `_Decimal64` (a usage error: before the first cell).
fn check_arith(
    cases: &[&str],
    arith: Arith,
    cc: Option<&Path>,
    cflags: &[String],
) -> Result<(), EngineError> {
    let Some(form) = arith.c_case().filter(|_| cases.contains(&"telco")) else { return Ok(()) };
    let name = arith.name();
    let Some(cc) = cc else {
        return Err(usage(format!(
            "compute: arith={name} runs telco as a C program ({form}) and needs a compiler: add --cc gcc \
             (or -o cc=PATH), or choose arith=rust-decimal"
        )));
    };
    if arith == Arith::CDecimal64 {
        if let Some(why) = c_build::decimal64_missing(cc, cflags) {
            return Err(usage(format!(
                "compute: the C compiler {} {} cannot build _Decimal64 arithmetic ({why}); arith=c-decimal64 \
                 needs one that can (gcc on x86-64, with libgcc's BID decimal routines): give another --cc or \
                 --cflags, or choose arith=c-double or rust-decimal",
                cc.display(),
                cflags.join(" ")
            )));
        }
    }
    Ok(())
}

/// The process a kernel runs in, as errors name it.
const WHO: &str = "the kernel's process";

pub(super) fn case(name: &str) -> &'static Case {
    super::CASES.iter().find(|c| c.name == name).unwrap_or(&super::CASES[0])
}

/// Checksums of the Rust integer kernels by (case, repetitions), computed once per process:
/// the values every C build must reproduce.
fn rust_checksum(c: &Case, reps: u64) -> Result<u64, String> {
    static DONE: Mutex<Option<HashMap<(&'static str, u64), u64>>> = Mutex::new(None);
    let Kernel::Int(f) = c.kernel else { return Err(format!("{} has no checksum", c.name)) };
    if let Some(v) =
        DONE.lock().map_err(|e| e.to_string())?.get_or_insert_with(HashMap::new).get(&(c.name, reps))
    {
        return Ok(*v);
    }
    let v = f(reps)?;
    DONE.lock().map_err(|e| e.to_string())?.get_or_insert_with(HashMap::new).insert((c.name, reps), v);
    Ok(v)
}

pub(crate) struct Cell {
    setup: Setup,
    telco: Option<telco::Prepared>,
    /// The compiled C kernels and the checksum each integer case must print.
    c_exe: Option<(PathBuf, HashMap<&'static str, u64>)>,
}

impl Cell {
    pub fn prepare(setup: Setup, dir: &Path) -> Result<Cell, EngineError> {
        let telco = if setup.cases.contains(&"telco") {
            Some(telco::prepare(dir).map_err(EngineError::Failed)?)
        } else {
            None
        };
        let c_exe = match &setup.cc {
            Some(cc) => {
                let telco_d64 = setup.arith == Arith::CDecimal64 && telco.is_some();
                let defines: &[&str] = if telco_d64 { &[c_build::DECIMAL64_DEFINE] } else { &[] };
                let exe = c_build::compile(cc, &setup.cflags, defines, dir)?;
                let mut want = HashMap::new();
                for c in setup.cases.iter().map(|n| case(n)).filter(|c| c.suite == Suite::Int) {
                    want.insert(c.name, rust_checksum(c, setup.reps_of(c)).map_err(EngineError::Failed)?);
                }
                if let (Some(form), true) = (setup.arith.c_case(), telco.is_some()) {
                    check_c_testb(&exe, form, dir).map_err(EngineError::Failed)?;
                }
                Some((exe, want))
            }
            None => None,
        };
        Ok(Cell { setup, telco, c_exe })
    }

    /// Runs one case: its times, and whether the C version ran.
    fn run_case(&self, c: &Case) -> Result<(Times, bool), String> {
        let reps = self.setup.reps_of(c);
        if let (Some((exe, want)), true) = (&self.c_exe, self.setup.in_c(c)) {
            let times = match (c.kernel, self.setup.arith.c_case(), &self.telco) {
                (Kernel::Telco, Some(form), Some(p)) => run_c_telco(exe, form, reps, p)?,
                (Kernel::Telco, ..) => return Err("telco was not prepared".into()),
                (Kernel::Int(_), ..) => {
                    let (sum, times) = c_build::run_case(exe, c.name, reps, &[])?;
                    let expected = want.get(c.name).copied().unwrap_or_default();
                    super::common::check_eq(
                        c.name,
                        "checksum of the C kernel vs the Rust kernel",
                        sum,
                        expected,
                    )?;
                    times
                }
                // The floating-point C kernels check their own results (exit 1 otherwise).
                (Kernel::Fp(_), ..) => c_build::run_case(exe, c.name, reps, &[])?.1,
            };
            return Ok((times, true));
        }
        let times = if forked::fresh_process_enabled() {
            let job = child::Job { case: c.name.to_string(), reps, telco: self.telco.clone() };
            forked::in_fresh_process(WHO, child::FRESH_KIND, &job)?
        } else {
            let (kernel, telco) = (c.kernel, self.telco.clone());
            forked::in_child(WHO, move || child::run_kernel(kernel, reps, telco.as_ref()))?
        };
        Ok((times, false))
    }
}

/// Runs telco's C form `form` on the prepared input: every pass's sums must be the integer
/// bill's and the last output file its digest.
fn run_c_telco(exe: &Path, form: &str, reps: u64, p: &telco::Prepared) -> Result<Times, String> {
    let (sum, times) = c_build::run_case(exe, form, reps, &[&p.input, &p.output])?;
    let want = telco::c_checksum(p.want_cents, reps);
    super::common::check_eq("telco", &format!("{form}: folded sums (cents) vs the integer bill"), sum, want)?;
    if reps > 0 {
        telco::check_output(p)?;
    }
    Ok(times)
}

/// Runs telco's C form on the catalog's test file (written by [`telco::prepare`]): its
/// control totals exactly.
fn check_c_testb(exe: &Path, form: &str, dir: &Path) -> Result<(), String> {
    let out = dir.join("telco.testb.c.out");
    let (sum, _) = c_build::run_case(exe, form, 1, &[&telco::testb_path(dir), &out])?;
    let want = telco::c_checksum(telco::TESTB_TOTALS_CENTS, 1);
    super::common::check_eq("telco", &format!("{form}: testb control totals (folded cents)"), sum, want)
}

/// A case's score: its reference time for the size over its time (None with `reps` set).
fn score(s: &Setup, c: &Case, secs: f64) -> Option<f64> {
    (s.reps == 0 && secs > 0.0).then(|| c.reference_s[usize::from(s.standard)] / secs)
}

impl Workload for Cell {
    fn run(&mut self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        if self.setup.pace.active() {
            return super::paced::run(&self.setup, self.telco.as_ref(), ctl, rec);
        }
        let _pin = forked::Pinned::to_last_cpu();
        let mut times = Vec::new();
        ctl.begin_measure();
        for name in &self.setup.cases {
            let c = case(name);
            match self.run_case(c) {
                Ok((t, in_c)) => times.push((c, t, in_c)),
                Err(e) => {
                    ctl.end_measure();
                    ctl.stop();
                    return Err(EngineError::Failed(format!("compute {name}: {e}")));
                }
            }
        }
        ctl.end_measure();
        record(&self.setup, &times, ctl, rec);
        Ok(())
    }
}

/// Units so that throughput is runs of the cell per second of kernel time (by the cell's
/// clock), and the extras: time and score per case (suffixed by the case in a suite cell) and
/// the suites' geomeans.
fn record(s: &Setup, measured: &[(&'static Case, Times, bool)], ctl: &Control, rec: &Recorder) {
    let secs_of = |t: &Times| if s.cpu_clock { t.cpu_s } else { t.wall_s };
    let times: Vec<(&'static Case, f64, bool)> =
        measured.iter().map(|(c, t, in_c)| (*c, secs_of(t), *in_c)).collect();
    let total_s: f64 = times.iter().map(|t| t.1).sum();
    let window_s = ctl.window().map(|w| w.as_secs_f64()).unwrap_or(total_s);
    rec.submit(WorkerStats { units: window_s / total_s.max(1e-9), ops: 1, ..Default::default() });
    let single = times.len() == 1;
    for (c, secs, in_c) in &times {
        let suffix = if single { String::new() } else { format!("_{}", c.name) };
        rec.set_extra(&format!("time_s{suffix}"), *secs);
        if let Some(sc) = score(s, c, *secs) {
            rec.set_extra(&format!("score{suffix}"), sc);
        }
        rec.set_extra(&format!("c_kernel{suffix}"), f64::from(u8::from(*in_c)));
    }
    if let (Some(cc), true) = (&s.cc, times.iter().any(|t| t.2)) {
        rec.set_setting("cc", cc.display().to_string());
        rec.set_setting("cc version", c_build::version(cc));
    }
    if let Some((c, t, _)) = measured.iter().find(|m| matches!(m.0.kernel, Kernel::Telco)) {
        let passes = s.reps_of(c).max(1) as f64;
        rec.set_extra("batch_s", secs_of(t) / passes);
        rec.set_extra("cpu_ns_per_call", t.cpu_s * 1e9 / (passes * telco::CALLS as f64));
    }
    if let [(_, t, _)] = measured {
        rec.set_extra("wall_s", t.wall_s);
        rec.set_extra("cpu_s", t.cpu_s);
    }
    if !single {
        for (key, suite) in [
            ("score_geomean_int", Some(Suite::Int)),
            ("score_geomean_fp", Some(Suite::Fp)),
            ("score_geomean", None),
        ] {
            let scores: Vec<f64> = times
                .iter()
                .filter(|t| suite.is_none_or(|su| t.0.suite == su))
                .filter_map(|t| score(s, t.0, t.1))
                .collect();
            if let Some(g) = geomean(&scores) {
                rec.set_extra(key, g);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_c_form_with_a_wrong_bill_fails_its_self_check() {
        let Some(gcc) = c_build::find_cc("gcc") else {
            eprintln!("SKIPPED: gcc is not installed, so telco's C forms cannot be built here (CI has gcc)");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let p = telco::prepare(dir.path()).unwrap();
        let exe = c_build::compile(&gcc, &["-O2".into()], &[c_build::DECIMAL64_DEFINE], dir.path()).unwrap();
        for form in ["telco-double", "telco-decimal64"] {
            check_c_testb(&exe, form, dir.path()).unwrap();
            run_c_telco(&exe, form, 1, &p).unwrap();
            let mut sums = p.clone();
            sums.want_cents[1] += 1;
            let e = run_c_telco(&exe, form, 1, &sums).unwrap_err();
            assert!(e.contains("SELF-CHECK FAILED: telco") && e.contains(form), "{e}");
            let mut digest = p.clone();
            digest.want_digest ^= 1;
            let e = run_c_telco(&exe, form, 1, &digest).unwrap_err();
            assert!(e.contains("digest of the output file"), "{e}");
        }
    }
}
