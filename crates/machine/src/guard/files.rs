//! Guarded writes of sysfs files (THP, block queue settings, CPU governors…): every item is
//! validated first, all originals are recorded, then the values are written in order.

use super::{Guard, Setting};
use crate::cpuctl::writable;
use crate::error::MachineError;
use crate::knobs::{choices, selected_value};
use crate::root::SysRoot;
use crate::state::{self, SavedFile};
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// One validated item of `set_files`.
struct Checked {
    /// The file to write (inside the root).
    file: PathBuf,
    /// The same as the real machine names it ("/sys/…"), for the state file and messages.
    host: String,
    value: String,
    /// Its value when validated (selected word of a choice list).
    before: String,
}

fn invalid(msg: String) -> MachineError {
    MachineError::Invalid(msg)
}

/// `path` relative to the sys directory; an error unless it is an existing file under it.
fn sys_relative(root: &SysRoot, path: &Path) -> Result<PathBuf, MachineError> {
    let shown = path.display();
    let sys = std::fs::canonicalize(&root.sys_dir).map_err(|e| MachineError::io(&root.sys_dir, e))?;
    let lexical = path
        .strip_prefix(&root.sys_dir)
        .ok()
        .filter(|r| r.components().all(|c| matches!(c, Component::Normal(_))));
    let refuse = || {
        invalid(format!(
            "refusing to write {shown}: only files under {} can be set by a variant",
            root.sys_dir.display()
        ))
    };
    let real = match std::fs::canonicalize(path) {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && lexical.is_some() => {
            return Err(invalid(format!(
                "{shown} does not exist: this kernel or device lacks that setting; check the name or remove it from the variant"
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(refuse()),
        Err(e) => return Err(MachineError::io(path, e)),
    };
    let Some(canonical) = real.strip_prefix(&sys).ok().filter(|r| !r.as_os_str().is_empty()) else {
        return Err(refuse());
    };
    if !real.is_file() {
        return Err(invalid(format!(
            "{shown} is not a file; name a setting file such as .../queue/scheduler"
        )));
    }
    // Keep the name as given ("/sys/block/vda/queue/…") when it is plain; else the resolved one.
    Ok(lexical.unwrap_or(canonical).to_path_buf())
}

/// The values `file` accepts, when known: the words of a choice list, or for a CPU's
/// scaling_governor the words of scaling_available_governors.
fn allowed_values(file: &Path, current: &str) -> Option<Vec<String>> {
    if let Some(list) = choices(current) {
        return Some(list);
    }
    if file.file_name()? != "scaling_governor" {
        return None;
    }
    let avail = std::fs::read_to_string(file.with_file_name("scaling_available_governors")).ok()?;
    Some(avail.split_whitespace().map(str::to_string).collect())
}

/// Validates one item without changing anything.
fn check_item(root: &SysRoot, path: &Path, value: &str) -> Result<Checked, MachineError> {
    if value.trim().is_empty() || value.contains('\n') {
        return Err(invalid(format!("bad value {value:?} for {}: give one non-empty line", path.display())));
    }
    let rel = sys_relative(root, path)?;
    let file = root.sys(&rel);
    let host = Path::new("/sys").join(&rel).to_string_lossy().into_owned();
    let current = std::fs::read_to_string(&file).map_err(|e| MachineError::io(&file, e))?;
    if let Some(list) = allowed_values(&file, &current).filter(|l| !l.iter().any(|w| w == value)) {
        let name = rel.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        return Err(invalid(format!("{name} '{value}' is not one of: {} ({host})", list.join(", "))));
    }
    if !writable(&file) {
        return Err(MachineError::NotPermitted(format!("{host} is not writable; run racehorse as root")));
    }
    Ok(Checked { file, host, value: value.to_string(), before: selected_value(&current) })
}

/// The OS error text without its " (os error N)" suffix.
fn os_text(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// Writes `value` in one write, as `echo value > file` does.
fn write_value(file: &Path, value: &str) -> Result<(), std::io::Error> {
    let mut f = std::fs::OpenOptions::new().write(true).truncate(true).open(file)?;
    f.write_all(if value.is_empty() { b"\n" } else { value.as_bytes() })
}

impl Guard {
    /// Sets sysfs files, e.g. (THP `enabled`, "never") or (`<queue>/scheduler`, "bfq"). Every
    /// path must be an existing file under the sys directory, and a value for a choice file
    /// (or a CPU governor) must be one of its choices; all items are checked before anything
    /// changes. The originals are recorded in the state file (the first original of a path is
    /// kept), then the values are written in order. When the kernel refuses a value, what this
    /// call already wrote is put back and the error names the path, value and OS error.
    /// `restore` puts the files back in the order they were first recorded (so give the
    /// scheduler before nr_requests, which a scheduler switch resets).
    pub fn set_files(&mut self, items: &[(PathBuf, String)]) -> Result<(), MachineError> {
        let checked =
            items.iter().map(|(p, v)| check_item(&self.root, p, v)).collect::<Result<Vec<_>, _>>()?;
        let known = self.saved.files.len();
        for c in &checked {
            if !self.saved.files.iter().any(|f| f.path == c.host) {
                self.saved.files.push(SavedFile { path: c.host.clone(), original: c.before.clone() });
            }
        }
        if self.saved.files.len() > known {
            if let Err(e) = state::store(&self.state_file, &self.saved) {
                self.saved.files.truncate(known);
                return Err(e);
            }
        }
        for c in &checked {
            let original = self.saved.files.iter().find(|f| f.path == c.host).map(|f| f.original.clone());
            self.log.note(Setting::File(c.host.clone()), original.unwrap_or_else(|| c.before.clone()));
        }
        for (i, c) in checked.iter().enumerate() {
            if let Err(e) = write_value(&c.file, &c.value) {
                return Err(self.refused(c, &e, &checked[..i]));
            }
        }
        Ok(())
    }

    /// The error for a write the kernel refused, after putting back `written` (last first).
    fn refused(&self, c: &Checked, e: &std::io::Error, written: &[Checked]) -> MachineError {
        let mut undo_failed = Vec::new();
        for w in written.iter().rev() {
            if let Err(e) = write_value(&w.file, &w.before) {
                undo_failed.push(format!(
                    "{} could not be put back to '{}' ({})",
                    w.host,
                    w.before,
                    os_text(&e)
                ));
            }
        }
        let undo = if undo_failed.is_empty() {
            String::new()
        } else {
            format!("; also {}: restore will retry", undo_failed.join(", "))
        };
        let (value, host, os) = (&c.value, &c.host, os_text(e));
        match e.raw_os_error() {
            Some(libc::EACCES | libc::EPERM | libc::EROFS) => MachineError::NotPermitted(format!(
                "cannot write '{value}' to {host}: {os}; run racehorse as root on a writable /sys{undo}"
            )),
            _ => MachineError::Invalid(format!(
                "the kernel refused '{value}' for {host}: {os}; use a value this kernel accepts there{undo}"
            )),
        }
    }
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
