//! racehorse-machine: reads /proc and sysfs, captures the environment, and controls CPUs and caches behind a Guard.
pub mod rusage;
