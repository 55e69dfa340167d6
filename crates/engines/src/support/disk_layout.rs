//! What a disk cell's files hold before its window opens, shared by `diskio` and the `fio`
//! adapter: the `layout` option and what it resolves to for each phase.
//!
//! It matters on a filesystem. ext4 (and XFS, btrfs) keep a fallocated range as *unwritten*
//! extents: a read of them returns zeros without touching the device, and the first write to
//! each block converts its extent inside the write's completion, costing metadata I/O and
//! journal work. A file filled with data (`written`) has neither effect; a sparse file makes
//! every first write allocate. fio lays out read jobs' files with data, and only fallocates
//! a new file for write jobs (its defaults `overwrite=0`, `fallocate=native`) — so a write
//! job's first run on a new file converts every extent, while its next run (the file now
//! exists) does not. The default, `auto`, is fio's first run as users start it; `iozone` is
//! IOzone's (the initial write creates the file, the other tests find it written). To
//! compare like with like, both engines in racehorse get the same state from the same option.

use crate::support::disk_options::DiskPhase;

/// The `layout` option as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// fio's defaults on a new file: `fallocate` for the write-only phases (`write`,
    /// `randwrite`), `written` for the others.
    Auto,
    /// IOzone's: `write` creates its file in the window, every other phase finds it written.
    Iozone,
    /// Filled with data and fsynced (then evicted for cold reads and direct I/O).
    Written,
    /// `fallocate(2)` mode 0 to the full size: blocks reserved as unwritten extents.
    Fallocate,
    /// The size set with `ftruncate(2)`, no blocks at all.
    Sparse,
}

/// The state of the files when the window opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileState {
    /// No file: created (empty) by the timed writes (`write` with `layout = iozone`).
    Created,
    Written,
    Fallocated,
    Sparse,
}

impl Layout {
    /// The option words, in table order.
    pub const NAMES: &'static [&'static str] = &["auto", "iozone", "written", "fallocate", "sparse"];

    pub fn parse(word: &str) -> Option<Layout> {
        Some(match word {
            "auto" => Layout::Auto,
            "iozone" => Layout::Iozone,
            "written" => Layout::Written,
            "fallocate" => Layout::Fallocate,
            "sparse" => Layout::Sparse,
            _ => return None,
        })
    }

    /// The state this layout gives the files of `phase`; an error (for the user) when the
    /// combination would measure nothing real.
    pub fn resolve(self, phase: DiskPhase) -> Result<FileState, String> {
        match (self, phase) {
            (Layout::Auto, DiskPhase::Write | DiskPhase::RandWrite) => Ok(FileState::Fallocated),
            (Layout::Iozone, DiskPhase::Write) => Ok(FileState::Created),
            (Layout::Written, DiskPhase::Write) => {
                Err("layout = \"written\" with phase = \"write\" is a rewrite: use phase = \"rewrite\""
                    .into())
            }
            (Layout::Auto | Layout::Iozone | Layout::Written, _) => Ok(FileState::Written),
            (Layout::Fallocate | Layout::Sparse, p) if p.reads() => Err(format!(
                "layout = \"{}\" leaves nothing to read (unwritten blocks read as zeros without touching \
                 the device): reading phases need layout = \"written\" (or auto)",
                self.word()
            )),
            (Layout::Fallocate, _) => Ok(FileState::Fallocated),
            (Layout::Sparse, _) => Ok(FileState::Sparse),
        }
    }

    fn word(self) -> &'static str {
        Layout::NAMES[self as usize]
    }

    /// The option's text for a cell of `phase` on a file (or, with `device`, a block device,
    /// which is used as it is): the state it gives, or the message for the user.
    pub fn from_option(word: &str, phase: DiskPhase, device: bool) -> Result<FileState, String> {
        let layout = Layout::parse(word)
            .ok_or_else(|| format!("option 'layout': '{word}' is not one of {}", Layout::NAMES.join(", ")))?;
        if !device {
            return layout.resolve(phase);
        }
        match layout {
            // A device holds what it holds: only the phase's own rules apply.
            Layout::Auto | Layout::Iozone => Layout::Iozone.resolve(phase),
            _ => Err(format!(
                "layout = \"{word}\" is for files; a block device is used as it is (leave layout = \"auto\")"
            )),
        }
    }
}

impl FileState {
    /// The word recorded with the cell's figures.
    pub fn word(self) -> &'static str {
        match self {
            FileState::Created => "created",
            FileState::Written => "written",
            FileState::Fallocated => "fallocated",
            FileState::Sparse => "sparse",
        }
    }
}

/// Reserves `len` bytes of `file` as unwritten extents (`fallocate(2)` mode 0, which also
/// sets the size).
pub fn fallocate(file: &std::fs::File, len: u64) -> std::io::Result<()> {
    use std::os::unix::io::AsRawFd;
    let len = libc::off_t::try_from(len).map_err(|_| std::io::Error::from_raw_os_error(libc::EFBIG))?;
    // SAFETY: a plain system call on a descriptor the File owns.
    let rc = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, len) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_is_fios_new_file_and_iozone_creates_on_write() {
        for word in DiskPhase::NAMES {
            let phase = DiskPhase::parse(word).unwrap();
            let write_only = matches!(phase, DiskPhase::Write | DiskPhase::RandWrite);
            let fio = if write_only { FileState::Fallocated } else { FileState::Written };
            assert_eq!(Layout::Auto.resolve(phase), Ok(fio), "auto {word}");
            let iozone = if phase == DiskPhase::Write { FileState::Created } else { FileState::Written };
            assert_eq!(Layout::Iozone.resolve(phase), Ok(iozone), "iozone {word}");
            // A device is used as it is, whichever of the two.
            assert_eq!(Layout::from_option("auto", phase, true), Ok(iozone), "device {word}");
        }
        assert_eq!(Layout::Iozone.word(), "iozone");
        assert_eq!(Layout::Sparse.word(), "sparse");
    }

    #[test]
    fn unwritten_layouts_are_for_writing_phases_only() {
        for phase in [DiskPhase::Write, DiskPhase::Rewrite, DiskPhase::RandWrite] {
            assert_eq!(Layout::Fallocate.resolve(phase), Ok(FileState::Fallocated));
            assert_eq!(Layout::Sparse.resolve(phase), Ok(FileState::Sparse));
        }
        for phase in [DiskPhase::Read, DiskPhase::Reread, DiskPhase::RandRead, DiskPhase::RandRw] {
            let e = Layout::Fallocate.resolve(phase).unwrap_err();
            assert!(e.contains("nothing to read") && e.contains("fallocate"), "{e}");
        }
        assert!(Layout::Written.resolve(DiskPhase::Write).unwrap_err().contains("rewrite"));
        assert_eq!(Layout::parse("sparse"), Some(Layout::Sparse));
        assert_eq!(Layout::parse("dense"), None);
        assert!(Layout::from_option("dense", DiskPhase::Read, false).unwrap_err().contains("not one of"));
        let dev = Layout::from_option("written", DiskPhase::Read, true).unwrap_err();
        assert!(dev.contains("block device"), "{dev}");
        assert_eq!(Layout::from_option("auto", DiskPhase::Read, true), Ok(FileState::Written));
    }

    #[test]
    fn fallocate_sets_the_size() {
        let dir = tempfile::tempdir().unwrap();
        let f = std::fs::File::create(dir.path().join("f")).unwrap();
        match fallocate(&f, 1 << 20) {
            Ok(()) => assert_eq!(f.metadata().unwrap().len(), 1 << 20),
            // tmpfs and ext4 support it; a filesystem that does not says so.
            Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EOPNOTSUPP), "{e}"),
        }
    }
}
