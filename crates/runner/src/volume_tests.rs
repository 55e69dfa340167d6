//! Tests of volume specs and of the build and teardown commands they give.

use super::*;

/// Leaf (a test helper): the tests read its message.
fn spec(text: &str) -> Result<VolumeSpec, String> {
    let raw: RawVolume = toml::from_str(text).map_err(|e| e.to_string())?;
    raw.into_spec()
}

#[test]
fn each_kind_parses_with_its_defaults() {
    let v = spec("kind = \"lvm-striped\"\ndevices = [\"/dev/sdb\", \"/dev/sdc\"]").unwrap();
    assert_eq!((v.stripe_bytes, v.fs.as_str(), v.destructive), (64 * 1024, "ext4", false));
    assert_eq!(v.describe(), "lvm-striped over /dev/sdb,/dev/sdc, stripe 64 KiB, ext4");
    let v =
        spec("kind = \"md-raid0\"\ndevices = [\"/dev/a\", \"/dev/b\"]\nstripe_size = \"512k\"\nfs = \"xfs\"")
            .unwrap();
    assert_eq!((v.stripe_bytes, v.fs.as_str()), (512 * 1024, "xfs"));
    let v = spec("kind = \"btrfs-raid0\"\ndevices = [\"/dev/a\", \"/dev/b\"]\ndestructive = true").unwrap();
    assert_eq!((v.fs.as_str(), v.destructive), ("btrfs", true));
    assert_eq!(v.describe(), "btrfs-raid0 over /dev/a,/dev/b");
    assert!(spec("kind = \"lvm-linear\"\ndevices = [\"/dev/a\"]").is_ok(), "one device is a linear volume");
}

#[test]
fn mistakes_are_named() {
    let cases = [
        ("kind = \"raid5\"\ndevices = [\"/dev/a\", \"/dev/b\"]", "use one of lvm-linear"),
        ("kind = \"md-raid0\"\ndevices = [\"/dev/a\"]", "needs at least 2 devices"),
        ("kind = \"btrfs-raid0\"\ndevices = [\"/dev/a\", \"/dev/a\"]", "named twice"),
        ("kind = \"btrfs-raid0\"\ndevices = [\"sdb\", \"/dev/a\"]", "not a device path"),
        ("kind = \"btrfs-raid0\"\ndevices = [\"/dev/a; rm -rf /\", \"/dev/b\"]", "not a device path"),
        ("kind = \"lvm-linear\"\ndevices = [\"/dev/a\"]\nstripe_size = \"64k\"", "has no stripes"),
        ("kind = \"lvm-striped\"\ndevices = [\"/dev/a\", \"/dev/b\"]\nstripe_size = \"3k\"", "power of two"),
        ("kind = \"btrfs-single\"\ndevices = [\"/dev/a\"]\nfs = \"ext4\"", "is a btrfs filesystem"),
        ("kind = \"md-raid0\"\ndevices = [\"/dev/a\", \"/dev/b\"]\nfs = \"zfs\"", "use ext4 or xfs"),
        ("kind = \"md-raid0\"\ndevices = [\"/dev/a\", \"/dev/b\"]\nsize = 3", "unknown field"),
    ];
    for (text, want) in cases {
        let e = spec(text).expect_err(text);
        assert!(e.contains(want), "{text}: {e}");
    }
}

#[test]
fn the_commands_build_mount_and_tear_down_every_part() {
    let mnt = Path::new("/tmp/racehorse-volume-x");
    let v = spec("kind = \"lvm-striped\"\ndevices = [\"/dev/sdb\", \"/dev/sdc\"]\nstripe_size = \"128k\"\nfs = \"xfs\"")
        .unwrap();
    let (build, teardown) = v.commands("st-1", mnt);
    for part in [
        "lvm pvcreate",
        "vgcreate -q racehorse_st_1",
        "-i 2 -I 128k",
        "mkfs.xfs",
        "mount /dev/racehorse_st_1/data",
    ] {
        assert!(build.contains(part), "{part}: {build}");
    }
    for part in [
        "umount '/tmp/racehorse-volume-x'",
        "vgremove -q -f racehorse_st_1",
        "pvremove",
        "wipefs -q -a '/dev/sdb' '/dev/sdc'",
    ] {
        assert!(teardown.contains(part), "{part}: {teardown}");
    }
    let v = spec("kind = \"md-raid0\"\ndevices = [\"/dev/a\", \"/dev/b\"]").unwrap();
    let (build, teardown) = v.commands("m", mnt);
    assert!(
        build.contains("--level=0 --raid-devices=2 --chunk=64") && build.contains("mkfs.ext4"),
        "{build}"
    );
    assert!(teardown.contains("mdadm --stop /dev/md/racehorse_m") && teardown.contains("--zero-superblock"));
    let v = spec("kind = \"btrfs-single\"\ndevices = [\"/dev/a\"]").unwrap();
    let (build, _) = v.commands("b", mnt);
    assert!(build.starts_with("mkdir -p '/tmp/racehorse-volume-x' && mkfs.btrfs -q -f -d single"), "{build}");
}
