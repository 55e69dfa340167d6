//! CPU time of the calling thread, of this process and of its reaped children (getrusage).

/// User and kernel CPU seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTime {
    pub user_s: f64,
    pub kernel_s: f64,
}

impl CpuTime {
    /// `self - earlier`, clamped at zero.
    pub fn since(self, earlier: CpuTime) -> CpuTime {
        CpuTime {
            user_s: (self.user_s - earlier.user_s).max(0.0),
            kernel_s: (self.kernel_s - earlier.kernel_s).max(0.0),
        }
    }
    pub fn total_s(self) -> f64 {
        self.user_s + self.kernel_s
    }
}

fn tv_secs(tv: libc::timeval) -> f64 {
    tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6
}

fn rusage(who: libc::c_int) -> CpuTime {
    // SAFETY: getrusage writes into the zeroed struct we own; `who` is a valid constant.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(who, &mut ru) };
    if rc != 0 {
        return CpuTime::default();
    }
    CpuTime { user_s: tv_secs(ru.ru_utime), kernel_s: tv_secs(ru.ru_stime) }
}

/// CPU time of the calling thread (RUSAGE_THREAD).
pub fn thread_cpu() -> CpuTime {
    rusage(libc::RUSAGE_THREAD)
}

/// CPU time of this whole process, all threads (RUSAGE_SELF).
pub fn process_cpu() -> CpuTime {
    rusage(libc::RUSAGE_SELF)
}

/// CPU time of terminated and waited-for children (RUSAGE_CHILDREN).
pub fn children_cpu() -> CpuTime {
    rusage(libc::RUSAGE_CHILDREN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_thread_accumulates_cpu() {
        let before = thread_cpu();
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while start.elapsed().as_millis() < 50 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let used = thread_cpu().since(before);
        assert!(used.total_s() > 0.01, "a 50 ms spin should use CPU, got {used:?}");
        assert!(process_cpu().total_s() >= used.total_s());
    }
}
