//! racehorse-rules: cpuplugd's configuration file and expression language (no I/O).
//!
//! Pure functions over text: [`parse_config`] reads a whole `cpuplugd.conf` into a validated
//! [`Config`]; [`parse_expr`] reads one expression. Expressions are type-checked at load, have
//! user variables inlined, and are evaluated against any [`Values`] provider.
//!
//! # Config syntax
//! - A line whose first byte is `#` is a comment. In every other line all whitespace is
//!   deleted; lines without `=` are ignored (with a warning when not blank). At most
//!   [`MAX_LINE`] characters per line.
//! - `NAME="value"`: the value runs from the `"` right after `=` to the last `"` on the line,
//!   so `KEY="1" # note` works. Missing quotes are an error.
//! - Keys are case-insensitive and matched as whole names: UPDATE, CPU_MIN, CPU_MAX (0 = all
//!   present CPUs), HOTPLUG, HOTUNPLUG, CMM_MIN, CMM_MAX, CMM_INC, CMM_DEC, MEMPLUG, MEMUNPLUG.
//!   A repeated key: the last one wins (warning).
//! - Any other name defines a user variable: case-sensitive, `[A-Za-z0-9_]`, not starting with
//!   a digit, at most [`MAX_VAR_NAME`] characters, not a predefined word, defined once.
//! - UPDATE, CPU_MIN/MAX and CMM_MIN/MAX are digits only (`""` reads as 0). UPDATE > 0 is
//!   required; CPU_MIN > 0; CPU_MAX >= CPU_MIN unless CPU_MAX = 0. CPU control (CPU_MIN,
//!   CPU_MAX, HOTPLUG, HOTUNPLUG) or memory control (CMM_MIN, CMM_MAX, CMM_INC, MEMPLUG,
//!   MEMUNPLUG, CMM_MAX >= CMM_MIN) must be complete. A rule `""` counts as not set.
//! - Every error is a [`ConfigError`] with a 1-based line and a column in the original line.
//!
//! # Expression language
//! Numbers (`1.5`, `1e3`; must start with a digit), names, `( )`, unary `!` `-`, and binary
//! operators, left-associative, lowest to highest: `|`, `&`, `< >`, `+ -`, `* /`.
//! `< >` compare numbers; `& |` take booleans or numbers (true when != 0) and short-circuit;
//! `!` gives a boolean; `+ - * /` and unary `-` take numbers only. Names: the [`SCALARS`]
//! (only `time` takes `[N]`), `meminfo.X[N]`, `vmstat.X[N]`, `cpustat.X[N]` (X one of
//! [`CPUSTAT_NAMES`]) with N <= [`MAX_HISTORY`], and user variables.
//!
//! # Where this differs from upstream cpuplugd (s390-tools), and why
//! - **Unary operators bind tightly, as in C.** Upstream parses the operand of `!` and of a
//!   non-literal `-` at the precedence of its context: at the start or after `(` it takes the
//!   whole rest, so `-a+b` is `-(a+b)` and `!a&b` is `!(a&b)`. Here `-a+b` is `(-a)+b` and
//!   `!a&b` is `(!a)&b`: that is what every reader expects, and most of upstream's readings of
//!   `!` would now be type errors (`!a>b` is a boolean compared). Wherever upstream's reading
//!   would differ, [`Config::warnings`] says so; parentheses make both agree.
//! - **Whole-name keys.** Upstream matches keys by prefix (`update_rate` is UPDATE); here it is
//!   a variable, with a warning.
//! - **Type checking at load.** A boolean used as a number (`(a>b)+1`, `a<b<c`) is a load
//!   error with its column; upstream exits when it evaluates it.
//! - **Errors name the key** for bad numbers (upstream always says "update").
//! - **Variables:** forward references are allowed (upstream needs define-before-use; this is
//!   a superset), cycles are reported (`a -> b -> a`) instead of crashing, every variable is
//!   parsed at load even if unused, names may not start with a digit (such a variable could
//!   never be referenced).
//! - **Field names may contain digits** (`vmstat.pgalloc_dma32`, `meminfo.DirectMap2M`);
//!   upstream allows only letters and `_`.
//! - **`[N]` on `cpustat.X` is checked** against [`CPUSTAT_NAMES`]; meminfo/vmstat fields are
//!   checked by the daemon against /proc at load.
//! - **Limits**: [`MAX_DEPTH`] levels of nesting (parentheses in one text, and tree depth after
//!   inlining) and [`MAX_NODES`] nodes after inlining, so stack and memory stay bounded
//!   whatever the input (upstream has a ~4 KiB budget for variable text instead).
//! - **Numbers are decimal** (`strtod` would also take hex, `inf` and `nan`).
//! - **Non-finite results** (division by zero, overflow) give [`EvalError::NotFinite`] and the
//!   daemon skips that step, as upstream does with its FP traps.
//!
//! See `LANGUAGE.md` in this crate for the full reference.

mod config;
mod expr;
mod lexer;
mod names;
mod parser;
mod source;

#[cfg(test)]
mod props;

pub use config::{parse_config, parse_config_over, Config, Rule, MAX_LINE, MAX_VAR_NAME};
pub use expr::{EvalError, Expr, Site, Ty};
pub use names::{
    close_matches, did_you_mean, is_predefined, Name, Values, CPUSTAT_NAMES, FAMILIES, MAX_HISTORY, SCALARS,
};
pub use parser::{MAX_DEPTH, MAX_NODES};

use parser::Env;
use source::Source;

/// A configuration or expression error at a 1-based line and column of the original text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ConfigError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl ConfigError {
    pub(crate) fn at(line: usize, column: usize, message: impl Into<String>) -> ConfigError {
        ConfigError { line, column, message: message.into() }
    }
}

/// Parses one expression with the given user variables (name → text) — for tests, the fuzz
/// target and `plugd check`. Whitespace is deleted as in the config file; errors are on line 1
/// with the column within `text` (an error inside a variable is reported at its use, with the
/// column inside the variable's text in the message).
pub fn parse_expr(text: &str, vars: &[(String, String)]) -> Result<Expr, ConfigError> {
    let top = Source::strip(1, text);
    let mut env = Env::new(vars.iter().map(|(name, text)| (name.clone(), Source::strip(1, text))));
    env.parse_top(&top).map(|p| p.expr).map_err(|e| match e.var {
        None => ConfigError::at(1, top.col(e.pos), e.message),
        Some(var) => {
            let inner = env.source(&var).map_or(1, |s| s.col(e.pos));
            let message = format!("in variable `{var}` (column {inner} of its text): {}", e.message);
            ConfigError::at(1, top.col(e.outer.unwrap_or(0)), message)
        }
    })
}
