//! fio's command line for one racehorse cell: a pure function of the options, so that every
//! phase's job is unit-tested without running fio.
//!
//! A cell is one to three fio runs ([`Pass`]): an untimed layout pass that writes the files
//! (every phase but `write`), an untimed warming read (`reread` only), and the measured pass.
//! Every job is named [`JOB_NAME`] and each of its `numjobs` clones uses its own file
//! `rhfio.<jobnum>` in the target directory, so all passes of a cell use the same files.

use crate::support::disk_layout::FileState;
use crate::support::disk_options::DiskPhase;
use racehorse_core::shell::quote;
use std::time::Duration;

/// The name of every fio job racehorse runs; also the prefix of the data files.
pub const JOB_NAME: &str = "rhfio";

const MIB: u64 = 1 << 20;

/// fio's `rw=` value for a phase (the phases and their words are diskio's).
pub fn fio_rw(phase: DiskPhase) -> &'static str {
    match phase {
        DiskPhase::Write | DiskPhase::Rewrite => "write",
        DiskPhase::Read | DiskPhase::Reread => "read",
        DiskPhase::RandRead => "randread",
        DiskPhase::RandWrite => "randwrite",
        DiskPhase::RandRw => "randrw",
    }
}

/// The I/O engines offered (fio's `ioengine=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoEngine {
    Psync,
    IoUring,
}

impl IoEngine {
    pub fn parse(word: &str) -> Option<Self> {
        match word {
            "psync" => Some(IoEngine::Psync),
            "io_uring" => Some(IoEngine::IoUring),
            _ => None,
        }
    }

    pub fn fio_name(self) -> &'static str {
        match self {
            IoEngine::Psync => "psync",
            IoEngine::IoUring => "io_uring",
        }
    }
}

/// One fio run of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Untimed: writes every file in full and fsyncs it, so the measured pass finds them.
    Layout,
    /// Untimed: reads every file once so that the measured `reread` finds it in the cache.
    Warm,
    /// The pass racehorse measures.
    Measured,
}

impl Pass {
    /// Short name, used for the output files in the work dir.
    pub fn label(self) -> &'static str {
        match self {
            Pass::Layout => "layout",
            Pass::Warm => "warm",
            Pass::Measured => "measured",
        }
    }
}

/// Ramp and run time of a timed measured pass (the Control's warmup and runtime).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timing {
    pub ramp: Duration,
    pub runtime: Duration,
}

/// The options of one cell, already typed.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    pub phase: DiskPhase,
    /// fio `numjobs`: processes, each with its own file.
    pub procs: u64,
    pub bs: u64,
    /// Bytes per process.
    pub size: u64,
    pub direct: bool,
    /// `end_fsync=1`: the final fsync is part of the measured pass.
    pub fsync: bool,
    pub ioengine: IoEngine,
    pub iodepth: u64,
    /// fio `iodepth_batch_submit`.
    pub iodepth_batch: u64,
    pub rwmixread: u64,
    /// `time_based` for the Control's runtime (after a ramp of its warmup), or one pass.
    pub timed: bool,
    /// Directory of the data files.
    pub dir: String,
    /// A block device every job reads (or, when allowed, writes) in place of files.
    pub device: Option<String>,
    /// What the files hold when the measured pass starts (the `layout` option).
    pub layout: FileState,
    /// fio `invalidate` (its default 1; rewrite and reread always keep the cache).
    pub invalidate: bool,
    /// fio `fadvise_hint` (its default 1).
    pub fadvise_hint: bool,
    /// fio `iomem_align` in bytes; 0 leaves it out (fio's default).
    pub iomem_align: u64,
}

impl JobSpec {
    /// Checks combinations the option table cannot express.
    pub fn validate(&self) -> Result<(), String> {
        if self.size < self.bs {
            return Err(format!("size ({} bytes) must be at least bs ({} bytes)", self.size, self.bs));
        }
        if self.procs == 0 || self.iodepth == 0 {
            return Err("procs and iodepth must be at least 1".to_string());
        }
        if self.rwmixread > 100 {
            return Err(format!("rwmixread must be 0..100, not {}", self.rwmixread));
        }
        if self.direct && self.bs & 511 != 0 {
            return Err(format!("direct=true needs bs to be a multiple of 512, not {}", self.bs));
        }
        Ok(())
    }

    /// The fio runs of the cell, in order; only the last one is measured.
    pub fn passes(&self) -> Vec<Pass> {
        if self.device.is_some() {
            // The device's data is the data: nothing to lay out.
            return match self.phase {
                DiskPhase::Reread => vec![Pass::Warm, Pass::Measured],
                _ => vec![Pass::Measured],
            };
        }
        match (self.layout, self.phase) {
            // The measured pass's fio makes the file: empty, fallocated or sparse.
            (FileState::Created | FileState::Fallocated | FileState::Sparse, _) => vec![Pass::Measured],
            (FileState::Written, DiskPhase::Reread) => vec![Pass::Layout, Pass::Warm, Pass::Measured],
            (FileState::Written, _) => vec![Pass::Layout, Pass::Measured],
        }
    }

    /// The data files (relative to [`JobSpec::dir`]), one per process; none on a device.
    pub fn file_names(&self) -> Vec<String> {
        if self.device.is_some() {
            return Vec::new();
        }
        (0..self.procs).map(|i| format!("{JOB_NAME}.{i}")).collect()
    }

    /// Block size of the untimed passes: 1 MiB when it divides `size`, else `bs`.
    fn untimed_bs(&self) -> u64 {
        if self.size & (MIB - 1) == 0 {
            MIB
        } else {
            self.bs
        }
    }

    /// fio's arguments for one pass; `output` is where fio writes its JSON report. With
    /// `markers`, the measured pass's jobs write 'b' into that FIFO right before their I/O
    /// starts (fio's `exec_prerun`) and 'e' right after it ends (`exec_postrun`).
    pub fn args(&self, pass: Pass, timing: Timing, output: &str, markers: Option<&str>) -> Vec<String> {
        let mut a = vec![
            "--output-format=json".to_string(),
            format!("--output={output}"),
            "--eta=never".to_string(),
            format!("--name={JOB_NAME}"),
            format!("--numjobs={}", self.procs),
            "--group_reporting".to_string(),
            format!("--size={}", self.size),
        ];
        match &self.device {
            Some(dev) => a.push(format!("--filename={}", escape_dir(dev))),
            None => a.extend([
                format!("--directory={}", escape_dir(&self.dir)),
                format!("--filename_format={JOB_NAME}.$jobnum"),
            ]),
        }
        match pass {
            Pass::Layout => {
                a.extend(["--rw=write".to_string(), format!("--bs={}", self.untimed_bs())]);
                a.extend(["--ioengine=psync".to_string(), "--end_fsync=1".to_string()]);
            }
            Pass::Warm => {
                a.extend(["--rw=read".to_string(), format!("--bs={}", self.untimed_bs())]);
                a.push("--ioengine=psync".to_string());
            }
            Pass::Measured => {
                self.measured_args(timing, &mut a);
                if let Some(fifo) = markers {
                    // fio appends "> rhfio.prerun.txt 2>&1"; the braces keep echo's own redirection.
                    a.push(format!("--exec_prerun={{ echo b >{}; }}", quote(fifo)));
                    a.push(format!("--exec_postrun={{ echo e >{}; }}", quote(fifo)));
                }
            }
        }
        a
    }

    fn measured_args(&self, timing: Timing, a: &mut Vec<String>) {
        a.push(format!("--rw={}", fio_rw(self.phase)));
        a.push(format!("--bs={}", self.bs));
        a.push(format!("--ioengine={}", self.ioengine.fio_name()));
        if self.ioengine != IoEngine::Psync {
            a.push(format!("--iodepth={}", self.iodepth));
            a.push(format!("--iodepth_batch_submit={}", self.iodepth_batch));
        }
        if self.direct {
            a.push("--direct=1".to_string());
        }
        if self.fsync {
            a.push("--end_fsync=1".to_string());
        }
        match (self.device.is_none().then_some(self.layout), self.phase) {
            // New files, created by the job's own open() and grown by its writes.
            (Some(FileState::Created), _) => {
                a.extend(["--create_on_open=1".to_string(), "--fallocate=none".to_string()])
            }
            // New files that fio fallocates (its default for writes to a new file) or only
            // sizes with ftruncate.
            (Some(FileState::Fallocated), _) => a.push("--fallocate=native".to_string()),
            (Some(FileState::Sparse), _) => a.push("--fallocate=none".to_string()),
            _ => {}
        }
        // The files were just written (rewrite) or read (reread): keep them cached.
        if !self.invalidate || matches!(self.phase, DiskPhase::Rewrite | DiskPhase::Reread) {
            a.push("--invalidate=0".to_string());
        }
        if !self.fadvise_hint {
            a.push("--fadvise_hint=0".to_string());
        }
        if self.iomem_align > 0 {
            a.push(format!("--iomem_align={}", self.iomem_align));
        }
        if self.phase == DiskPhase::RandRw {
            a.push(format!("--rwmixread={}", self.rwmixread));
        }
        if self.phase.is_random() {
            // IOzone draws random offsets with replacement.
            a.push("--norandommap=1".to_string());
            if !self.timed {
                a.push(format!("--number_ios={}", self.size / self.bs.max(1)));
            }
        }
        if self.timed {
            a.push("--time_based=1".to_string());
            a.push(format!("--runtime={}ms", timing.runtime.as_millis().max(1)));
            if !timing.ramp.is_zero() {
                a.push(format!("--ramp_time={}ms", timing.ramp.as_millis().max(1)));
            }
        }
    }
}

/// fio splits `directory=` on ':'; a literal colon is written `\:`.
fn escape_dir(dir: &str) -> String {
    dir.replace(':', "\\:")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(phase: DiskPhase) -> JobSpec {
        JobSpec {
            phase,
            procs: 1,
            bs: 65536,
            size: 64 * MIB,
            direct: false,
            fsync: false,
            ioengine: IoEngine::Psync,
            iodepth: 1,
            iodepth_batch: 1,
            rwmixread: 50,
            timed: false,
            dir: "/tmp/cell".to_string(),
            device: None,
            layout: crate::support::disk_layout::Layout::Auto.resolve(phase).unwrap(),
            invalidate: true,
            fadvise_hint: true,
            iomem_align: 0,
        }
    }

    fn measured(s: &JobSpec) -> Vec<String> {
        s.args(Pass::Measured, Timing::default(), "/w/out.json", None)
    }

    fn has(args: &[String], a: &str) -> bool {
        args.iter().any(|x| x == a)
    }

    #[test]
    fn phase_words_round_trip_and_map_to_fio_rw() {
        for w in DiskPhase::NAMES {
            assert!(DiskPhase::parse(w).is_some(), "{w}");
        }
        assert_eq!(DiskPhase::parse("trim"), None);
        let rw: Vec<&str> = DiskPhase::NAMES.iter().filter_map(|w| DiskPhase::parse(w)).map(fio_rw).collect();
        assert_eq!(rw, ["write", "write", "read", "read", "randread", "randwrite", "randrw"]);
        assert_eq!(IoEngine::parse("io_uring"), Some(IoEngine::IoUring));
        assert_eq!(IoEngine::parse("libaio"), None);
    }

    #[test]
    fn common_arguments_name_output_files_and_group() {
        let mut s = spec(DiskPhase::Read);
        s.procs = 3;
        let a = measured(&s);
        for want in [
            "--output-format=json",
            "--output=/w/out.json",
            "--name=rhfio",
            "--directory=/tmp/cell",
            "--filename_format=rhfio.$jobnum",
            "--numjobs=3",
            "--group_reporting",
            "--size=67108864",
            "--rw=read",
            "--bs=65536",
            "--ioengine=psync",
        ] {
            assert!(has(&a, want), "{want} missing from {a:?}");
        }
        assert!(!a.iter().any(|x| x.starts_with("--invalidate")), "read keeps fio's invalidate=1");
        assert!(!a.iter().any(|x| x.starts_with("--iodepth")), "psync has no queue");
        assert!(!a.iter().any(|x| x.starts_with("--time_based") || x.starts_with("--number_ios")));
        assert_eq!(s.file_names(), ["rhfio.0", "rhfio.1", "rhfio.2"]);
    }

    #[test]
    fn a_block_device_is_used_in_place() {
        let mut s = spec(DiskPhase::Read);
        s.device = Some("/dev/loop7".to_string());
        assert_eq!(s.passes(), [Pass::Measured]);
        assert!(s.file_names().is_empty(), "nothing to delete on a device");
        let a = measured(&s);
        assert!(has(&a, "--filename=/dev/loop7") && !a.iter().any(|x| x.starts_with("--directory")));
        s.phase = DiskPhase::Write;
        assert!(!has(&measured(&s), "--create_on_open=1"), "a device is never created");
        s.phase = DiskPhase::Reread;
        assert_eq!(s.passes(), [Pass::Warm, Pass::Measured]);
    }

    #[test]
    fn cache_options_map_to_fios_own_and_its_defaults_are_left_alone() {
        let mut s = spec(DiskPhase::Read);
        let a = measured(&s);
        assert!(!a.iter().any(|x| x.starts_with("--invalidate") || x.starts_with("--fadvise_hint")), "{a:?}");
        assert!(!a.iter().any(|x| x.starts_with("--fixedbufs")), "{a:?}");
        s.invalidate = false;
        s.fadvise_hint = false;
        s.ioengine = IoEngine::IoUring;
        let a = measured(&s);
        assert!(has(&a, "--invalidate=0") && has(&a, "--fadvise_hint=0"), "{a:?}");
        assert!(!a.iter().any(|x| x.starts_with("--fixedbufs")), "diskio's fixedbufs is not fio's: {a:?}");
        s.phase = DiskPhase::Reread;
        let once = measured(&s).iter().filter(|x| x.starts_with("--invalidate")).count();
        assert_eq!(once, 1, "reread keeps its cache with a single --invalidate=0");
    }

    #[test]
    fn iomem_align_is_passed_only_when_set() {
        let mut s = spec(DiskPhase::RandRead);
        assert!(!measured(&s).iter().any(|x| x.starts_with("--iomem_align")), "0 keeps fio's default");
        s.iomem_align = 4096;
        let a = measured(&s);
        assert!(has(&a, "--iomem_align=4096"), "{a:?}");
        let layout = s.args(Pass::Layout, Timing::default(), "/w/l.json", None);
        assert!(!layout.iter().any(|x| x.starts_with("--iomem_align")), "only the measured pass: {layout:?}");
    }

    #[test]
    fn passes_per_phase() {
        assert_eq!(spec(DiskPhase::Write).passes(), [Pass::Measured]);
        assert_eq!(spec(DiskPhase::Rewrite).passes(), [Pass::Layout, Pass::Measured]);
        assert_eq!(spec(DiskPhase::Reread).passes(), [Pass::Layout, Pass::Warm, Pass::Measured]);
        assert_eq!(spec(DiskPhase::RandRw).passes(), [Pass::Layout, Pass::Measured]);
    }

    #[test]
    fn write_creates_files_inside_the_job() {
        // auto: fio's own new file, fallocated (its default), nothing laid out first.
        let a = measured(&spec(DiskPhase::Write));
        assert!(has(&a, "--rw=write") && has(&a, "--fallocate=native") && !has(&a, "--create_on_open=1"));
        let w = measured(&spec(DiskPhase::RandWrite));
        assert!(has(&w, "--rw=randwrite") && has(&w, "--fallocate=native"));
        assert_eq!(spec(DiskPhase::RandWrite).passes(), [Pass::Measured]);
        // iozone: the job's own open creates the file and its writes grow it.
        let iozone = JobSpec {
            layout: crate::support::disk_layout::Layout::Iozone.resolve(DiskPhase::Write).unwrap(),
            ..spec(DiskPhase::Write)
        };
        let a = measured(&iozone);
        assert!(has(&a, "--rw=write") && has(&a, "--create_on_open=1") && has(&a, "--fallocate=none"));
        let r = measured(&spec(DiskPhase::Rewrite));
        assert!(has(&r, "--rw=write") && has(&r, "--invalidate=0") && !has(&r, "--create_on_open=1"));
    }

    #[test]
    fn reread_keeps_the_cache_and_warm_pass_reads() {
        let s = spec(DiskPhase::Reread);
        assert!(has(&measured(&s), "--invalidate=0"));
        let w = s.args(Pass::Warm, Timing::default(), "/w/warm.json", None);
        assert!(has(&w, "--rw=read") && has(&w, "--bs=1048576") && !has(&w, "--invalidate=0"));
    }

    #[test]
    fn layout_writes_whole_files_and_syncs() {
        let mut s = spec(DiskPhase::RandRead);
        s.direct = true;
        let l = s.args(Pass::Layout, Timing::default(), "/w/l.json", None);
        assert!(has(&l, "--rw=write") && has(&l, "--end_fsync=1") && has(&l, "--bs=1048576"));
        assert!(!has(&l, "--direct=1"), "layout is buffered");
        s.size = 3 * 65536 + 4096 * 3;
        s.bs = 4096;
        assert!(has(&s.args(Pass::Layout, Timing::default(), "/w/l.json", None), "--bs=4096"));
    }

    #[test]
    fn untimed_random_is_one_pass_of_size_over_bs() {
        let mut s = spec(DiskPhase::RandRw);
        s.bs = 4096;
        s.rwmixread = 70;
        let a = measured(&s);
        assert!(has(&a, "--rw=randrw") && has(&a, "--rwmixread=70") && has(&a, "--norandommap=1"));
        assert!(has(&a, "--number_ios=16384"));
    }

    #[test]
    fn timed_uses_runtime_and_ramp_of_the_control() {
        let mut s = spec(DiskPhase::RandRead);
        s.timed = true;
        s.ioengine = IoEngine::IoUring;
        s.iodepth = 32;
        s.direct = true;
        s.fsync = true;
        let t = Timing { ramp: Duration::from_millis(1500), runtime: Duration::from_secs(5) };
        let a = s.args(Pass::Measured, t, "/w/o.json", None);
        for want in [
            "--time_based=1",
            "--runtime=5000ms",
            "--ramp_time=1500ms",
            "--ioengine=io_uring",
            "--iodepth=32",
            "--direct=1",
            "--end_fsync=1",
        ] {
            assert!(has(&a, want), "{want} missing from {a:?}");
        }
        assert!(!a.iter().any(|x| x.starts_with("--number_ios")));
        let no_ramp = s.args(Pass::Measured, Timing { ramp: Duration::ZERO, ..t }, "/w/o.json", None);
        assert!(!no_ramp.iter().any(|x| x.starts_with("--ramp_time")));
    }

    #[test]
    fn markers_go_to_the_fifo_of_the_measured_pass_only() {
        let s = spec(DiskPhase::Read);
        let a = s.args(Pass::Measured, Timing::default(), "/w/o.json", Some("/w/it's.fifo"));
        assert!(has(&a, r"--exec_prerun={ echo b >'/w/it'\''s.fifo'; }"), "{a:?}");
        assert!(has(&a, r"--exec_postrun={ echo e >'/w/it'\''s.fifo'; }"), "{a:?}");
        let l = s.args(Pass::Layout, Timing::default(), "/w/o.json", Some("/w/m.fifo"));
        assert!(!l.iter().any(|x| x.starts_with("--exec_")));
    }

    #[test]
    fn colons_in_the_directory_are_escaped() {
        let mut s = spec(DiskPhase::Read);
        s.dir = "/mnt/a:b".to_string();
        assert!(has(&measured(&s), "--directory=/mnt/a\\:b"));
    }

    #[test]
    fn validation_rejects_impossible_cells() {
        let mut s = spec(DiskPhase::Read);
        assert_eq!(s.validate(), Ok(()));
        s.size = 1024;
        assert!(s.validate().unwrap_err().contains("at least bs"));
        let mut d = spec(DiskPhase::Read);
        d.direct = true;
        d.bs = 1000;
        assert!(d.validate().unwrap_err().contains("multiple of 512"));
    }
}
