//! A zram swap device for one cell (the paging engine's anonymous region where the machine
//! has no swap): a free /sys/block/zramN (or one made through zram-control/hot_add) gets a
//! disksize, a swap signature (mkswap) and swapon; undoing it is swapoff, reset and, for a
//! device we made, hot_remove. On a fixture root only the sysfs files are written.

use crate::error::MachineError;
use crate::root::{read_trim, write_ctl, SysRoot};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A zram device the Guard turned into swap, recorded before it changes.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub(crate) struct SavedZram {
    pub device: u32,
    /// Made by hot_add (removed again by hot_remove), not found free.
    pub created: bool,
}

fn block_dir(root: &SysRoot, n: u32) -> PathBuf {
    root.sys(format!("block/zram{n}"))
}

fn dev_path(n: u32) -> PathBuf {
    PathBuf::from(format!("/dev/zram{n}"))
}

/// Devices in use as swap (first column of /proc/swaps).
fn swap_devices(root: &SysRoot) -> Vec<String> {
    let text = std::fs::read_to_string(root.proc("swaps")).unwrap_or_default();
    text.lines().skip(1).filter_map(|l| l.split_whitespace().next().map(str::to_string)).collect()
}

/// True when a zram swap can be set up here (the module is loaded and there is a free device
/// or a way to add one).
pub fn zram_available(root: &SysRoot) -> bool {
    free_device(root).is_some() || root.sys("class/zram-control/hot_add").exists()
}

/// The first zramN with no disksize that is not swap already.
fn free_device(root: &SysRoot) -> Option<u32> {
    let swaps = swap_devices(root);
    let mut found: Vec<u32> = std::fs::read_dir(root.sys("block"))
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("zram")?.parse().ok())
        .collect();
    found.sort_unstable();
    found.into_iter().find(|n| {
        read_trim(&block_dir(root, *n).join("disksize")).is_some_and(|s| s == "0")
            && !swaps.contains(&dev_path(*n).display().to_string())
    })
}

/// Picks a free device, or adds one (reading hot_add creates it); `created` says which.
pub(crate) fn pick(root: &SysRoot) -> Result<SavedZram, MachineError> {
    if let Some(device) = free_device(root) {
        return Ok(SavedZram { device, created: false });
    }
    let hot_add = root.sys("class/zram-control/hot_add");
    let n = read_trim(&hot_add).ok_or_else(|| {
        MachineError::NotPermitted(
            "no free zram device and none can be added; load the module: modprobe zram".into(),
        )
    })?;
    let device = n.parse().map_err(|_| MachineError::Invalid(format!("hot_add answered {n:?}")))?;
    Ok(SavedZram { device, created: true })
}

fn run(tool: &str, args: &[&str]) -> Result<(), MachineError> {
    let out = std::process::Command::new(tool)
        .args(args)
        .output()
        .map_err(|e| MachineError::NotPermitted(format!("cannot run {tool} ({e}); install util-linux")))?;
    if out.status.success() {
        return Ok(());
    }
    Err(MachineError::Invalid(format!(
        "{tool} {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    )))
}

/// Turns swap on (`on`) or off for `dev` with the swapon/swapoff system calls.
fn swap(dev: &Path, on: bool) -> Result<(), MachineError> {
    let c = std::ffi::CString::new(dev.as_os_str().as_encoded_bytes())
        .map_err(|_| MachineError::Invalid(format!("{} has a NUL byte", dev.display())))?;
    // SAFETY: a valid C string that outlives the call; flags 0.
    let r = unsafe {
        if on {
            libc::swapon(c.as_ptr(), 0)
        } else {
            libc::swapoff(c.as_ptr())
        }
    };
    if r == 0 {
        return Ok(());
    }
    let what = if on { "swapon" } else { "swapoff" };
    Err(MachineError::Invalid(format!("{what} {}: {}", dev.display(), std::io::Error::last_os_error())))
}

/// Gives `z` a size of `bytes` and turns it into active swap; returns the device path.
pub(crate) fn setup(root: &SysRoot, z: &SavedZram, bytes: u64) -> Result<PathBuf, MachineError> {
    write_ctl(&block_dir(root, z.device).join("disksize"), &bytes.to_string())?;
    let dev = dev_path(z.device);
    if root.is_host() {
        run("mkswap", &[&dev.display().to_string()])?;
        swap(&dev, true)?;
    }
    Ok(dev)
}

/// Undoes `z`: swapoff if it is swap, reset, hot_remove if we made it. Idempotent.
pub(crate) fn undo(root: &SysRoot, z: &SavedZram) -> Result<String, MachineError> {
    let dev = dev_path(z.device);
    let dir = block_dir(root, z.device);
    if root.is_host() && swap_devices(root).contains(&dev.display().to_string()) {
        swap(&dev, false)?;
    }
    if dir.exists() {
        write_ctl(&dir.join("reset"), "1")?;
        if z.created {
            write_ctl(&root.sys("class/zram-control/hot_remove"), &z.device.to_string())?;
        }
    }
    Ok(format!("removed zram swap {}", dev.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::Guard;

    /// A fake machine with zram0 (free) and zram-control.
    fn fixture() -> (tempfile::TempDir, SysRoot) {
        let d = tempfile::tempdir().expect("tmp");
        let root = SysRoot::at(d.path());
        let z = root.sys("block/zram0");
        std::fs::create_dir_all(&z).expect("zram0");
        std::fs::create_dir_all(root.sys("class/zram-control")).expect("ctl");
        std::fs::create_dir_all(&root.proc_dir).expect("proc");
        for (path, text) in [
            (z.join("disksize"), "0\n"),
            (z.join("reset"), ""),
            (root.sys("class/zram-control/hot_add"), "1\n"),
            (root.sys("class/zram-control/hot_remove"), ""),
            (root.proc("swaps"), "Filename\tType\tSize\tUsed\tPriority\n"),
        ] {
            std::fs::write(path, text).expect("write");
        }
        (d, root)
    }

    #[test]
    fn a_free_device_is_sized_recorded_and_reset() {
        let (d, root) = fixture();
        let state = d.path().join("state.json");
        let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
        assert!(zram_available(&root));
        assert_eq!(g.zram_swap(64 << 20).expect("zram"), PathBuf::from("/dev/zram0"));
        assert_eq!(read_trim(&root.sys("block/zram0/disksize")).as_deref(), Some("67108864"));
        assert!(std::fs::read_to_string(&state).expect("state").contains("\"zram\""), "recorded first");
        g.restore().expect("restore");
        assert_eq!(read_trim(&root.sys("block/zram0/reset")).as_deref(), Some("1"));
        assert!(!state.exists(), "nothing left to restore");
    }

    #[test]
    fn with_no_free_device_one_is_added_and_removed_again() {
        let (d, root) = fixture();
        std::fs::write(root.sys("block/zram0/disksize"), "1000\n").expect("busy");
        std::fs::create_dir_all(root.sys("block/zram1")).expect("zram1");
        for f in ["disksize", "reset"] {
            std::fs::write(root.sys(format!("block/zram1/{f}")), "").expect("w");
        }
        let z = pick(&root).expect("pick");
        assert_eq!(z, SavedZram { device: 1, created: true });
        undo(&root, &z).expect("undo");
        assert_eq!(read_trim(&root.sys("class/zram-control/hot_remove")).as_deref(), Some("1"));
        drop(d);
    }

    /// Changes the real machine: a 64 MiB zram swap appears in /proc/swaps and is gone after
    /// `remove_zram_swap`.
    #[test]
    fn real_zram_swap_comes_and_goes_machine() {
        let host = SysRoot::host();
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 || !zram_available(&host) {
            assert!(std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(), "root and zram are required here");
            racehorse_testkit::skip!("needs root and the zram module");
            return;
        }
        let _m = crate::cgroup::machine_lock();
        let d = tempfile::tempdir().expect("tmp");
        let state = d.path().join("state.json");
        let mut g = Guard::new(host.clone(), state.clone()).expect("guard");
        let dev = g.zram_swap(64 << 20).expect("zram swap").display().to_string();
        assert!(swap_devices(&host).contains(&dev), "{dev} is swap now");
        g.remove_zram_swap().expect("remove");
        assert!(!swap_devices(&host).contains(&dev), "{dev} is off again");
        assert!(!state.exists());
    }
}
