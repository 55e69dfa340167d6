//! Tests of the folding of `perf script -F comm,pid,tid,ip,sym,dso --no-inline` output, on
//! text captured from perf 6.1 on a 2-vCPU VM.

use super::*;
use proptest::prelude::*;

/// `perf record -a -g -e cpu-clock -F 999` while a C program ran `parent()` calling
/// `leaf_a` and `leaf_b` (2:1) beside `yes > /dev/null` and a Rust build; the first 12
/// samples of each process (73 in all; one of them without any frame).
const FP: &str = include_str!("../../tests/fixtures/perf/script_fp.txt");
/// Without call chains (`perf record -a` without -g): one line per sample, 40 samples.
const NONE: &str = include_str!("../../tests/fixtures/perf/script_none.txt");
/// `--call-graph dwarf` of the same program, 15 samples.
const DWARF: &str = include_str!("../../tests/fixtures/perf/script_dwarf.txt");

fn count(f: &Folded, stack: &str) -> u64 {
    f.stacks.get(stack).copied().unwrap_or(0)
}

fn with_frame(f: &Folded, part: &str) -> u64 {
    f.stacks.iter().filter(|(s, _)| s.contains(part)).map(|(_, n)| n).sum()
}

#[test]
fn frame_pointer_chains_fold_outermost_first() {
    let f = fold_text(FP);
    assert_eq!(f.samples, 73);
    assert_eq!(f.stacks.values().sum::<u64>(), 73);
    let a = "h2;__libc_start_call_main;main;parent;leaf_a";
    let b = "h2;__libc_start_call_main;main;parent;leaf_b";
    assert_eq!((count(&f, a), count(&f, b)), (8, 3), "{:#?}", f.stacks);
    assert_eq!(with_frame(&f, ";parent;"), 11);
    // The dynamic loader's sample: a symbol, then a frame perf knows nothing about.
    assert_eq!(count(&f, "h2;[unknown];handle_amd"), 1);
}

#[test]
fn kernel_frames_are_marked_and_process_names_keep_their_spaces() {
    let f = fold_text(FP);
    assert_eq!(
        with_frame(&f, "entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k]"),
        with_frame(&f, "do_syscall_64_[k]")
    );
    let yes: u64 = f.stacks.iter().filter(|(s, _)| s.starts_with("yes;")).map(|(_, n)| n).sum();
    assert_eq!(yes, 12);
    assert!(f
        .stacks
        .keys()
        .any(|s| s.starts_with("yes;__GI___libc_write;entry_SYSCALL_64_after_hwframe_[k];")));
    assert!(!f.stacks.keys().any(|s| s.contains("__GI___libc_write_[k]")), "libc is user space");
    let llvm: u64 = f.stacks.iter().filter(|(s, _)| s.starts_with("opt cgu.15;")).map(|(_, n)| n).sum();
    assert_eq!(llvm, 11, "plus the sample without frames");
    assert_eq!(count(&f, "opt cgu.15"), 1, "a sample without frames is its process alone");
    assert!(f.stacks.keys().all(|s| !s.contains(";;") && !s.ends_with(';')), "{:#?}", f.stacks);
}

#[test]
fn unresolved_frames_are_named_by_their_image() {
    let f = fold_text(FP);
    // perf prints `[unknown] (/usr/lib/gcc/x86_64-linux-gnu/12/cc1)` for stripped cc1.
    assert!(f.stacks.keys().any(|s| s.starts_with("cc1;") && s.contains("[cc1]")), "{:#?}", f.stacks);
    assert!(f.stacks.keys().any(|s| s.contains(";[unknown]")));
}

#[test]
fn samples_without_call_chains_are_process_and_function() {
    let f = fold_text(NONE);
    assert_eq!(f.samples, 40);
    assert_eq!(count(&f, "h2;leaf_a"), 8, "{:#?}", f.stacks);
    assert!(f.stacks.keys().all(|s| s.matches(';').count() == 1), "{:#?}", f.stacks);
    assert!(count(&f, "cc1;rtx_alloc") >= 1);
}

#[test]
fn dwarf_chains_reach_the_entry_point() {
    let f = fold_text(DWARF);
    assert_eq!(f.samples, 15);
    assert!(f.stacks.keys().all(|s| s.starts_with("h2;")));
    let full = "h2;_start;__libc_start_main@@GLIBC_2.34;__libc_start_call_main;main;parent;leaf_a";
    assert!(count(&f, full) >= 3, "{:#?}", f.stacks);
}

#[test]
fn frame_names_cover_perfs_spellings() {
    assert_eq!(frame_name("ffffffff821ef666 do_syscall_64 ([kernel.kallsyms])"), "do_syscall_64_[k]");
    assert_eq!(frame_name("ffffffffc0a1b2c3 xfs_iread ([xfs])"), "xfs_iread_[k]");
    assert_eq!(frame_name("7fff1234 __vdso_clock_gettime ([vdso])"), "__vdso_clock_gettime");
    assert_eq!(frame_name("0 [unknown] ([unknown])"), "[unknown]");
    assert_eq!(frame_name("ffffffff81000000 [unknown] ([kernel.kallsyms])"), "[kernel.kallsyms]_[k]");
    assert_eq!(frame_name("1234 0x0000000000001234 (/usr/bin/yes)"), "[yes]");
    assert_eq!(frame_name("7156a [unknown] (memfd:sealed-91 (deleted))"), "[memfd:sealed-91 (deleted)]");
    assert_eq!(frame_name("401000 foo(int) const (/opt/a b/app)"), "foo(int) const");
    assert_eq!(frame_name("401000 <[u8; 32] as Debug>::fmt (/x)"), "<[u8: 32] as Debug>::fmt");
    assert_eq!(frame_name("401000"), "[unknown]");
    assert_eq!(frame_name("401000 orphan"), "orphan");
}

#[test]
fn headers_split_at_the_pid_and_tid() {
    assert_eq!(split_header("opt cgu.15  2498/2505  "), ("opt cgu.15".to_string(), ""));
    assert_eq!(
        split_header("             hot  2923/2923       5634d50e915a leaf_a (/t/hot)").1,
        "5634d50e915a leaf_a (/t/hot)"
    );
    assert_eq!(split_header("worker 3 12/12 ").0, "worker 3");
    assert_eq!(split_header(" 12/13 ").0, "[unknown]");
    assert_eq!(split_header("a;b").0, "a:b");
}

#[test]
fn storage_is_bounded_by_share_and_count() {
    let mut f = Folded::default();
    f.stacks.insert("p;big".into(), 9_000);
    f.stacks.insert("p;edge".into(), 5); // exactly 0.05% of 10 000
    f.stacks.insert("p;small".into(), 4);
    f.stacks.insert("p;rest".into(), 991);
    f.samples = 10_000;
    let (kept, dropped) = bounded(&f);
    let names: Vec<&str> = kept.iter().map(|s| s.stack.as_str()).collect();
    assert_eq!(names, ["p;big", "p;rest", "p;edge"]);
    assert_eq!(dropped, 4);
    let mut many = Folded::default();
    for i in 0..(MAX_STACKS as u64 + 10) {
        many.stacks.insert(format!("p;f{i:05}"), 10 + i % 3);
    }
    many.samples = many.stacks.values().sum();
    let (kept, dropped) = bounded(&many);
    assert_eq!(kept.len(), MAX_STACKS);
    assert_eq!(kept.iter().map(|s| s.samples).sum::<u64>() + dropped, many.samples);
    assert!(kept.windows(2).all(|w| w[0].samples >= w[1].samples));
    assert_eq!(bounded(&Folded::default()), (vec![], 0));
    let mut long = Folded::default();
    let frame = "x".repeat(100_000);
    for i in 0..20u64 {
        long.stacks.insert(format!("p;{i:02};{frame}"), 100 - i);
    }
    long.samples = long.stacks.values().sum();
    let (kept, dropped) = bounded(&long);
    assert_eq!(kept.len(), 10, "1 MiB holds ten stacks of 100 kB");
    assert_eq!(dropped, (81..=90).sum::<u64>(), "the ten smallest");
}

#[test]
fn script_command_line() {
    let args: Vec<String> =
        script_args(Path::new("/w/perf.data")).iter().map(|a| a.to_string_lossy().into()).collect();
    assert_eq!(args.join(" "), "script -i /w/perf.data -F comm,pid,tid,ip,sym,dso --no-inline");
}

proptest! {
    #[test]
    fn folding_never_panics_and_counts_every_header(text in "(\\PC{0,40}|\t\\PC{0,40}|[a-z ]{0,8}[0-9]{1,3}/[0-9]{1,3}.{0,20}|\t[0-9a-f]{1,16} [a-z_()\\[\\]; ]{0,20}\\([^)]{0,12}\\)|)(\n(\\PC{0,40}|\t\\PC{0,40}|\t[0-9a-f]{1,8} [a-z(]{0,9} \\([a-z.\\[\\]]{0,9}\\)|)){0,30}") {
        let f = fold_text(&text);
        assert_eq!(f.stacks.values().sum::<u64>(), f.samples);
        assert!(f.stacks.keys().all(|s| !s.is_empty()));
        let (kept, dropped) = bounded(&f);
        assert_eq!(kept.iter().map(|s| s.samples).sum::<u64>() + dropped, f.samples);
    }

    #[test]
    fn arbitrary_bytes_fold_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let text = String::from_utf8_lossy(&bytes);
        let f = fold_text(&text);
        assert_eq!(f.stacks.values().sum::<u64>(), f.samples);
    }
}
