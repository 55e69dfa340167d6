//! Fleet identity of a run: its globally unique id (a random UUID, version 4, made when the
//! run is created), checks of the inventory name and campaign id, and the stable id derived
//! for exports written before runs had a UUID.

use std::io::Read;

/// A new random UUID (version 4, RFC 9562) in its lower-case text form, from /dev/urandom.
pub fn new_uuid() -> std::io::Result<String> {
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(format_uuid(b, 4))
}

/// The text form of 16 bytes with the version nibble and the RFC 9562 variant bits set.
fn format_uuid(mut b: [u8; 16], version: u8) -> String {
    b[6] = (b[6] & 0x0f) | (version << 4);
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

/// Whether `s` is a UUID in its text form (8-4-4-4-12 hexadecimal digits).
pub fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|c| c.is_ascii_hexdigit()))
}

/// A stable UUID (version 8, "custom") for a run exported before runs carried one: the
/// 128-bit FNV-1a hash of what identified such a run (host, start second, label, command,
/// racehorse version), so loading the same old export twice gives the same id.
pub fn derived_uuid(parts: &[&str]) -> String {
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    let mut h: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    for part in parts {
        for byte in part.bytes().chain([0u8]) {
            h ^= u128::from(byte);
            h = h.wrapping_mul(PRIME);
        }
    }
    format_uuid(h.to_be_bytes(), 8)
}

/// Why an inventory name or campaign id is not usable, or None: non-empty, at most 200
/// bytes, no control characters, no whitespace at either end.
pub fn name_problem(what: &str, name: &str) -> Option<String> {
    if name.is_empty() {
        return Some(format!("{what} is empty"));
    }
    if name.len() > 200 {
        return Some(format!("{what} is longer than 200 bytes"));
    }
    if name.chars().any(char::is_control) || name.trim() != name {
        return Some(format!(
            "{what} '{}' holds control characters or surrounding spaces",
            name.escape_debug()
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_uuids_are_version_4_and_differ() {
        let a = new_uuid().unwrap();
        let b = new_uuid().unwrap();
        assert!(is_uuid(&a) && is_uuid(&b), "{a} {b}");
        assert_ne!(a, b);
        assert_eq!(&a[14..15], "4", "{a}");
        assert!("89ab".contains(&a[19..20]), "{a}");
    }

    #[test]
    fn derived_uuids_are_stable_and_distinct() {
        let a = derived_uuid(&["h", "10", "base"]);
        assert_eq!(a, derived_uuid(&["h", "10", "base"]));
        assert_ne!(a, derived_uuid(&["h", "10", "bas", "e"]), "parts are separated");
        assert!(is_uuid(&a) && &a[14..15] == "8", "{a}");
    }

    #[test]
    fn uuid_syntax_and_names() {
        assert!(!is_uuid("1234"));
        assert!(!is_uuid("0123456789ab-cdef-0123-4567-89abcdef0123"));
        assert!(name_problem("--campaign", "c-2026-11").is_none());
        assert!(name_problem("--campaign", "").is_some());
        assert!(name_problem("--inventory-name", "a\nb").is_some());
        assert!(name_problem("--inventory-name", " a").is_some());
    }
}
