//! What every compute kernel shares: the self-check helpers that fail a kernel loudly, and the
//! fault hook tests use to inject a wrong answer. The kernels' generator is the shared
//! SplitMix64 (`crate::support::rng`), the same as in the C kernels.

/// The environment variable naming a case whose self-checks are fed a wrong answer (a
/// test hook: the checks must then fail the cell).
pub const FAULT_ENV: &str = "RACEHORSE_COMPUTE_INJECT_FAULT";

/// True when the fault hook names `case` (read once per process).
pub fn fault_injected(case: &str) -> bool {
    static HOOK: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    HOOK.get_or_init(|| std::env::var(FAULT_ENV).ok()).as_deref() == Some(case)
}

/// Fails unless `got == want` (with the fault hook, `got` is off by one).
pub fn check_eq(case: &str, what: &str, got: u64, want: u64) -> Result<(), String> {
    let got = if fault_injected(case) { got.wrapping_add(1) } else { got };
    if got == want {
        Ok(())
    } else {
        Err(format!("SELF-CHECK FAILED: {case}: {what} is {got}, expected {want}"))
    }
}

/// Fails unless `cond` holds (with the fault hook, it never does).
pub fn check(case: &str, what: &str, cond: bool) -> Result<(), String> {
    if cond && !fault_injected(case) {
        Ok(())
    } else {
        Err(format!("SELF-CHECK FAILED: {case}: {what}"))
    }
}

/// Fails unless |got − want| ≤ tol (with the fault hook, `got` is off by 1 + 10·tol).
pub fn check_close(case: &str, what: &str, got: f64, want: f64, tol: f64) -> Result<(), String> {
    let got = if fault_injected(case) { got + 1.0 + 10.0 * tol } else { got };
    if (got - want).abs() <= tol {
        Ok(())
    } else {
        Err(format!("SELF-CHECK FAILED: {case}: {what} is {got:e}, expected {want:e} within {tol:e}"))
    }
}

/// Folds one repetition's checksum into the running one (order matters, as in C).
pub fn fold(acc: u64, x: u64) -> u64 {
    acc.rotate_left(5) ^ x.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_pass_and_fail() {
        assert!(check_eq("x", "n", 3, 3).is_ok());
        assert!(check_eq("x", "n", 3, 4).unwrap_err().contains("SELF-CHECK FAILED"));
        assert!(check_close("x", "e", 1.0, 1.0 + 1e-12, 1e-9).is_ok());
        assert!(check_close("x", "e", 1.0, 1.1, 1e-9).is_err());
        assert!(check("x", "sorted", false).is_err());
    }
}
