//! Tests of the layout reader on a fixture sysfs (crates/machine/fixtures/layouts): an LVM
//! striped volume, an md RAID 0 over partitions, a loop device and a btrfs RAID 0 over two
//! devices; and of the device-mapper table parser.

use super::*;
use crate::fixtures::fixture_dir;

fn root() -> SysRoot {
    SysRoot::at(fixture_dir("layouts"))
}

#[test]
fn an_lvm_striped_volume_has_its_stripes_stripe_size_and_members() {
    let l = layout(&root(), "dm-0", Some("xfs")).expect("a dm volume");
    assert_eq!((l.kind.as_str(), l.name.as_str()), ("lvm", "vgdata-lvstripe"));
    assert_eq!((l.level.as_deref(), l.stripes, l.stripe_bytes), (Some("striped"), Some(2), Some(64 * 1024)));
    let names: Vec<&str> = l.members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["vdb", "vdc"]);
    assert_eq!(l.members[0].scheduler.as_deref(), Some("mq-deadline"));
    assert_eq!((l.members[0].read_ahead_kb, l.members[0].rotational), (Some(128), Some(false)));
}

#[test]
fn an_md_array_over_partitions_has_the_queues_of_their_disks() {
    let l = layout(&root(), "md0", Some("ext4")).expect("an md array");
    assert_eq!((l.kind.as_str(), l.level.as_deref()), ("md", Some("raid0")));
    assert_eq!((l.stripes, l.stripe_bytes), (Some(2), Some(512 * 1024)));
    let m: Vec<(&str, Option<&str>, Option<u64>)> =
        l.members.iter().map(|m| (m.name.as_str(), m.scheduler.as_deref(), m.read_ahead_kb)).collect();
    assert_eq!(m, [("sdb1", Some("bfq"), Some(256)), ("sdc1", Some("bfq"), Some(512))]);
}

#[test]
fn a_btrfs_filesystem_lists_every_device_and_its_data_profile() {
    let l = layout(&root(), "loop2", Some("btrfs")).expect("btrfs");
    assert_eq!((l.kind.as_str(), l.level.as_deref(), l.stripes), ("btrfs", Some("raid0"), Some(2)));
    assert_eq!(l.name, "0c4f1e2a-1111-2222-3333-444455556666");
    assert_eq!(l.members.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(), ["loop1", "loop2"]);
}

#[test]
fn a_loop_device_names_its_file_and_a_plain_disk_has_no_layout() {
    let l = layout(&root(), "loop0", Some("ext4")).expect("loop");
    assert_eq!((l.kind.as_str(), l.name.as_str()), ("loop", "/var/tmp/image.img"));
    assert_eq!(layout(&root(), "vda", Some("ext4")), None);
    assert_eq!(layout(&root(), "vda", Some("btrfs")), None, "a btrfs on no listed device is a plain disk");
}

#[test]
fn dm_tables_give_their_target_stripes_and_path_selector() {
    let t = parse_dm_table("0 2097152 linear 252:16 2048\n").unwrap();
    assert_eq!((t.target.as_str(), t.stripes, t.stripe_bytes), ("linear", None, None));
    let t = parse_dm_table("0 4194304 striped 4 256 8:16 0 8:32 0 8:48 0 8:64 0").unwrap();
    assert_eq!((t.stripes, t.stripe_bytes), (Some(4), Some(128 * 1024)));
    let t =
        parse_dm_table("0 8388608 multipath 1 queue_if_no_path 0 1 1 service-time 0 2 2 8:16 1 1 8:32 1 1")
            .unwrap();
    assert_eq!((t.target.as_str(), t.policy.as_deref()), ("multipath", Some("service-time")));
    assert_eq!(parse_dm_table(""), None);
    assert_eq!(parse_dm_table("0 1"), None);
}

#[test]
fn a_layout_is_in_the_flattened_environment_and_its_diff() {
    let mut a = racehorse_core::environment::Environment::default();
    let mut t = racehorse_core::environment::TargetInfo { path: "/data".into(), ..Default::default() };
    t.layout = layout(&root(), "dm-0", Some("xfs"));
    a.targets.push(t);
    let flat = a.flatten();
    assert!(flat.contains(&("target[0].layout.members".into(), "vdb,vdc".into())), "{flat:?}");
    assert!(flat.contains(&("target[0].layout.member.vdc.scheduler".into(), "mq-deadline".into())));
    let mut b = a.clone();
    b.targets[0].layout = layout(&root(), "md0", Some("xfs"));
    let keys: Vec<String> = a.diff(&b).into_iter().map(|(k, _, _)| k).collect();
    assert!(keys.contains(&"target[0].layout.kind".to_string()), "{keys:?}");
    assert!(keys.contains(&"target[0].layout.stripe_bytes".to_string()), "{keys:?}");
}
