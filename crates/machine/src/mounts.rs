//! /proc/self/mounts: mount table entries and the mount holding a given path.

use crate::error::MachineError;
use crate::root::{read_text, SysRoot};
use std::path::Path;

/// One line of /proc/self/mounts (octal escapes such as `\040` decoded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MountEntry {
    pub device: String,
    pub mount_point: String,
    pub fstype: String,
    pub options: String,
}

fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct =
            b.get(i + 1..i + 4).filter(|d| b[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match oct {
            Some(d) => {
                out.push(d.iter().fold(0u32, |acc, c| acc * 8 + (c - b'0') as u32) as u8);
                i += 4;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses the mount table; malformed lines are skipped.
pub fn parse_mounts(text: &str) -> Vec<MountEntry> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split_ascii_whitespace();
            Some(MountEntry {
                device: unescape(f.next()?),
                mount_point: unescape(f.next()?),
                fstype: f.next()?.to_string(),
                options: f.next()?.to_string(),
            })
        })
        .collect()
}

/// Reads `<proc>/self/mounts`.
pub fn read_mounts(root: &SysRoot) -> Result<Vec<MountEntry>, MachineError> {
    Ok(parse_mounts(&read_text(&root.proc("self/mounts"))?))
}

/// The mount holding `path`: the longest mount point that is a path-component prefix of it
/// (later entries win ties, as they are mounted on top).
pub fn find_mount<'a>(mounts: &'a [MountEntry], path: &Path) -> Option<&'a MountEntry> {
    let mut best: Option<&MountEntry> = None;
    for m in mounts {
        let mp = Path::new(&m.mount_point);
        if path.starts_with(mp) && !matches!(best, Some(b) if mp.as_os_str().len() < b.mount_point.len()) {
            best = Some(m);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTS: &str = "/dev/vda1 / ext4 rw,relatime 0 0\n\
/dev/vdb /data xfs rw,noatime 0 0\n\
/dev/vdc /data/sub\\040dir ext4 rw 0 0\n\
tmpfs /database tmpfs rw 0 0\n\
overlay /data overlay rw,lowerdir=/x 0 0\n";

    #[test]
    fn longest_component_prefix_wins() {
        let m = parse_mounts(MOUNTS);
        assert_eq!(m[2].mount_point, "/data/sub dir");
        let f = |p: &str| find_mount(&m, Path::new(p)).map(|e| e.fstype.clone());
        assert_eq!(f("/data/x").as_deref(), Some("overlay"), "later mount on top wins");
        assert_eq!(f("/data/sub dir/y").as_deref(), Some("ext4"));
        assert_eq!(f("/databa").as_deref(), Some("ext4"), "not a component prefix of /database");
        assert_eq!(f("/database/q").as_deref(), Some("tmpfs"));
        assert_eq!(find_mount(&m, Path::new("/")).map(|e| e.device.as_str()), Some("/dev/vda1"));
    }
}
