//! The storage layout behind a target is recorded with the run (issue 27): a btrfs RAID 0
//! over two loop devices, built here, reads back as such from the run's environment, and a
//! run on a loop device names the device's backing file.

use crate::common::{is_root, machine_lock, text, Sandbox};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Two loop devices over sparse files, a btrfs RAID 0 made on them and mounted; all of it
/// undone on drop, on every path of the test.
struct BtrfsPair {
    dir: tempfile::TempDir,
    devs: Vec<String>,
    mounted: bool,
}

impl BtrfsPair {
    fn new() -> Result<BtrfsPair, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mut pair = BtrfsPair { dir, devs: Vec::new(), mounted: false };
        for i in 0..2 {
            let img = pair.dir.path().join(format!("img{i}"));
            std::fs::File::create(&img).and_then(|f| f.set_len(256 << 20)).map_err(|e| e.to_string())?;
            let out = Command::new("losetup")
                .args(["-f", "--show"])
                .arg(&img)
                .output()
                .map_err(|e| e.to_string())?;
            if !out.status.success() {
                return Err(format!("losetup: {}", String::from_utf8_lossy(&out.stderr)));
            }
            pair.devs.push(String::from_utf8_lossy(&out.stdout).trim().to_string());
        }
        let mkfs = Command::new("mkfs.btrfs")
            .args(["-q", "-f", "-d", "raid0", "-m", "raid1"])
            .args(&pair.devs)
            .output();
        let mkfs = mkfs.map_err(|e| format!("mkfs.btrfs (btrfs-progs): {e}"))?;
        if !mkfs.status.success() {
            return Err(format!("mkfs.btrfs: {}", String::from_utf8_lossy(&mkfs.stderr)));
        }
        std::fs::create_dir(pair.mount_point()).map_err(|e| e.to_string())?;
        let mount = Command::new("mount")
            .arg(&pair.devs[0])
            .arg(pair.mount_point())
            .output()
            .map_err(|e| e.to_string())?;
        if !mount.status.success() {
            return Err(format!("mount: {}", String::from_utf8_lossy(&mount.stderr)));
        }
        pair.mounted = true;
        Ok(pair)
    }

    fn mount_point(&self) -> PathBuf {
        self.dir.path().join("mnt")
    }
}

impl Drop for BtrfsPair {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg(self.mount_point()).status();
        }
        for d in &self.devs {
            let _ = Command::new("losetup").arg("-d").arg(d).status();
        }
    }
}

/// A short diskio run writing into `dir`, then its stored environment as JSON.
fn env_of_run_in(sb: &Sandbox, dir: &Path, label: &str) -> serde_json::Value {
    let args =
        ["run", "diskio", "-o", "phase=write", "-o", "size=1m", "--runtime", "300ms", "--warmup", "0s"];
    let out = sb.run(
        &[&args[..], &["--label", label, "--quiet", "--no-warm-up", "--dir", dir.to_str().unwrap()]].concat(),
    );
    assert!(out.status.success(), "{}", text(&out));
    let env = sb.run(&["env", label, "--json"]);
    serde_json::from_slice(&env.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&env)))
}

#[test]
fn a_btrfs_raid0_over_two_loop_devices_is_recorded_as_such() {
    if !is_root() {
        racehorse_testkit::skip!("building a btrfs volume on loop devices needs root");
        assert!(std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(), "root is required here");
        return;
    }
    let _m = machine_lock();
    let pair = match BtrfsPair::new() {
        Ok(p) => p,
        Err(e) => {
            racehorse_testkit::skip!("cannot build a btrfs volume here: {e}");
            assert!(std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(), "btrfs is required here: {e}");
            return;
        }
    };
    let sb = Sandbox::new();
    let env = env_of_run_in(&sb, &pair.mount_point(), "on-btrfs");
    let layout = &env["targets"][0]["layout"];
    assert_eq!(layout["kind"], "btrfs", "{env:#}");
    assert_eq!(layout["level"], "raid0", "{layout:#}");
    let members: Vec<String> = layout["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| format!("/dev/{}", m["name"].as_str().unwrap()))
        .collect();
    let mut devs = pair.devs.clone();
    devs.sort();
    assert_eq!(members, devs);
    assert!(layout["members"][0]["scheduler"].is_string(), "{layout:#}");
    let shown = text(&sb.run(&["env", "on-btrfs"]));
    assert!(shown.contains("target[0].layout.kind") && shown.contains("btrfs"), "{shown}");
}
