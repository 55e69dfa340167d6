//! Tests of the `perf report` parsers against text captured from perf 6.1 on a 2-vCPU VM.

use super::*;
use proptest::prelude::*;

/// `perf report -n -t '\t' --sort dso,sym` of `yes > /dev/null` (1011 samples): kernel
/// symbols, a stripped binary (addresses only), an image name with spaces.
const YES_SYM_TAB: &str = include_str!("../../../tests/fixtures/perf/yes_sym_tab.txt");
/// The same for code run from anonymous memory (perf's "[JIT] tid N" image), 1561 samples.
const JIT_SYM_TAB: &str = include_str!("../../../tests/fixtures/perf/jit_sym_tab.txt");
/// The same recording with `--sort dso` in perf's default aligned layout.
const JIT_DSO_ALIGNED: &str = include_str!("../../../tests/fixtures/perf/jit_dso_aligned.txt");
/// A Rust program, aligned layout, `--sort dso,sym`, trimmed to its first 34 entries.
const RUST_SYM_ALIGNED: &str = include_str!("../../../tests/fixtures/perf/rust_sym_aligned.txt");
/// A recording without samples: perf prints only two comment lines.
const EMPTY_TAB: &str = include_str!("../../../tests/fixtures/perf/empty_tab.txt");

fn total(lines: &[ReportLine]) -> u64 {
    lines.iter().map(|l| l.samples.unwrap()).sum()
}

#[test]
fn tabbed_symbols_with_kernel_addresses_and_spaces() {
    let lines = parse_lines(YES_SYM_TAB, true).unwrap();
    assert_eq!(lines.len(), 36);
    assert_eq!(total(&lines), 1011, "matches perf record's '(1011 samples)'");
    let first = &lines[0];
    assert_eq!(first.image, "[kernel.kallsyms]");
    assert_eq!(first.symbol.as_deref(), Some("do_syscall_64"));
    assert_eq!(first.level, Some('k'));
    assert_eq!(first.samples, Some(305));
    assert!((first.percent - 30.17).abs() < 1e-9);
    let libc = &lines[1];
    assert_eq!(
        (libc.image.as_str(), libc.symbol.as_deref(), libc.level),
        ("libc.so.6", Some("__GI___libc_write"), Some('.'))
    );
    let memfd = lines.iter().find(|l| l.image.starts_with("memfd:")).unwrap();
    assert_eq!(memfd.image, "memfd:sealed-91173221a7ea (deleted)");
    assert_eq!(memfd.symbol.as_deref(), Some("0x000000000007156a"));
    assert_eq!(event_name(YES_SYM_TAB).as_deref(), Some("cpu-clock"));
}

#[test]
fn summary_merges_addresses_and_sums_images() {
    let lines = parse_lines(YES_SYM_TAB, true).unwrap();
    let s = summarize(&lines, 5).unwrap();
    assert_eq!(s.samples, 1011);
    let images: Vec<&str> = s.images.iter().map(|e| e.image.as_str()).collect();
    assert_eq!(images, ["[kernel.kallsyms]", "libc.so.6", "yes", "memfd:sealed-91173221a7ea (deleted)"]);
    assert!((s.images[0].share_pct - 754.0 * 100.0 / 1011.0).abs() < 1e-9);
    assert!(s.images.iter().all(|e| e.symbol.is_none()));
    assert_eq!(s.symbols.len(), 5);
    // `yes` is stripped: 104 of its 105 samples are bare addresses, merged into one entry
    // (fourth, after do_syscall_64, __GI___libc_write and vfs_write); one is `write@plt`.
    let yes = &s.symbols[3];
    assert_eq!((yes.image.as_str(), yes.symbol.as_deref()), ("yes", Some(UNKNOWN_SYMBOL)));
    assert!((yes.share_pct - 104.0 * 100.0 / 1011.0).abs() < 1e-9);
    let all = summarize(&lines, usize::MAX).unwrap();
    assert!(all.symbols.iter().any(|e| e.symbol.as_deref() == Some("write@plt")));
    assert_eq!(all.symbols.iter().filter(|e| e.symbol.as_deref() == Some(UNKNOWN_SYMBOL)).count(), 2);
    assert_sorted(&s.images);
    assert_sorted(&s.symbols);
}

fn assert_sorted(entries: &[ProfileEntry]) {
    assert!(entries.windows(2).all(|w| w[0].share_pct >= w[1].share_pct), "{entries:?}");
    assert!(entries.iter().all(|e| (0.0..=100.0).contains(&e.share_pct)), "{entries:?}");
}

#[test]
fn symbol_totals_per_image_equal_the_dso_report() {
    let by_symbol = summarize(&parse_lines(JIT_SYM_TAB, true).unwrap(), 100).unwrap();
    assert_eq!(by_symbol.samples, 1561, "matches perf record's '(1561 samples)'");
    let by_dso = parse_report(JIT_DSO_ALIGNED, false).unwrap();
    assert_eq!(by_symbol.images.len(), by_dso.len());
    for (a, b) in by_symbol.images.iter().zip(&by_dso) {
        assert_eq!(a.image, b.image);
        assert!((a.share_pct - b.share_pct).abs() < 1e-9, "{a:?} {b:?}");
    }
    assert_eq!(by_dso[0].image, "[JIT] tid 6655");
    assert_eq!(by_symbol.symbols[0].symbol.as_deref(), Some(UNKNOWN_SYMBOL));
}

#[test]
fn aligned_dso_report_matches_perf_percentages() {
    let lines = parse_lines(JIT_DSO_ALIGNED, false).unwrap();
    let images: Vec<&str> = lines.iter().map(|l| l.image.as_str()).collect();
    assert_eq!(images, ["[JIT] tid 6655", "[kernel.kallsyms]", "rh-paging-bin", "[vdso]", "libc.so.6"]);
    assert_eq!(total(&lines), 1561);
    for (line, entry) in lines.iter().zip(parse_report(JIT_DSO_ALIGNED, false).unwrap()) {
        assert!((line.percent - entry.share_pct).abs() <= 0.005 + 1e-9, "{line:?} {entry:?}");
        assert!(line.symbol.is_none() && line.level.is_none());
    }
}

#[test]
fn aligned_rust_symbols_keep_their_spaces() {
    let lines = parse_lines(RUST_SYM_ALIGNED, true).unwrap();
    assert_eq!(lines.len(), 34);
    let find = |sym: &str| lines.iter().find(|l| l.symbol.as_deref() == Some(sym));
    let write_str = find("<alloc::string::String as core::fmt::Write>::write_str").unwrap();
    assert_eq!((write_str.image.as_str(), write_str.samples), ("g", Some(28)));
    let generic = "<alloc::raw_vec::RawVecInner<_>>::reserve::do_reserve_and_handle::<alloc::alloc::Global>";
    assert_eq!(find(generic).unwrap().samples, Some(9));
    assert_eq!(find("cfree@GLIBC_2.2.5").unwrap().image, "libc.so.6");
    assert_eq!(find("racehorse_engines::paging::thrash").unwrap().image, "rh-paging-bin");
    assert_eq!(find("pv_native_safe_halt").unwrap().level, Some('k'));
    assert_eq!(event_name(RUST_SYM_ALIGNED).as_deref(), Some("cpu-clock"));
}

#[test]
fn no_samples_is_an_empty_profile() {
    let lines = parse_lines(EMPTY_TAB, true).unwrap();
    assert!(lines.is_empty());
    assert_eq!(summarize(&lines, 10).unwrap(), Summary::default());
    assert_eq!(event_name(EMPTY_TAB), None);
    assert!(parse_report("", true).unwrap().is_empty());
}

#[test]
fn unknown_images_and_layouts_without_header() {
    let text = "     0.50%             5  [unknown]          [k] 0xffffffffffffffff\n\
                \x20    0.25%             3  [unknown]          [.] 0x00007f0000001234\n";
    let lines = parse_lines(text, true).unwrap();
    assert_eq!(lines[0].image, "[unknown]");
    assert_eq!(lines[0].symbol.as_deref(), Some("0xffffffffffffffff"));
    assert_eq!(lines[1].level, Some('.'));
    let s = summarize(&lines, 10).unwrap();
    assert_eq!(s.symbols.len(), 1, "both addresses merge: {s:?}");
    assert!((s.symbols[0].share_pct - 100.0).abs() < 1e-9);

    // Without -n: no count column, in both layouts.
    let plain = "  60.00%  [kernel.kallsyms]  [k] clear_page_erms\n  40.00%  my prog  [.] f<T> as g\n";
    let lines = parse_lines(plain, true).unwrap();
    assert_eq!(lines[1].image, "my prog");
    assert_eq!(lines[1].symbol.as_deref(), Some("f<T> as g"));
    assert_eq!(lines[1].samples, None);
    assert!(summarize(&lines, 3).is_err(), "exact totals need counts");
    let shares = parse_report(plain, true).unwrap();
    assert_eq!(shares[0].share_pct, 60.0);
    let tabbed = " 70.00% \tlibc.so.6\t[.] memcpy\n 30.00% \t[unknown]\t[k] 0xffffffff81000000\n";
    let lines = parse_lines(tabbed, true).unwrap();
    assert_eq!((lines[0].samples, lines[1].image.as_str()), (None, "[unknown]"));
}

#[test]
fn malformed_lines_are_errors() {
    let err = parse_lines("# c\ngarbage here\n", true).unwrap_err();
    assert!(err.contains("line 2"), "{err}");
    assert!(parse_lines(" 12.5%  3  image-without-symbol\n", true).is_err());
    assert!(parse_lines(" 120.5%  3  img\n", false).is_err());
    assert!(parse_lines(" 12.5% \t3\t\t[k] x\n", true).is_err(), "empty image");
    assert!(parse_lines(" 12.5% \tx3\tlib\t[k] x\n", true).is_err(), "bad count");
    assert!(parse_lines(" 1.00% \t 3 \tlib\n", false).is_ok());
    assert!(parse_lines(" 1.00% \t 3 \tlib\textra\n", false).is_err());
}

#[test]
fn addresses_are_recognised() {
    assert!(is_address("0x0000000000002aa2"));
    assert!(is_address("0xffffffff81000000"));
    assert!(!is_address("0x"));
    assert!(!is_address("0xzz"));
    assert!(!is_address("main"));
}

#[test]
fn report_command_line() {
    let args: Vec<String> =
        report_args(Path::new("/w/perf.data")).iter().map(|a| a.to_string_lossy().into_owned()).collect();
    assert_eq!(
        args.join(" "),
        "report --stdio -i /w/perf.data --sort dso,sym -n -t \t --no-children -g none --percent-limit 0"
    );
}

/// Fragments that steer random text into the parsers' deeper branches.
fn report_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just(" 12.34% ".to_string()),
        Just("100%".to_string()),
        Just("\t".to_string()),
        Just("  ".to_string()),
        Just("\n".to_string()),
        Just("[k] ".to_string()),
        Just("[.]".to_string()),
        Just("[".to_string()),
        Just("# Overhead  Samples  Shared Object\n".to_string()),
        Just("# Samples: 1K of event '".to_string()),
        Just("0x00ff".to_string()),
        "[0-9]{1,25}",
        "\\PC{0,6}",
    ];
    proptest::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

proptest! {
    #[test]
    fn parsers_never_panic_on_arbitrary_text(text in "\\PC*", with_symbols: bool) {
        let _ = parse_lines(&text, with_symbols);
        let _ = parse_report(&text, with_symbols);
        let _ = event_name(&text);
    }

    #[test]
    fn parsed_reports_summarize_sanely(text in report_like(), with_symbols: bool, top in 0usize..8) {
        let _ = event_name(&text);
        if let Ok(entries) = parse_report(&text, with_symbols) {
            prop_assert!(entries.windows(2).all(|w| w[0].share_pct >= w[1].share_pct));
            prop_assert!(entries.iter().all(|e| e.share_pct >= 0.0 && e.share_pct <= 100.005));
        }
        if let Ok(lines) = parse_lines(&text, with_symbols) {
            if let Ok(s) = summarize(&lines, top) {
                prop_assert!(s.images.len() <= top && s.symbols.len() <= top);
                prop_assert!(s.images.iter().chain(&s.symbols).all(|e| (0.0..=100.0).contains(&e.share_pct)));
            }
        }
    }
}
