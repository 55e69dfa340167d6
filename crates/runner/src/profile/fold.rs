//! Folding call stacks: `perf script -F comm,pid,tid,ip,sym,dso` turned into FlameGraph's
//! folded form, "comm;outermost;…;leaf" with a sample count, and cut to a bounded number.
//!
//! perf prints one sample per paragraph: a header line `comm pid/tid` and one line per frame
//! (tab, address, symbol, `(dso)`), leaf first; without call chains the single frame follows
//! the header on its line. Frames are named by their symbol; an unresolved one by its image
//! in brackets (`[libc.so.6]`), or `[unknown]` when perf knows no image either; kernel frames
//! get the suffix `_[k]` (as FlameGraph's stackcollapse-perf.pl writes them); a `;` inside a
//! name becomes `:`.

use super::error::PerfError;
use super::output::{drain, spawn_piped, tail, wait_until};
use super::report::is_address;
use racehorse_core::profile::FoldedStack;
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::time::Duration;

/// Stacks with fewer samples than this share of all (1/2000 = 0.05%) are not stored.
pub const MIN_STACK_SHARE: f64 = 1.0 / 2000.0;
/// At most this many stacks are stored per cell (the largest).
pub const MAX_STACKS: usize = 1000;
/// At most this many bytes of stack text are stored per cell (1 MiB): deep stacks of long
/// C++ or Rust names run to kilobytes each.
pub const MAX_STACK_BYTES: usize = 1 << 20;
/// The suffix of kernel frames.
pub const KERNEL_SUFFIX: &str = "_[k]";
/// The name of a frame perf could not place in any image.
pub const UNKNOWN_FRAME: &str = "[unknown]";
/// How long `perf script` may run before it is killed.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(600);

/// Every stack of a recording with its samples.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Folded {
    /// All samples seen.
    pub samples: u64,
    pub stacks: HashMap<String, u64>,
}

/// Folds `perf script` output line by line.
#[derive(Debug, Default)]
pub struct Folder {
    folded: Folded,
    /// The sample being read: its process name and its frames, leaf first.
    current: Option<(String, Vec<String>)>,
}

impl Folder {
    /// Takes one line of `perf script` output (without its newline).
    pub fn line(&mut self, line: &str) {
        if line.trim().is_empty() {
            self.flush();
        } else if line.starts_with('\t') {
            let frame = frame_name(line.trim());
            match &mut self.current {
                Some((_, frames)) => frames.push(frame),
                // A frame without a header: count it under an unknown process.
                None => self.current = Some((UNKNOWN_FRAME.to_string(), vec![frame])),
            }
        } else {
            self.flush();
            let (comm, rest) = split_header(line);
            let frames = if rest.is_empty() { vec![] } else { vec![frame_name(rest)] };
            self.current = Some((comm, frames));
        }
    }

    /// The stacks of every sample read.
    pub fn finish(mut self) -> Folded {
        self.flush();
        self.folded
    }

    fn flush(&mut self) {
        let Some((comm, frames)) = self.current.take() else { return };
        let mut stack = comm;
        for f in frames.iter().rev() {
            stack.push(';');
            stack.push_str(f);
        }
        let n = self.folded.stacks.entry(stack).or_default();
        *n = n.saturating_add(1);
        self.folded.samples = self.folded.samples.saturating_add(1);
    }
}

/// Folds a whole `perf script` text.
pub fn fold_text(text: &str) -> Folded {
    let mut f = Folder::default();
    for line in text.lines() {
        f.line(line);
    }
    f.finish()
}

/// The process name and whatever follows the `pid/tid` field (a frame, without call chains).
fn split_header(line: &str) -> (String, &str) {
    let mut start = None;
    let mut at = 0;
    for token in line.split(' ') {
        if is_pid_tid(token) {
            start = Some(at);
            break;
        }
        at += token.len() + 1;
    }
    let (comm, rest) = match start {
        Some(at) => {
            let tid_end = at + line[at..].find(' ').unwrap_or(line.len() - at);
            (line[..at].trim(), line[tid_end..].trim())
        }
        None => (line.trim(), ""),
    };
    let comm = if comm.is_empty() { UNKNOWN_FRAME.to_string() } else { clean(comm) };
    (comm, rest)
}

fn is_pid_tid(token: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    token.split_once('/').is_some_and(|(p, t)| digits(p) && digits(t))
}

/// The name of a frame `ADDRESS SYMBOL (DSO)`.
fn frame_name(text: &str) -> String {
    let (_, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let (symbol, dso) = split_dso(rest.trim());
    let unknown = symbol.is_empty() || symbol == UNKNOWN_FRAME || is_address(symbol);
    let name = match dso {
        _ if !unknown => clean(symbol),
        Some(d) if !d.is_empty() && d != UNKNOWN_FRAME => {
            let base = d.rsplit('/').next().unwrap_or(d);
            if base.starts_with('[') {
                clean(base)
            } else {
                format!("[{}]", clean(base))
            }
        }
        _ => UNKNOWN_FRAME.to_string(),
    };
    if dso.is_some_and(is_kernel) {
        name + KERNEL_SUFFIX
    } else {
        name
    }
}

/// Splits `SYMBOL (DSO)` at the parenthesis that opens the final, balanced `(…)`.
fn split_dso(text: &str) -> (&str, Option<&str>) {
    if !text.ends_with(')') {
        return (text, None);
    }
    let mut depth = 0usize;
    for (i, c) in text.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return (text[..i].trim_end(), Some(&text[i + 1..text.len() - 1]));
                }
            }
            _ => {}
        }
    }
    (text, None)
}

/// Whether a dso is the kernel or one of its modules (`[kernel.kallsyms]`, `[xfs]`), not one
/// of the bracketed user-space mappings (`[vdso]`, `[heap]` …).
fn is_kernel(dso: &str) -> bool {
    const USER: [&str; 9] = [
        "[vdso]",
        "[vsyscall]",
        "[vectors]",
        "[unknown]",
        "[heap]",
        "[stack]",
        "[uprobes]",
        "[sigpage]",
        "[anon]",
    ];
    if dso.starts_with("[kernel.") || dso.starts_with("[guest.kernel.") {
        return true;
    }
    let Some(inner) = dso.strip_prefix('[').and_then(|d| d.strip_suffix(']')) else { return false };
    !USER.contains(&dso)
        && !inner.is_empty()
        && inner.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A name as it may appear in a folded stack: no `;` (the separator), no control characters.
fn clean(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c == ';' {
                ':'
            } else if c.is_control() {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// The stacks to store: those with at least [`MIN_STACK_SHARE`] of all samples, most samples
/// first (ties by name), at most [`MAX_STACKS`] of them and [`MAX_STACK_BYTES`] of text; and
/// the samples of all the others.
pub fn bounded(folded: &Folded) -> (Vec<FoldedStack>, u64) {
    let total = folded.samples.max(folded.stacks.values().fold(0u64, |a, &n| a.saturating_add(n)));
    let mut kept: Vec<FoldedStack> = folded
        .stacks
        .iter()
        .filter(|(_, &n)| n > 0 && n as f64 >= total as f64 * MIN_STACK_SHARE)
        .map(|(s, &n)| FoldedStack { stack: s.clone(), samples: n })
        .collect();
    kept.sort_by(|a, b| b.samples.cmp(&a.samples).then_with(|| a.stack.cmp(&b.stack)));
    kept.truncate(MAX_STACKS);
    let mut bytes = 0usize;
    let fits = kept.iter().position(|s| {
        bytes += s.stack.len();
        bytes > MAX_STACK_BYTES
    });
    kept.truncate(fits.unwrap_or(kept.len()));
    let stored = kept.iter().fold(0u64, |a, s| a.saturating_add(s.samples));
    (kept, total.saturating_sub(stored))
}

/// The arguments of `perf script` that print what [`Folder`] reads.
pub fn script_args(data: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["script".into(), "-i".into(), data.into()];
    // --no-inline: resolving inlined frames runs addr2line per address, far too slow.
    args.extend(["-F", "comm,pid,tid,ip,sym,dso", "--no-inline"].map(OsString::from));
    args
}

/// Runs `perf script` on `data` and folds its output as it streams.
pub fn fold(perf: &Path, data: &Path) -> Result<Folded, PerfError> {
    let args = script_args(data);
    let mut child = spawn_piped(perf, &args)?;
    let err = drain(child.stderr.take());
    let stdout = child.stdout.take();
    let folding = std::thread::spawn(move || {
        let mut folder = Folder::default();
        if let Some(out) = stdout {
            let mut reader = BufReader::new(out);
            let mut buf = Vec::new();
            while reader.read_until(b'\n', &mut buf).is_ok_and(|n| n > 0) {
                let line = String::from_utf8_lossy(&buf);
                folder.line(line.trim_end_matches(['\n', '\r']));
                buf.clear();
            }
        }
        folder.finish()
    });
    let status = wait_until(&mut child, SCRIPT_TIMEOUT, &args)?;
    let folded =
        folding.join().map_err(|_| PerfError::Output("folding perf script's output failed".to_string()))?;
    let err = err.join().unwrap_or_default();
    if !status.success() {
        let tool = format!("perf script -i {}", data.display());
        return Err(PerfError::perf(tool, format!("failed ({status})"), format!(": {}", tail(&err, 8))));
    }
    Ok(folded)
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod tests;
