//! Storage layouts as variants (issue 27): a variant builds a scratch volume from loop
//! devices, its cells write on it and record its layout, and nothing of it is left after the
//! run; devices holding data are refused before anything changes; a layout this kernel cannot
//! build (no device-mapper or md here) is refused with the reason.

use crate::common::{is_root, machine_lock, text, Sandbox};
use std::process::Command;

/// Loop devices over sparse files, detached on drop.
struct Loops {
    _dir: tempfile::TempDir,
    devs: Vec<String>,
}

impl Loops {
    fn new(n: usize) -> Loops {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut devs = Vec::new();
        for i in 0..n {
            let img = dir.path().join(format!("img{i}"));
            std::fs::File::create(&img).and_then(|f| f.set_len(256 << 20)).expect("image");
            let out = Command::new("losetup").args(["-f", "--show"]).arg(&img).output().expect("losetup");
            assert!(out.status.success(), "losetup: {}", String::from_utf8_lossy(&out.stderr));
            devs.push(String::from_utf8_lossy(&out.stdout).trim().to_string());
        }
        Loops { _dir: dir, devs }
    }
}

impl Drop for Loops {
    fn drop(&mut self) {
        for d in &self.devs {
            let _ = Command::new("losetup").arg("-d").arg(d).status();
        }
    }
}

fn suite(sb: &Sandbox, kind: &str, devs: &[String], extra: &str) -> std::path::PathBuf {
    let list: Vec<String> = devs.iter().map(|d| format!("\"{d}\"")).collect();
    let text = format!(
        "name = \"layouts\"\nruntime = \"300ms\"\nwarmup = \"0s\"\nreps = 1\n\n[[workload]]\nengine = \"diskio\"\n\
         phase = \"write\"\nsize = \"4m\"\n\n[[variant]]\nname = \"plain\"\n\n[[variant]]\nname = \"vol\"\n\
         volume = {{ kind = \"{kind}\", devices = [{}]{extra} }}\n",
        list.join(", ")
    );
    std::fs::create_dir_all(sb.work()).expect("work dir");
    let path = sb.work().join("layouts.toml");
    std::fs::write(&path, text).expect("suite");
    path
}

fn root_or_skip(what: &str) -> bool {
    if !is_root() {
        racehorse_testkit::skip!("{what} needs root (loop devices, mkfs, mount)");
        assert!(std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(), "root is required here");
    }
    is_root()
}

fn signatures(dev: &str) -> String {
    let out = Command::new("wipefs").args(["--no-act", "--noheadings"]).arg(dev).output().expect("wipefs");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn a_btrfs_raid0_variant_is_built_used_recorded_and_removed() {
    if !root_or_skip("building a volume") {
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    let loops = Loops::new(2);
    let path = suite(&sb, "btrfs-raid0", &loops.devs, "");
    let out = sb.run(&["run", path.to_str().unwrap(), "--label", "vol", "--quiet", "--no-warm-up"]);
    assert!(out.status.success(), "{}", text(&out));
    let cells = sb.cells("vol");
    let vol = cells.iter().find(|c| c["variant"] == "vol").expect("a cell on the volume");
    let layout = vol["settings"]["volume layout"].as_str().unwrap_or_else(|| panic!("{vol:#}"));
    assert!(layout.starts_with("btrfs raid0"), "{layout}");
    for d in &loops.devs {
        assert!(layout.contains(d.trim_start_matches("/dev/")), "{d} in {layout}");
        assert_eq!(signatures(d), "", "{d} wiped after the run");
    }
    assert!(vol["status"] == "ok", "{vol:#}");
    let mount = std::env::temp_dir().join("racehorse-volume-vol");
    assert!(!mount.exists(), "the mount point is gone");
    assert!(!sb.state_dir().join("restore.json").exists(), "nothing left to restore");
}

#[test]
fn devices_that_hold_data_are_refused_before_anything_changes() {
    if !root_or_skip("a loop device with a filesystem") {
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    let loops = Loops::new(2);
    let mkfs = Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&loops.devs[1]).status().expect("mkfs.ext4");
    assert!(mkfs.success());
    let path = suite(&sb, "btrfs-raid0", &loops.devs, "");
    let out = sb.run(&["run", path.to_str().unwrap(), "--label", "refused", "--quiet"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(
        t.contains(&format!("{} holds data (ext4)", loops.devs[1])) && t.contains("destructive = true"),
        "{t}"
    );
    assert!(signatures(&loops.devs[1]).contains("ext4"), "left as it was");
    assert!(!std::env::temp_dir().join("racehorse-volume-vol").exists(), "no mount point made");
    assert_eq!(signatures(&loops.devs[0]), "");
}

#[test]
fn lvm_and_md_layouts_run_where_the_kernel_has_them_and_are_refused_with_the_reason_elsewhere() {
    if !root_or_skip("lvm and md volumes") {
        return;
    }
    let _m = machine_lock();
    let devices = std::fs::read_to_string("/proc/devices").unwrap_or_default();
    for (kind, has) in [
        ("lvm-striped", devices.lines().any(|l| l.ends_with(" device-mapper"))),
        ("md-raid0", std::path::Path::new("/proc/mdstat").exists()),
    ] {
        let sb = Sandbox::new();
        let loops = Loops::new(2);
        let path = suite(&sb, kind, &loops.devs, ", stripe_size = \"64k\"");
        let out = sb.run(&["run", path.to_str().unwrap(), "--label", kind, "--quiet", "--no-warm-up"]);
        let t = text(&out);
        if has {
            assert!(out.status.success(), "{kind}: {t}");
            let cells = sb.cells(kind);
            let vol = cells.iter().find(|c| c["variant"] == "vol").expect("a cell on the volume");
            assert!(
                vol["settings"]["volume layout"].as_str().is_some_and(|l| l.contains("64 KiB")),
                "{vol:#}"
            );
            for d in &loops.devs {
                assert_eq!(signatures(d), "", "{d} wiped after the run");
            }
        } else {
            eprintln!("{kind}: this kernel cannot build it; checking that the run says so");
            assert_eq!(out.status.code(), Some(2), "{kind}: {t}");
            assert!(t.contains("in this kernel"), "{kind}: {t}");
        }
    }
}

#[test]
fn a_killed_run_leaves_its_volume_to_restore() {
    if !root_or_skip("building a volume") {
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    let loops = Loops::new(2);
    let path = suite(&sb, "btrfs-single", &loops.devs, "");
    let text = std::fs::read_to_string(&path).unwrap().replace("runtime = \"300ms\"", "runtime = \"20s\"");
    std::fs::write(&path, text).unwrap();
    let mut child = sb
        .cmd(&["run", path.to_str().unwrap(), "--label", "killed", "--quiet", "--no-warm-up"])
        .spawn()
        .unwrap();
    let mount = std::env::temp_dir().join("racehorse-volume-vol");
    let mounted =
        || std::fs::read_to_string("/proc/mounts").unwrap_or_default().contains(&mount.display().to_string());
    let start = std::time::Instant::now();
    while !mounted() && start.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(mounted(), "the volume was built");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(mounted(), "SIGKILL left it mounted");
    let out = sb.run(&["restore"]);
    assert!(out.status.success(), "{}", crate::common::text(&out));
    assert!(!mounted(), "restore took it down: {}", crate::common::text(&out));
    for d in &loops.devs {
        assert_eq!(signatures(d), "", "{d} wiped");
    }
    assert!(!mount.exists());
}
