//! A parser of fio's `--output-format=json` report (fio 3.x) into the figures racehorse
//! keeps: bytes and I/Os per direction, fio's own bandwidth, IOPS, runtime, CPU percentages
//! and completion-latency percentiles.
//!
//! Several entries in `jobs[]` (no `group_reporting`) are summed: bytes, I/Os, bandwidth and
//! IOPS add up, the runtime is the longest, CPU percentages are the mean per entry (as fio's
//! own group_reporting does), the clat mean is weighted by sample count and the percentiles
//! are the largest of the entries. Racehorse always asks for `group_reporting`, so one entry.

use serde::Deserialize;
use std::collections::BTreeMap;

/// Completion latency (fio's `clat_ns`) of one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Clat {
    pub mean_ns: f64,
    pub samples: u64,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
}

/// One direction (`read` or `write`) of one job entry.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DirStats {
    pub io_bytes: u64,
    /// fio's bandwidth: 1000 · io_bytes / runtime_ms.
    pub bw_bytes: u64,
    pub iops: f64,
    /// This direction's own runtime.
    pub runtime_ms: u64,
    pub total_ios: u64,
    /// None when the direction did no I/O.
    pub clat: Option<Clat>,
}

/// One entry of `jobs[]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobStats {
    pub name: String,
    pub error: i64,
    /// Summed over the clones under group_reporting.
    pub job_runtime_ms: u64,
    /// Percent of one CPU (mean per clone under group_reporting).
    pub usr_cpu_pct: f64,
    pub sys_cpu_pct: f64,
    pub read: DirStats,
    pub write: DirStats,
}

/// The whole report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FioReport {
    pub version: String,
    pub jobs: Vec<JobStats>,
}

/// Read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
}

#[derive(Deserialize)]
struct RawReport {
    #[serde(rename = "fio version", default)]
    version: String,
    jobs: Vec<RawJob>,
}

#[derive(Deserialize)]
struct RawJob {
    #[serde(default)]
    jobname: String,
    #[serde(default)]
    error: i64,
    #[serde(default)]
    job_runtime: u64,
    #[serde(default)]
    usr_cpu: f64,
    #[serde(default)]
    sys_cpu: f64,
    read: RawDir,
    write: RawDir,
}

#[derive(Deserialize)]
struct RawDir {
    io_bytes: u64,
    #[serde(default)]
    bw_bytes: u64,
    #[serde(default)]
    iops: f64,
    #[serde(default)]
    runtime: u64,
    total_ios: u64,
    #[serde(default)]
    clat_ns: Option<RawLat>,
}

#[derive(Deserialize)]
struct RawLat {
    #[serde(default)]
    mean: f64,
    #[serde(rename = "N", default)]
    n: u64,
    #[serde(default)]
    percentile: BTreeMap<String, u64>,
}

impl From<RawDir> for DirStats {
    fn from(r: RawDir) -> Self {
        let clat = r.clat_ns.filter(|c| c.n > 0).map(|c| Clat {
            mean_ns: c.mean,
            samples: c.n,
            p50_ns: c.percentile.get("50.000000").copied(),
            p99_ns: c.percentile.get("99.000000").copied(),
        });
        DirStats {
            io_bytes: r.io_bytes,
            bw_bytes: r.bw_bytes,
            iops: r.iops,
            runtime_ms: r.runtime,
            total_ios: r.total_ios,
            clat,
        }
    }
}

/// Parses fio's JSON report. Text before the first line that opens the JSON object (notes
/// fio writes into the same file) and anything after the object are ignored.
pub fn parse(text: &str) -> Result<FioReport, String> {
    let start = json_start(text).ok_or_else(|| {
        let head: String = text.trim().chars().take(120).collect();
        format!("fio's output holds no JSON report (it begins with: {head:?})")
    })?;
    let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<RawReport>();
    let raw = match stream.next() {
        Some(Ok(r)) => r,
        Some(Err(e)) => return Err(format!("fio's JSON report is malformed: {e}")),
        None => return Err("fio's JSON report is empty".to_string()),
    };
    if raw.jobs.is_empty() {
        return Err("fio's JSON report lists no jobs".to_string());
    }
    let jobs = raw
        .jobs
        .into_iter()
        .map(|j| JobStats {
            name: j.jobname,
            error: j.error,
            job_runtime_ms: j.job_runtime,
            usr_cpu_pct: j.usr_cpu,
            sys_cpu_pct: j.sys_cpu,
            read: j.read.into(),
            write: j.write.into(),
        })
        .collect();
    Ok(FioReport { version: raw.version, jobs })
}

/// Byte offset of the first line that starts with '{'.
fn json_start(text: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with('{') {
            return Some(offset + (line.len() - line.trim_start().len()));
        }
        offset += line.len();
    }
    None
}

impl FioReport {
    fn dirs(&self, dir: Dir) -> impl Iterator<Item = &DirStats> {
        self.jobs.iter().map(move |j| match dir {
            Dir::Read => &j.read,
            Dir::Write => &j.write,
        })
    }

    pub fn bytes(&self, dir: Dir) -> u64 {
        self.dirs(dir).map(|d| d.io_bytes).sum()
    }

    pub fn ios(&self, dir: Dir) -> u64 {
        self.dirs(dir).map(|d| d.total_ios).sum()
    }

    pub fn total_bytes(&self) -> u64 {
        self.bytes(Dir::Read) + self.bytes(Dir::Write)
    }

    pub fn total_ios(&self) -> u64 {
        self.ios(Dir::Read) + self.ios(Dir::Write)
    }

    /// fio's bandwidth, read + write, in bytes/s.
    pub fn bw_bytes_per_s(&self) -> f64 {
        self.jobs.iter().map(|j| (j.read.bw_bytes + j.write.bw_bytes) as f64).sum()
    }

    pub fn iops(&self) -> f64 {
        self.jobs.iter().map(|j| j.read.iops + j.write.iops).sum()
    }

    /// The longest direction runtime of any entry, in ms.
    pub fn runtime_ms(&self) -> u64 {
        self.jobs.iter().map(|j| j.read.runtime_ms.max(j.write.runtime_ms)).max().unwrap_or(0)
    }

    /// Mean over entries of (usr %, sys %).
    pub fn cpu_pct(&self) -> (f64, f64) {
        let n = self.jobs.len().max(1) as f64;
        let usr: f64 = self.jobs.iter().map(|j| j.usr_cpu_pct).sum();
        let sys: f64 = self.jobs.iter().map(|j| j.sys_cpu_pct).sum();
        (usr / n, sys / n)
    }

    /// The first non-zero fio error code of an entry.
    pub fn error(&self) -> Option<(String, i64)> {
        self.jobs.iter().find(|j| j.error != 0).map(|j| (j.name.clone(), j.error))
    }

    /// The direction with more I/Os (read on a tie).
    pub fn dominant(&self) -> Dir {
        if self.ios(Dir::Write) > self.ios(Dir::Read) {
            Dir::Write
        } else {
            Dir::Read
        }
    }

    /// Completion latency of one direction over all entries, None when it did no I/O.
    pub fn clat(&self, dir: Dir) -> Option<Clat> {
        let all: Vec<Clat> = self.dirs(dir).filter_map(|d| d.clat).collect();
        let samples: u64 = all.iter().map(|c| c.samples).sum();
        if samples == 0 {
            return None;
        }
        let mean_ns = all.iter().map(|c| c.mean_ns * c.samples as f64).sum::<f64>() / samples as f64;
        Some(Clat {
            mean_ns,
            samples,
            p50_ns: all.iter().filter_map(|c| c.p50_ns).max(),
            p99_ns: all.iter().filter_map(|c| c.p99_ns).max(),
        })
    }

    /// The extras racehorse records: fio's bandwidth, IOPS, runtime, CPU and completion
    /// latency of the dominant direction (`fio_clat_*_ns`) and of each direction that did
    /// I/O (`fio_clat_*_ns_read`, `fio_clat_*_ns_write`).
    pub fn extras(&self) -> Vec<(String, f64)> {
        let (usr, sys) = self.cpu_pct();
        let mut out = vec![
            ("fio_bw_bytes_per_s".to_string(), self.bw_bytes_per_s()),
            ("fio_iops".to_string(), self.iops()),
            ("fio_runtime_ms".to_string(), self.runtime_ms() as f64),
            ("fio_usr_cpu_pct".to_string(), usr),
            ("fio_sys_cpu_pct".to_string(), sys),
        ];
        let mut push_clat = |c: Clat, suffix: &str| {
            out.push((format!("fio_clat_mean_ns{suffix}"), c.mean_ns));
            if let Some(p) = c.p50_ns {
                out.push((format!("fio_clat_p50_ns{suffix}"), p as f64));
            }
            if let Some(p) = c.p99_ns {
                out.push((format!("fio_clat_p99_ns{suffix}"), p as f64));
            }
        };
        if let Some(c) = self.clat(self.dominant()) {
            push_clat(c, "");
        }
        for (dir, suffix) in [(Dir::Read, "_read"), (Dir::Write, "_write")] {
            if let Some(c) = self.clat(dir) {
                push_clat(c, suffix);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fixture(name: &str) -> String {
        let path = format!("{}/fixtures/fio/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn extra(r: &FioReport, name: &str) -> Option<f64> {
        r.extras().into_iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    #[test]
    fn randread_psync_run() {
        let r = parse(&fixture("randread-psync.json")).unwrap();
        assert_eq!(r.version, "fio-3.33");
        assert_eq!(r.jobs.len(), 1);
        assert_eq!(r.jobs[0].name, "rhfio");
        assert_eq!((r.bytes(Dir::Read), r.bytes(Dir::Write)), (16 << 20, 0));
        assert_eq!(r.total_ios(), 4096);
        assert_eq!(r.dominant(), Dir::Read);
        assert_eq!(r.runtime_ms(), 106);
        assert_eq!(r.bw_bytes_per_s(), 158275622.0);
        let c = r.clat(Dir::Read).unwrap();
        assert_eq!(c.samples, 4096);
        assert!(c.p50_ns.unwrap() <= c.p99_ns.unwrap());
        assert_eq!(r.clat(Dir::Write), None);
        assert_eq!(extra(&r, "fio_clat_p50_ns"), c.p50_ns.map(|p| p as f64));
        assert_eq!(extra(&r, "fio_clat_p50_ns_read"), c.p50_ns.map(|p| p as f64));
        assert_eq!(extra(&r, "fio_clat_p50_ns_write"), None);
        assert_eq!(extra(&r, "fio_usr_cpu_pct"), Some(4.761905));
        assert_eq!(r.error(), None);
    }

    #[test]
    fn randrw_run_has_both_directions() {
        let r = parse(&fixture("randrw-iouring.json")).unwrap();
        assert_eq!(r.bytes(Dir::Read), 274456576);
        assert_eq!(r.bytes(Dir::Write), 116965376);
        assert_eq!(r.total_bytes(), 274456576 + 116965376);
        assert_eq!(r.total_ios(), 67002 + 28553);
        assert_eq!(r.dominant(), Dir::Read);
        assert_eq!(r.bw_bytes_per_s(), (274182393u64 + 116848527) as f64);
        assert!((r.iops() - (66935.064935 + 28524.475524)).abs() < 1e-6);
        assert_eq!(r.runtime_ms(), 1001);
        assert_eq!(extra(&r, "fio_clat_p50_ns_read"), Some(52480.0));
        assert_eq!(extra(&r, "fio_clat_p99_ns_read"), Some(100864.0));
        assert!(extra(&r, "fio_clat_p99_ns_write").is_some());
        assert_eq!(extra(&r, "fio_clat_mean_ns"), extra(&r, "fio_clat_mean_ns_read"));
        assert_eq!(extra(&r, "fio_sys_cpu_pct"), Some(69.1));
    }

    #[test]
    fn numjobs_two_group_reporting_is_one_entry() {
        let r = parse(&fixture("read-numjobs2.json")).unwrap();
        assert_eq!(r.jobs.len(), 1);
        assert_eq!(r.total_bytes(), 2 * (16 << 20));
        assert_eq!(r.total_ios(), 512);
        // job_runtime is summed over the clones, the direction's runtime is the longest.
        assert_eq!(r.jobs[0].job_runtime_ms, 19);
        assert_eq!(r.runtime_ms(), 11);
    }

    #[test]
    fn several_entries_are_summed() {
        let one = parse(&fixture("randrw-iouring.json")).unwrap();
        let mut two = one.clone();
        two.jobs.push(one.jobs[0].clone());
        assert_eq!(two.total_bytes(), 2 * one.total_bytes());
        assert_eq!(two.runtime_ms(), one.runtime_ms());
        assert_eq!(two.cpu_pct(), one.cpu_pct());
        let (c1, c2) = (one.clat(Dir::Write).unwrap(), two.clat(Dir::Write).unwrap());
        assert_eq!(c2.samples, 2 * c1.samples);
        assert!((c2.mean_ns - c1.mean_ns).abs() < 1e-6);
    }

    #[test]
    fn notes_before_the_report_are_skipped() {
        let text =
            format!("note: both iodepth >= 1 and synchronous I/O engine\n{}", fixture("read-numjobs2.json"));
        assert_eq!(parse(&text).unwrap().total_ios(), 512);
    }

    #[test]
    fn malformed_reports_give_clear_errors() {
        assert!(parse("").unwrap_err().contains("no JSON report"));
        assert!(parse("fio: pid=1, err=2/file:filesetup.c").unwrap_err().contains("no JSON report"));
        let truncated: String = fixture("randread-psync.json").chars().take(900).collect();
        assert!(parse(&truncated).unwrap_err().contains("malformed"));
        assert!(parse("{\"jobs\": []}").unwrap_err().contains("no jobs"));
        let e = parse("{\"jobs\": [{\"read\": {}, \"write\": {}}]}").unwrap_err();
        assert!(e.contains("malformed") && e.contains("io_bytes"), "{e}");
    }

    #[test]
    fn job_errors_are_reported() {
        let text = fixture("randread-psync.json").replacen("\"error\" : 0", "\"error\" : 5", 1);
        assert_eq!(parse(&text).unwrap().error(), Some(("rhfio".to_string(), 5)));
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(s in any::<String>()) {
            let _ = parse(&s);
        }

        #[test]
        fn truncated_reports_never_panic(cut in 0usize..8000) {
            let text = fixture("randrw-iouring.json");
            let cut = (0..=cut.min(text.len())).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
            let _ = parse(&text[..cut]);
        }
    }
}
