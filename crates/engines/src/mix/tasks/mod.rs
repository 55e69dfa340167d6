//! The mix engine's task bodies (re-aim 7's test names): each task is a function doing a
//! fixed amount of work, so that a job's cost does not depend on time or load. Disk tasks
//! work in the cell's directory; network tasks talk to 127.0.0.1 only.

mod cpu;
mod disk;
mod sys;

pub use disk::create_shared;

use crate::support::rng::SplitMix64;
use std::path::PathBuf;

/// What a task may use: its user's directory, sizes, a private random stream and buffers.
pub struct TaskEnv {
    /// A directory of this user's own (temporary files live here).
    pub dir: PathBuf,
    /// The shared read-only data file of the load point (disk_rd, disk_rr, disk_src).
    pub shared_file: PathBuf,
    /// Size of each disk task's file in 1 KiB blocks (re-aim's disk_iteration_count).
    pub disk_blocks: u64,
    /// The user's random stream (offsets, data).
    pub rng: SplitMix64,
    /// A scratch byte counter so that the optimizer cannot drop a task's work.
    pub sink: u64,
}

/// A task body: does its fixed work or says what failed.
pub type TaskFn = fn(&mut TaskEnv) -> Result<(), String>;

/// Every task a workfile may name, with its body and what it does (for docs and errors).
pub const TASKS: &[(&str, TaskFn, &str)] = &[
    ("add_int", cpu::add_int, "3,400,000 loops of 12 int additions"),
    ("add_long", cpu::add_long, "3,400,000 loops of 12 64-bit additions"),
    ("add_short", cpu::add_short, "600,000 loops of 12 16-bit additions"),
    ("add_double", cpu::add_double, "1,000,000 loops of 12 double additions"),
    ("div_int", cpu::div_int, "75,000 loops of 12 int divisions"),
    ("div_long", cpu::div_long, "75,000 loops of 12 64-bit divisions"),
    ("div_short", cpu::div_short, "45,000 loops of 12 16-bit divisions"),
    ("div_double", cpu::div_double, "380,000 loops of 12 double divisions"),
    ("mul_int", cpu::mul_int, "20,000 loops of 12 int multiplications"),
    ("mul_long", cpu::mul_long, "70,000 loops of 12 64-bit multiplications"),
    ("mul_short", cpu::mul_short, "50,000 loops of 12 16-bit multiplications"),
    ("mul_double", cpu::mul_double, "680,000 loops of 12 double multiplications"),
    ("jmp_test", cpu::jmp_test, "1000 early exits through 16 nested calls"),
    ("matrix_rtns", cpu::matrix_rtns, "20 products of 24×24 double matrices"),
    ("array_rtns", cpu::array_rtns, "500 passes of sums and searches over a 10,000-int array"),
    ("new_raph", cpu::new_raph, "Newton-Raphson square roots of 40 × 100 numbers"),
    ("num_rtns_1", cpu::num_rtns_1, "100 × 20 rounds of integer and floating library functions"),
    ("series_1", cpu::series_1, "a 100,000-term series for pi and e"),
    ("trig_rtns", cpu::trig_rtns, "100 × 460 sin, cos, tan, atan evaluations"),
    ("sieve", cpu::sieve, "5 sieves of Eratosthenes up to 1,000,000"),
    ("sort_rtns_1", cpu::sort_rtns_1, "10 sorts of 10,000 random ints"),
    ("string_rtns", cpu::string_rtns, "1500 rounds of copy, compare, search and format of strings"),
    ("mem_rtns_1", cpu::mem_rtns_1, "4000 rounds of memset, memcpy and memcmp of 8 KiB"),
    ("mem_rtns_2", cpu::mem_rtns_2, "100 rounds of allocate, touch and free of 64 KiB"),
    ("misc_rtns_1", cpu::misc_rtns_1, "400 × getpid, time, uname and getrusage"),
    ("ram_copy", cpu::ram_copy, "25,000 copies of 1 KiB between two buffers"),
    ("creat_clo", sys::creat_clo, "1000 × creat + close of one file"),
    ("dir_rtns_1", sys::dir_rtns_1, "10,000 readdir calls on /bin, rewinding at its end"),
    ("link_test", sys::link_test, "40 × link + unlink of a file"),
    ("signal_test", sys::signal_test, "1000 × SIGUSR2 to itself (raise), caught by a handler"),
    (
        "page_test",
        sys::page_test,
        "map 1 MiB, then 150 rounds of giving back 64 KiB and refaulting it page by page",
    ),
    ("brk_test", sys::brk_test, "1000 rounds of growing and shrinking the heap by 64 KiB (sbrk)"),
    (
        "shared_memory",
        sys::shared_memory,
        "20 × SysV shared memory of 4 KiB: get, attach, write, detach, remove",
    ),
    ("stream_pipe", sys::stream_pipe, "100 round trips of 1 KiB over a stream socketpair"),
    ("dgram_pipe", sys::dgram_pipe, "100 round trips of 1 KiB over a datagram socketpair"),
    ("tcp_test", sys::tcp_test, "90 round trips of 1 KiB over a TCP loopback connection"),
    ("udp_test", sys::udp_test, "55 round trips of 1 KiB UDP datagrams on loopback"),
    ("fork_test", sys::fork_test, "100 × fork, child _exit, wait"),
    ("exec_test", sys::exec_test, "5 × fork, exec /bin/true, wait"),
    ("disk_wrt", disk::disk_wrt, "write a file of disk_blocks 1 KiB blocks"),
    ("disk_rd", disk::disk_rd, "read the shared file sequentially in 1 KiB blocks"),
    ("disk_rr", disk::disk_rr, "disk_blocks 1 KiB reads at random offsets of the shared file"),
    ("disk_rw", disk::disk_rw, "write a file, then disk_blocks 1 KiB writes at random offsets"),
    ("disk_cp", disk::disk_cp, "copy the shared file in 1 KiB blocks"),
    ("disk_src", disk::disk_src, "list a directory of 100 files 25 times, looking for names"),
    ("disk_brw", disk::disk_brw, "disk_rw with 4 KiB blocks"),
    ("disk_bcp", disk::disk_bcp, "disk_cp with 4 KiB blocks"),
    ("sync_disk_wrt", disk::sync_disk_wrt, "write half of disk_blocks with O_SYNC"),
    ("sync_disk_rw", disk::sync_disk_rw, "random writes over half of disk_blocks with O_SYNC"),
    ("sync_disk_cp", disk::sync_disk_cp, "copy half of the shared file to an O_SYNC file"),
    ("sync_disk_update", disk::sync_disk_update, "random read-modify-write of blocks with O_SYNC"),
];

/// The index of task `name` in [`TASKS`].
pub fn index_of(name: &str) -> Option<usize> {
    TASKS.iter().position(|t| t.0 == name)
}

/// The valid task names, comma-separated (for error messages).
pub fn names() -> String {
    TASKS.iter().map(|t| t.0).collect::<Vec<_>>().join(", ")
}

/// Runs task `index` once.
pub fn run(index: usize, env: &mut TaskEnv) -> Result<(), String> {
    let (name, body, _) = TASKS[index];
    body(env).map_err(|e| format!("{name}: {e}"))
}

/// An `io::Error` as text with what was being done.
pub(crate) fn ioe(what: &str) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
}

#[cfg(test)]
mod tests;
