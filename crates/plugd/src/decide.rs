//! The decisions of one interval, as pure functions: HOTPLUG is evaluated first and wins; a
//! CPU is added only while onumcpus + 1 <= CPU_MAX and removed only while onumcpus > CPU_MIN
//! (both on the sampled count); at most one CPU per interval. The memory side moves the
//! balloon (pages given away) by CMM_DEC/CMM_INC and clamps it to [CMM_MIN, CMM_MAX].

use racehorse_rules::{EvalError, Expr, Values};

/// What the CPU rules ask for this interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuStep {
    Plug,
    Unplug,
    Hold,
}

/// CPU_MIN and CPU_MAX, with CPU_MAX = 0 already resolved to the present count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuLimits {
    pub min: u32,
    pub max: u32,
}

/// One CPU step. An evaluation error (a value missing, a non-finite result) skips the step.
pub fn cpu_step(
    hotplug: &Expr,
    hotunplug: &Expr,
    v: &dyn Values,
    onumcpus: u32,
    lim: CpuLimits,
) -> Result<CpuStep, EvalError> {
    if hotplug.eval_bool(v)? {
        return Ok(if onumcpus < lim.max { CpuStep::Plug } else { CpuStep::Hold });
    }
    if hotunplug.eval_bool(v)? && onumcpus > lim.min {
        return Ok(CpuStep::Unplug);
    }
    Ok(CpuStep::Hold)
}

/// The memory rules and limits, in 4 KiB pages.
pub struct MemRules<'a> {
    pub memplug: &'a Expr,
    pub memunplug: &'a Expr,
    pub inc: &'a Expr,
    pub dec: &'a Expr,
    pub min: u64,
    pub max: u64,
}

/// The balloon size (pages taken from Linux) after this interval: MEMPLUG gives CMM_DEC
/// pages back, else MEMUNPLUG takes CMM_INC more (a negative step counts as 0, expressions
/// are truncated to integers); the result is clamped to [min, max] even when no rule fired.
pub fn balloon_target(r: &MemRules<'_>, v: &dyn Values, pages: u64) -> Result<u64, EvalError> {
    let step = |e: &Expr| -> Result<u64, EvalError> { Ok(e.eval_num(v)?.max(0.0).trunc() as u64) };
    let next = if r.memplug.eval_bool(v)? {
        pages.saturating_sub(step(r.dec)?)
    } else if r.memunplug.eval_bool(v)? {
        pages.saturating_add(step(r.inc)?)
    } else {
        pages
    };
    Ok(next.clamp(r.min, r.max.max(r.min)))
}

/// One step of the memory-block backend: MEMPLUG onlines one block (of those taken),
/// MEMUNPLUG offlines one, each only while the pages taken stay within [min, max].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockStep {
    Online,
    Offline,
    Hold,
}

pub fn block_step(r: &MemRules<'_>, v: &dyn Values, taken: u64, block: u64) -> Result<BlockStep, EvalError> {
    if taken > r.max.max(r.min) && taken >= block {
        return Ok(BlockStep::Online);
    }
    if r.memplug.eval_bool(v)? {
        return Ok(if taken >= block && taken - block >= r.min {
            BlockStep::Online
        } else {
            BlockStep::Hold
        });
    }
    if r.memunplug.eval_bool(v)? && taken + block <= r.max {
        return Ok(BlockStep::Offline);
    }
    Ok(BlockStep::Hold)
}

#[cfg(test)]
mod tests {
    use super::*;
    use racehorse_rules::{parse_expr, Name};

    struct V(f64);
    impl Values for V {
        fn value(&self, n: &Name, _: usize) -> Option<f64> {
            (n == &Name::Scalar("loadavg".into())).then_some(self.0)
        }
    }

    fn e(t: &str) -> Expr {
        parse_expr(t, &[]).unwrap()
    }

    #[test]
    fn hotplug_wins_and_limits_use_the_sampled_count() {
        let lim = CpuLimits { min: 1, max: 4 };
        let (always, never) = (e("1"), e("0"));
        assert_eq!(cpu_step(&always, &always, &V(0.0), 2, lim), Ok(CpuStep::Plug), "both true: plug");
        assert_eq!(
            cpu_step(&always, &always, &V(0.0), 4, lim),
            Ok(CpuStep::Hold),
            "at max: hold, not unplug"
        );
        assert_eq!(cpu_step(&never, &always, &V(0.0), 2, lim), Ok(CpuStep::Unplug));
        assert_eq!(cpu_step(&never, &always, &V(0.0), 1, lim), Ok(CpuStep::Hold), "at min");
        assert_eq!(cpu_step(&never, &never, &V(0.0), 2, lim), Ok(CpuStep::Hold));
        let by_load = e("loadavg > 1.5");
        assert_eq!(cpu_step(&by_load, &never, &V(2.0), 2, lim), Ok(CpuStep::Plug));
        assert!(cpu_step(&e("loadavg / 0 > 1"), &never, &V(2.0), 2, lim).is_err(), "skipped, not fatal");
    }

    #[test]
    fn the_balloon_moves_and_is_clamped() {
        let (t, f, inc, dec) = (e("1"), e("0"), e("100.9"), e("30"));
        let rules = |p, u| MemRules { memplug: p, memunplug: u, inc: &inc, dec: &dec, min: 10, max: 250 };
        assert_eq!(balloon_target(&rules(&f, &t), &V(0.0), 100), Ok(200), "truncated 100.9");
        assert_eq!(balloon_target(&rules(&f, &t), &V(0.0), 200), Ok(250), "clamped to max");
        assert_eq!(balloon_target(&rules(&t, &t), &V(0.0), 100), Ok(70), "MEMPLUG wins");
        assert_eq!(balloon_target(&rules(&t, &f), &V(0.0), 20), Ok(10), "clamped to min");
        assert_eq!(balloon_target(&rules(&f, &f), &V(0.0), 5), Ok(10), "clamped without a rule");
        let neg = e("0 - 5");
        let r = MemRules { memplug: &f, memunplug: &t, inc: &neg, dec: &dec, min: 0, max: 99 };
        assert_eq!(balloon_target(&r, &V(0.0), 7), Ok(7), "a negative step is 0");
    }

    #[test]
    fn blocks_move_one_at_a_time_within_the_limits() {
        let (t, f, n) = (e("1"), e("0"), e("0"));
        let r = |p, u| MemRules { memplug: p, memunplug: u, inc: &n, dec: &n, min: 0, max: 100 };
        assert_eq!(block_step(&r(&f, &t), &V(0.0), 0, 32), Ok(BlockStep::Offline));
        assert_eq!(block_step(&r(&f, &t), &V(0.0), 96, 32), Ok(BlockStep::Hold), "128 > max");
        assert_eq!(block_step(&r(&t, &t), &V(0.0), 64, 32), Ok(BlockStep::Online), "MEMPLUG wins");
        assert_eq!(block_step(&r(&t, &f), &V(0.0), 0, 32), Ok(BlockStep::Hold), "nothing taken");
        assert_eq!(block_step(&r(&f, &f), &V(0.0), 128, 32), Ok(BlockStep::Online), "above max");
    }
}
