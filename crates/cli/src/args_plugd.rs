//! Command-line types of `racehorse plugd` (clap derive).

use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// Real CPU hotplug through /sys/devices/system/cpu/cpuN/online (root)
    Sysfs,
    /// Resize the cpuset.cpus of --cgroup DIR (containers; one service without touching the host)
    Cpuset,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum MemoryArg {
    /// The CMM balloon (/proc/sys/vm/cmm_pages) when the machine has one
    Auto,
    /// No memory control
    Off,
    /// Online/offline sysfs memory blocks, ZONE_MOVABLE first (invasive: opt-in)
    Blocks,
}

#[derive(Args, Debug)]
#[command(
    args_conflicts_with_subcommands = true,
    long_about = "A CPU and memory hotplug daemon that reads cpuplugd.conf files (UPDATE, CPU_MIN, CPU_MAX, \
                  HOTPLUG, HOTUNPLUG, CMM_*, MEMPLUG, MEMUNPLUG and user variables; see docs/plugd.md). Every \
                  UPDATE seconds it samples /proc, evaluates HOTPLUG (which wins) and HOTUNPLUG and plugs the lowest \
                  offline CPU or unplugs the highest online one, within CPU_MIN..CPU_MAX. SIGTERM/SIGINT restore the \
                  CPUs it found; SIGHUP reloads the config.\n\nExamples:\n  racehorse plugd check /etc/cpuplugd.conf\n  \
                  racehorse plugd -c /etc/cpuplugd.conf -f -v\n  racehorse plugd record -o trace.jsonl --count 600\n  \
                  racehorse plugd -c my.conf --replay trace.jsonl"
)]
pub struct PlugdArgs {
    #[command(subcommand)]
    pub cmd: Option<PlugdCmd>,
    /// Config file in cpuplugd.conf syntax (required to run the daemon)
    #[arg(short = 'c', long = "config", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Stay in the foreground and log to stderr (else detach and log to syslog)
    #[arg(short = 'f', long)]
    pub foreground: bool,
    /// cpuplugd's spelling of racehorse's -v/--verbose (debug lines: every decision and
    /// failed candidate); hidden, kept so that cpuplugd command lines work (docs/plugd.md)
    #[arg(short = 'V', hide = true)]
    pub verbose_cpuplugd: bool,
    /// What to size
    #[arg(long, value_enum, default_value_t = BackendArg::Sysfs)]
    pub backend: BackendArg,
    /// The cgroup directory whose cpuset.cpus the cpuset backend sizes
    #[arg(long, value_name = "DIR")]
    pub cgroup: Option<PathBuf>,
    /// Evaluate the rules over a recorded trace and print the decisions (no root, no changes)
    #[arg(long, value_name = "TRACE")]
    pub replay: Option<PathBuf>,
    /// CPUs never to touch, e.g. 2,3 (isolated and nohz_full CPUs are always left alone)
    #[arg(long, value_delimiter = ',')]
    pub exclude: Vec<u32>,
    /// Memory control
    #[arg(long, value_enum, default_value_t = MemoryArg::Auto)]
    pub memory: MemoryArg,
    /// Pid file [default: /run/racehorse-plugd.pid]
    #[arg(long, value_name = "FILE")]
    pub pid_file: Option<PathBuf>,
    /// Lock file [default: /run/lock/racehorse-plugd.lock]
    #[arg(long, value_name = "FILE")]
    pub lock_file: Option<PathBuf>,
    /// Restore state file [default: /var/lib/racehorse/plugd-restore.json]
    #[arg(long, value_name = "FILE")]
    pub state_file: Option<PathBuf>,
    /// Read and write DIR/proc and DIR/sys instead of /proc and /sys (a fake machine for
    /// trying configs; upstream honours SYSFS_ROOT for the same purpose)
    #[arg(long, value_name = "DIR", global = true)]
    pub sysroot: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum PlugdCmd {
    /// Validate a config and print its rules fully parenthesised with the values they see now
    Check { file: PathBuf },
    /// Write samples (what rules read) as JSON lines, for --replay
    Record {
        /// Output file (default: stdout)
        #[arg(short = 'o', long)]
        output: Option<PathBuf>,
        /// Time between samples, e.g. 1s, 500ms
        #[arg(long, default_value = "1s")]
        interval: String,
        /// Stop after this many samples (default: until Ctrl-C)
        #[arg(long)]
        count: Option<u64>,
    },
    /// Restore the CPUs and memory a killed plugd left changed
    Restore {
        /// Restore state file [default: /var/lib/racehorse/plugd-restore.json]
        #[arg(long, value_name = "FILE")]
        state_file: Option<PathBuf>,
    },
}
