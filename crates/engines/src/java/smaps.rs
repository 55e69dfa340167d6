//! Large pages as the kernel maps them for a process (/proc/PID/smaps), not as its flags ask:
//! transparent huge pages (`AnonHugePages`) and hugetlbfs pages (mappings whose
//! `KernelPageSize` is above the base page, and their `Private_Hugetlb`/`Shared_Hugetlb`).

/// Large pages of one process, in KiB.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LargePages {
    /// Anonymous memory backed by transparent huge pages.
    pub anon_huge_kib: u64,
    /// Memory of hugetlb mappings (their size: reserved huge pages, touched or not).
    pub hugetlb_mapped_kib: u64,
    /// Hugetlb pages the process touched (`Private_Hugetlb` + `Shared_Hugetlb`).
    pub hugetlb_kib: u64,
}

fn kib(value: &str) -> Option<u64> {
    value.trim().strip_suffix("kB")?.trim().parse().ok()
}

/// Parses smaps (or smaps_rollup) text.
pub fn parse(text: &str) -> LargePages {
    let mut p = LargePages::default();
    let mut size_kib = 0;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else { continue };
        let Some(v) = kib(value) else { continue };
        match key.trim() {
            "Size" => size_kib = v,
            "KernelPageSize" if v > 4 => p.hugetlb_mapped_kib += size_kib,
            "AnonHugePages" => p.anon_huge_kib += v,
            "Private_Hugetlb" | "Shared_Hugetlb" => p.hugetlb_kib += v,
            _ => {}
        }
    }
    p
}

/// The large pages of process `pid` now.
pub fn of_process(pid: i32) -> Result<LargePages, String> {
    let path = format!("/proc/{pid}/smaps");
    std::fs::read_to_string(&path).map(|t| parse(&t)).map_err(|e| format!("cannot read {path}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const THP: &str = include_str!("fixtures/smaps_thp.txt");
    const HUGETLB: &str = include_str!("fixtures/smaps_hugetlb.txt");

    #[test]
    fn transparent_huge_pages_are_counted() {
        let p = parse(THP);
        assert_eq!(p.anon_huge_kib, 4096 + 2048);
        assert_eq!((p.hugetlb_kib, p.hugetlb_mapped_kib), (0, 0));
    }

    #[test]
    fn hugetlb_mappings_are_counted() {
        let p = parse(HUGETLB);
        assert_eq!(p.anon_huge_kib, 0);
        assert_eq!(p.hugetlb_mapped_kib, 8192);
        assert_eq!(p.hugetlb_kib, 6144);
    }

    #[test]
    fn this_process_has_readable_maps() {
        let p = of_process(std::process::id() as i32).unwrap();
        assert_eq!(p.hugetlb_mapped_kib, 0, "the test binary maps no hugetlb pages");
        assert!(of_process(-1).unwrap_err().contains("/proc/-1/smaps"));
    }
}
