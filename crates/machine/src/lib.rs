//! racehorse-machine: reads /proc and sysfs, captures the environment, and controls CPUs and caches behind a Guard.
pub mod cgroup;
pub mod cpucache;
pub mod cpuctl;
pub mod diskstats;
pub mod env;
mod envlayout;
mod envplatform;
mod envprobe;
mod envtuning;
pub mod error;
pub mod exclusivity;
pub mod fixtures;
pub mod guard;
pub mod ioworkers;
pub mod knobs;
pub mod kvm;
pub mod loadavg;
pub mod lock;
pub mod meminfo;
pub mod mounts;
pub mod path;
pub mod pidstat;
pub mod procstat;
pub mod recovery;
pub mod root;
pub mod rusage;
pub mod sampler;
pub mod scratch;
mod shell;
pub mod signals;
mod state;
pub mod tenants;
#[cfg(test)]
mod testutil;
pub mod vmstat;
pub mod zram;

pub use cgroup::{detect_memory_cgroup, CgroupLimit, MemoryCgroup, MIN_LIMIT_BYTES};
pub use cpuctl::{detect_method, online_cpus, parse_cpu_list, possible_cpus, CpuMethod};
pub use env::Environment;
pub use error::MachineError;
pub use exclusivity::Exclusivity;
pub use guard::{default_state_file, recover, Guard};
pub use knobs::{
    block_queue_dir, choices, device_for_devnum, device_of_path, governor_files, selected_value, thp_file,
};
pub use lock::{LockError, MachineLock};
pub use root::SysRoot;
pub use sampler::{point, RawSample};
pub use signals::{install_signal_flag, StopSignals};
