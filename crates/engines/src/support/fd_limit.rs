//! Room for many open descriptors: the engines that hold one socket or file per client
//! (fileserver, net) raise the process's soft limit before their cells start.

/// Raises the soft RLIMIT_NOFILE towards `want` (never above the hard limit).
pub fn raise_fd_limit(want: usize) {
    // SAFETY: getrlimit/setrlimit on a struct we own.
    unsafe {
        let mut rl: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) == 0 && (rl.rlim_cur as usize) < want {
            rl.rlim_cur = (want as libc::rlim_t).min(rl.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &rl);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The soft and hard RLIMIT_NOFILE now.
    fn fd_limits() -> Option<(u64, u64)> {
        // SAFETY: getrlimit on a struct we own.
        unsafe {
            let mut rl: libc::rlimit = std::mem::zeroed();
            (libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) == 0)
                .then_some((rl.rlim_cur as u64, rl.rlim_max as u64))
        }
    }

    // Other tests of this process may raise the limit at the same time: only rises are checked.
    #[test]
    fn the_soft_limit_rises_towards_the_want_and_never_falls() {
        let Some((soft, hard)) = fd_limits() else { panic!("getrlimit fails") };
        raise_fd_limit(0);
        let (now, now_hard) = fd_limits().expect("getrlimit");
        assert!(now >= soft, "a smaller want lowers nothing");
        assert_eq!(now_hard, hard, "the hard limit stays");
        let want = (soft + 16).min(hard);
        raise_fd_limit(want as usize);
        assert!(fd_limits().is_some_and(|l| l.0 >= want), "raised to the want (capped by the hard limit)");
        raise_fd_limit(usize::MAX);
        assert_eq!(fd_limits().map(|l| l.0), Some(hard), "never above the hard limit");
    }
}
