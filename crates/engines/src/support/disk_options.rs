//! What the native `diskio` engine and the `fio` adapter share, so one suite runs both on the
//! same cells: the option table, IOzone's phases (and fio's randrw), and telling a block-device
//! target from a directory.

use crate::{OptKind, OptionSpec};
use std::path::Path;

pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "phase",
        kind: OptKind::Choice(DiskPhase::NAMES),
        default: "read",
        help: "IOzone phase (write creates the files, rewrite overwrites them, read is cold, reread warm, \
               random phases use record-aligned offsets) or fio's randrw",
    },
    OptionSpec {
        name: "procs",
        kind: OptKind::Int { min: 1, max: 1024 },
        default: "1",
        help: "processes (worker threads), each on its own file (IOzone -t, fio numjobs)",
    },
    OptionSpec {
        name: "bs",
        kind: OptKind::Size { min: 512, max: 64 << 20 },
        default: "64k",
        help: "record size: bytes per read or write (IOzone -r, fio bs)",
    },
    OptionSpec {
        name: "size",
        kind: OptKind::Size { min: 4096, max: 1 << 40 },
        default: "64m",
        help: "file size per process (IOzone -s, fio size); a multiple of bs",
    },
    OptionSpec {
        name: "direct",
        kind: OptKind::Bool,
        default: "false",
        help: "O_DIRECT: bypass the page cache (IOzone -I, fio direct=1)",
    },
    OptionSpec {
        name: "fsync",
        kind: OptKind::Bool,
        default: "false",
        help: "fsync each file inside the timed part, after its writes (IOzone -e, fio end_fsync)",
    },
    OptionSpec {
        name: "ioengine",
        kind: OptKind::Choice(&["psync", "io_uring"]),
        default: "psync",
        help: "psync: one pread/pwrite at a time; io_uring: iodepth operations held in flight",
    },
    OptionSpec {
        name: "iodepth",
        kind: OptKind::Int { min: 1, max: 4096 },
        default: "1",
        help: "operations in flight per process (io_uring only)",
    },
    OptionSpec {
        name: "iodepth_batch",
        kind: OptKind::Int { min: 1, max: 4096 },
        default: "1",
        help: "io_uring: operations queued per submission (fio iodepth_batch_submit); 1 submits each as it is \
               queued, which a virtual disk serves fastest (larger batches, at most iodepth, save CPU per I/O)",
    },
    OptionSpec {
        name: "fixedbufs",
        kind: OptKind::Bool,
        default: "true",
        help: "io_uring: register the I/O buffers with the kernel once (READ_FIXED / WRITE_FIXED, fio's \
               fixedbufs=1), which saves about a fifth of the CPU per 64 KiB I/O at the same rate; false passes \
               plain memory. diskio only: the fio engine keeps fio's own default (fixedbufs=0)",
    },
    OptionSpec {
        name: "hugebufs",
        kind: OptKind::Bool,
        default: "true",
        help: "each process's I/O buffers in a transparent huge page of their own (2 MiB; physically \
               contiguous when the kernel grants it, see the extra io_buffer_huge_share), so a record reaches \
               the device as one segment: a virtual disk served 64 KiB reads at QD4 4-5x faster so; false takes \
               them from the heap, as fio's default mem=malloc. diskio only: the fio engine keeps fio's own default",
    },
    OptionSpec {
        name: "iomem_align",
        kind: OptKind::Size { min: 0, max: 2 << 20 },
        default: "0",
        help: "fio only (fio's iomem_align): 0 keeps fio's default, under which the buffers of buffered \
               (direct=false) I/O start where malloc put them, not on a page boundary, and fio's 1 MiB cached \
               reads copied 3-4x slower here; any other value starts them that many bytes past a page \
               boundary, so 4k aligns them as diskio's always are. diskio ignores it",
    },
    OptionSpec {
        name: "rwmixread",
        kind: OptKind::Int { min: 0, max: 100 },
        default: "50",
        help: "percentage of reads in randrw",
    },
    OptionSpec {
        name: "timed",
        kind: OptKind::Bool,
        default: "false",
        help: "false: one pass per process, window ends at the first to finish (IOzone stonewall); \
               true: loop until the runtime window ends (fio time_based)",
    },
    OptionSpec {
        name: "min_window_ms",
        kind: OptKind::Int { min: 0, max: 3_600_000 },
        default: "1000",
        help: "pass mode: repeat each process's pass until its window lasts this long, counting every pass \
               (write truncates first; cold reads without direct are never repeated, the cache would serve \
               them); 0: one pass. diskio only: the fio engine ignores it",
    },
    OptionSpec {
        name: "target",
        kind: OptKind::Str,
        default: "",
        help: "directory for the test files (default: the cell's work directory), or a block device \
               (read phases only unless destructive=true); several targets as an axis compare volumes",
    },
    OptionSpec {
        name: "layout",
        kind: OptKind::Choice(crate::support::disk_layout::Layout::NAMES),
        default: "auto",
        help: "the files before the window: auto (written, except for write, whose timed writes create them), \
               written (filled with data and fsynced), fallocate (unwritten extents, as fio leaves a new file \
               for writes), sparse (size only); reading phases need written",
    },
    OptionSpec {
        name: "invalidate",
        kind: OptKind::Bool,
        default: "true",
        help: "as fio's invalidate=1: without direct, the files start out of the page cache (every phase but \
               rewrite and reread), and a timed sequential run evicts them again each time it wraps to the \
               start; false keeps what the cache holds (fio invalidate=0)",
    },
    OptionSpec {
        name: "fadvise_hint",
        kind: OptKind::Bool,
        default: "true",
        help: "as fio's fadvise_hint=1: posix_fadvise RANDOM on the files of random phases (no readahead), \
               SEQUENTIAL on the others; false gives no advice (the kernel's readahead decides)",
    },
    OptionSpec {
        name: "destructive",
        kind: OptKind::Bool,
        default: "false",
        help: "allow write phases on a block-device target: DESTROYS the data on that device",
    },
];

/// A phase of IOzone (or fio's randrw).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiskPhase {
    Write,
    Rewrite,
    Read,
    Reread,
    RandRead,
    RandWrite,
    RandRw,
}

impl DiskPhase {
    /// The option words, in table order (shared with the fio adapter).
    pub const NAMES: &'static [&'static str] =
        &["write", "rewrite", "read", "reread", "randread", "randwrite", "randrw"];

    pub fn parse(s: &str) -> Option<DiskPhase> {
        Some(match s {
            "write" => DiskPhase::Write,
            "rewrite" => DiskPhase::Rewrite,
            "read" => DiskPhase::Read,
            "reread" => DiskPhase::Reread,
            "randread" => DiskPhase::RandRead,
            "randwrite" => DiskPhase::RandWrite,
            "randrw" => DiskPhase::RandRw,
            _ => return None,
        })
    }

    /// Offsets are drawn at random.
    pub fn is_random(self) -> bool {
        matches!(self, DiskPhase::RandRead | DiskPhase::RandWrite | DiskPhase::RandRw)
    }

    /// The phase writes.
    pub fn writes(self) -> bool {
        matches!(self, DiskPhase::Write | DiskPhase::Rewrite | DiskPhase::RandWrite | DiskPhase::RandRw)
    }

    /// The phase reads.
    pub fn reads(self) -> bool {
        !matches!(self, DiskPhase::Write | DiskPhase::Rewrite | DiskPhase::RandWrite)
    }

    /// Reads should find the file out of the page cache (IOzone's read after write with a
    /// cold cache; reread is the warm case).
    pub fn cold(self) -> bool {
        matches!(self, DiskPhase::Read | DiskPhase::RandRead | DiskPhase::RandRw)
    }

    /// A written file is evicted from the page cache before the window, as fio does by
    /// default (`invalidate=1`); only rewrite and reread keep what the previous phase
    /// cached. Random writes into a cached file are not only unlike fio's: on a kernel whose
    /// page cache holds large folios (ext4 since 6.16), every 4 KiB write into the folios the
    /// layout left walks their block heads, which cost diskio 2-10x fio's CPU per write.
    pub fn starts_uncached(self) -> bool {
        !matches!(self, DiskPhase::Rewrite | DiskPhase::Reread)
    }
}

/// A true/false option that a cell made before it existed does not carry: its default then.
pub fn flag(ctx: &crate::CellContext, name: &str, default: bool) -> Result<bool, crate::EngineError> {
    match ctx.spec.params.get(name) {
        Some(_) => ctx.get_bool(name),
        None => Ok(default),
    }
}

/// Drops the fio-only `iomem_align` from a planned cell where it changes nothing: always for
/// diskio (`for_fio` false), and at 0 for fio (its default, nothing passed). So such cells'
/// labels and compare keys stay those of runs made before the option existed.
pub fn drop_unused_iomem_align(params: &mut racehorse_core::Params, for_fio: bool) {
    if !for_fio || params.get("iomem_align") == Some(&racehorse_core::Value::Int(0)) {
        params.remove("iomem_align");
    }
}

/// The path is a block device (a disk, partition or loop device).
pub fn is_block_device(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(p).map(|m| m.file_type().is_block_device()).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_phase_word_parses_and_the_table_offers_them() {
        for w in DiskPhase::NAMES {
            assert!(DiskPhase::parse(w).is_some(), "{w}");
        }
        assert_eq!(DiskPhase::parse("trim"), None);
        let phase = OPTIONS.iter().find(|o| o.name == "phase").expect("phase option");
        assert_eq!(phase.kind, OptKind::Choice(DiskPhase::NAMES));
        assert!(DiskPhase::RandRw.reads() && DiskPhase::RandRw.writes() && DiskPhase::RandRw.is_random());
        assert!(DiskPhase::Read.cold() && !DiskPhase::Reread.cold());
    }

    #[test]
    fn iomem_align_is_kept_only_where_fio_gets_it() {
        use racehorse_core::{Params, Value};
        let with = |v: i64| {
            Params::from([("bs".to_string(), Value::Int(4096)), ("iomem_align".to_string(), Value::Int(v))])
        };
        for (v, for_fio, kept) in
            [(0, false, false), (4096, false, false), (0, true, false), (4096, true, true)]
        {
            let mut p = with(v);
            drop_unused_iomem_align(&mut p, for_fio);
            assert_eq!(p.contains_key("iomem_align"), kept, "iomem_align={v} for_fio={for_fio}");
            assert!(p.contains_key("bs"), "other options stay");
        }
    }

    #[test]
    fn block_devices_are_told_from_files_and_directories() {
        let dir = tempfile::tempdir().expect("tmp");
        assert!(!is_block_device(dir.path()));
        assert!(!is_block_device(&dir.path().join("absent")));
        assert!(!is_block_device(Path::new("/dev/null")), "a character device");
    }
}
