//! Workfiles (re-aim's format): lines of `<hits> <task>`, `#` comments, and optional
//! `FILESIZE <size>` / `POOLSIZE <size>` lines; the built-in mixes `fserver`, `new_db` and
//! `compute` carry re-aim 7's hits. A user's job list is each task's share of the hits
//! times the jobs per user, rounded, with at least one job for a task that has hits.

use super::tasks;
use crate::options::parse_size;
use crate::support::rng::SplitMix64;

/// re-aim's workfile.fserver (595 hits).
pub const FSERVER: &str = "# fserver: re-aim 7's file server mix\n\
20 add_int\n20 add_long\n20 add_short\n20 creat_clo\n20 dir_rtns_1\n30 disk_cp\n30 disk_rd\n30 disk_rr\n\
30 disk_rw\n30 disk_src\n30 disk_wrt\n10 div_int\n10 div_long\n10 div_short\n10 jmp_test\n20 link_test\n\
40 mem_rtns_1\n10 mem_rtns_2\n20 misc_rtns_1\n10 mul_int\n10 mul_long\n10 mul_short\n20 ram_copy\n\
10 signal_test\n30 sort_rtns_1\n30 string_rtns\n5 sync_disk_cp\n5 sync_disk_rw\n5 sync_disk_wrt\n\
10 tcp_test\n40 udp_test\n";

/// re-aim's workfile.new_dbase (570 hits).
pub const NEW_DB: &str = "# new_db: re-aim 7's large database mix\n\
20 add_int\n20 add_long\n20 add_short\n40 disk_rd\n40 disk_rr\n10 div_int\n10 div_long\n10 div_short\n\
10 jmp_test\n40 mem_rtns_1\n40 mem_rtns_2\n10 mul_int\n10 mul_long\n10 mul_short\n40 page_test\n\
20 ram_copy\n40 shared_memory\n30 sieve\n30 sort_rtns_1\n10 stream_pipe\n30 string_rtns\n\
10 sync_disk_rw\n10 sync_disk_update\n30 disk_brw\n30 disk_bcp\n";

/// re-aim's workfile.compute (820 hits).
pub const COMPUTE: &str = "# compute: re-aim 7's compute server mix\n\
50 add_double\n30 add_int\n30 add_long\n10 array_rtns\n10 disk_cp\n30 disk_rd\n10 disk_src\n20 disk_wrt\n\
40 div_double\n30 div_int\n50 matrix_rtns\n40 mem_rtns_1\n40 mem_rtns_2\n50 mul_double\n30 mul_int\n\
30 mul_long\n40 new_raph\n40 num_rtns_1\n50 page_test\n40 series_1\n10 shared_memory\n30 sieve\n\
20 stream_pipe\n30 string_rtns\n40 trig_rtns\n20 udp_test\n";

/// The built-in workfiles by name.
pub const BUILTIN: &[(&str, &str)] = &[("fserver", FSERVER), ("new_db", NEW_DB), ("compute", COMPUTE)];

/// Most hits one line may carry (keeps sums far from overflow).
pub const MAX_HITS: u64 = 1_000_000;

/// A parsed workfile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workfile {
    /// (task index into [`tasks::TASKS`], hits), in file order; a task named twice adds up.
    pub entries: Vec<(usize, u64)>,
    /// FILESIZE and POOLSIZE lines, in bytes, when the file sets them.
    pub filesize_bytes: Option<u64>,
    pub poolsize_bytes: Option<u64>,
}

/// A malformed line: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkfileError {
    pub line: usize,
    pub reason: String,
}

impl std::fmt::Display for WorkfileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

impl Workfile {
    pub fn total_hits(&self) -> u64 {
        self.entries.iter().map(|e| e.1).sum()
    }

    /// Parses workfile text; errors name the 1-based line and what is wrong with it.
    pub fn parse(text: &str) -> Result<Workfile, WorkfileError> {
        let mut wf = Workfile { entries: Vec::new(), filesize_bytes: None, poolsize_bytes: None };
        for (i, raw) in text.lines().enumerate() {
            let err = |reason: String| WorkfileError { line: i + 1, reason };
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let mut words = line.split_whitespace();
            let first = words.next().unwrap_or("");
            let second = words.next();
            if words.next().is_some() {
                return Err(err(format!("'{line}' has more than two words; expected '<hits> <task>'")));
            }
            let key = first.trim_end_matches(':').to_ascii_uppercase();
            if key == "FILESIZE" || key == "POOLSIZE" {
                let v = second.ok_or_else(|| err(format!("{key} needs a size, e.g. '{key} 10k'")))?;
                let bytes =
                    parse_size(v).ok_or_else(|| err(format!("'{v}' is not a size (e.g. 10k, 1m)")))?;
                if key == "FILESIZE" {
                    wf.filesize_bytes = Some(bytes);
                } else {
                    wf.poolsize_bytes = Some(bytes);
                }
                continue;
            }
            let hits: u64 = first
                .parse()
                .map_err(|_| err(format!("'{first}' is not a number of hits; expected '<hits> <task>'")))?;
            if hits > MAX_HITS {
                return Err(err(format!("{hits} hits is more than {MAX_HITS}")));
            }
            let name =
                second.ok_or_else(|| err(format!("'{line}' names no task; expected '<hits> <task>'")))?;
            let task = tasks::index_of(name)
                .ok_or_else(|| err(format!("unknown task '{name}'; valid tasks: {}", tasks::names())))?;
            match wf.entries.iter_mut().find(|e| e.0 == task) {
                Some(e) => e.1 += hits,
                None => wf.entries.push((task, hits)),
            }
        }
        if wf.total_hits() == 0 {
            return Err(WorkfileError {
                line: text.lines().count().max(1),
                reason: "the workfile has no task with hits; add lines such as '20 add_int'".into(),
            });
        }
        Ok(wf)
    }

    /// How many times each task runs in one user's job list: hits/Σhits × jobs, rounded
    /// half up, and at least 1 for a task with hits (re-aim's rule). Entries with 0 jobs are
    /// left out.
    pub fn job_counts(&self, jobs: u64) -> Vec<(usize, u64)> {
        let total = self.total_hits().max(1) as f64;
        self.entries
            .iter()
            .filter(|e| e.1 > 0)
            .map(|&(task, hits)| {
                let share = hits as f64 / total * jobs as f64;
                let whole = share.floor();
                let n = if share - whole >= 0.5 { whole + 1.0 } else { whole.max(1.0) };
                (task, n as u64)
            })
            .collect()
    }
}

/// The text of a workfile option: a built-in name or a path.
pub fn load(spec: &str) -> Result<(String, Workfile), String> {
    let (origin, text) = match BUILTIN.iter().find(|b| b.0 == spec) {
        Some((name, text)) => (format!("built-in {name}"), text.to_string()),
        None => {
            let text = std::fs::read_to_string(spec).map_err(|e| {
                let names: Vec<&str> = BUILTIN.iter().map(|b| b.0).collect();
                format!("workfile '{spec}': {e}; give a path or one of {}", names.join(", "))
            })?;
            (spec.to_string(), text)
        }
    };
    let wf = Workfile::parse(&text).map_err(|e| format!("workfile {origin}: {e}"))?;
    Ok((origin, wf))
}

/// Builds one user's job list: the multiset of [`Workfile::job_counts`] in a random order
/// drawn from `seed`.
pub fn job_list(counts: &[(usize, u64)], seed: u64) -> Vec<usize> {
    let mut list: Vec<usize> =
        counts.iter().flat_map(|&(task, n)| std::iter::repeat_n(task, n as usize)).collect();
    let mut rng = SplitMix64::new(seed);
    for i in (1..list.len()).rev() {
        let j = rng.below_mod(i as u64 + 1) as usize;
        list.swap(i, j);
    }
    list
}

#[cfg(test)]
#[path = "workfile_tests.rs"]
mod tests;
