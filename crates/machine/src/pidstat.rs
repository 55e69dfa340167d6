//! The one parser of a process's or thread's stat line (`/proc/PID/stat`,
//! `/proc/PID/task/TID/stat`, proc(5)): named fields instead of positions counted by hand at
//! each reader. `comm` may hold spaces and parentheses, so it runs from the first `(` to the
//! last `)`; the numbered fields follow the last `)`.

use std::path::Path;

/// The fields of a stat line that racehorse reads (numbered as in proc(5)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PidStat {
    /// Field 1: the process (or thread) id.
    pub pid: u32,
    /// Field 2: the command name, without its parentheses.
    pub comm: String,
    /// Field 3: R, S, D, Z, T, t, X, I …
    pub state: char,
    /// Field 4: the parent's pid.
    pub ppid: u32,
    /// Field 5: the process group.
    pub pgrp: i32,
    /// Field 9: the kernel's `PF_*` flags.
    pub flags: u64,
    /// Field 14: user-mode CPU, in clock ticks.
    pub utime_ticks: u64,
    /// Field 15: kernel-mode CPU, in clock ticks.
    pub stime_ticks: u64,
    /// Field 16: user-mode CPU of the children it waited for, in clock ticks (negative read as 0).
    pub cutime_ticks: u64,
    /// Field 17: kernel-mode CPU of the children it waited for, in clock ticks (negative read as 0).
    pub cstime_ticks: u64,
    /// Field 22: the start time, in clock ticks since boot (tells a reused pid apart).
    pub start_ticks: u64,
    /// Field 43: time spent running a guest's vCPU, in clock ticks; None on kernels without it.
    pub guest_ticks: Option<u64>,
}

impl PidStat {
    /// Parses a stat line; None when it is not one (truncated, no parentheses, a field that
    /// is not a number).
    pub fn parse(text: &str) -> Option<PidStat> {
        let open = text.find('(')?;
        let close = text.rfind(')')?;
        let comm = text.get(open + 1..close)?.to_string();
        let pid = text.get(..open)?.trim().parse().ok()?;
        let rest: Vec<&str> = text.get(close + 1..)?.split_ascii_whitespace().collect();
        // Field k of proc(5), k >= 3, is rest[k - 3].
        let word = |k: usize| rest.get(k - 3).copied();
        let unsigned = |k: usize| word(k).and_then(|w| w.parse::<u64>().ok());
        let clamped = |k: usize| word(k).and_then(|w| w.parse::<i64>().ok()).map(|v| v.max(0) as u64);
        let mut state = word(3)?.chars();
        let (state, None) = (state.next()?, state.next()) else { return None };
        Some(PidStat {
            pid,
            comm,
            state,
            ppid: u32::try_from(unsigned(4)?).ok()?,
            pgrp: word(5)?.parse().ok()?,
            flags: unsigned(9)?,
            utime_ticks: unsigned(14)?,
            stime_ticks: unsigned(15)?,
            cutime_ticks: clamped(16)?,
            cstime_ticks: clamped(17)?,
            start_ticks: unsigned(22)?,
            guest_ticks: unsigned(43),
        })
    }

    /// Reads and parses the stat file at `path`; None when it cannot be read or parsed (the
    /// process may just have ended).
    pub fn read(path: &Path) -> Option<PidStat> {
        PidStat::parse(&std::fs::read_to_string(path).ok()?)
    }

    /// `<proc_dir>/<pid>/stat`.
    pub fn of(proc_dir: &Path, pid: u32) -> Option<PidStat> {
        PidStat::read(&proc_dir.join(pid.to_string()).join("stat"))
    }

    /// Its own CPU, user and kernel: utime + stime.
    pub fn own_ticks(&self) -> u64 {
        self.utime_ticks + self.stime_ticks
    }

    /// True when it has ended: a zombie not yet reaped (Z) or dead (X).
    pub fn has_ended(&self) -> bool {
        matches!(self.state, 'Z' | 'X')
    }
}

/// True when `pid` under `proc_dir` runs (a zombie or an unreadable stat counts as ended).
pub fn running(proc_dir: &Path, pid: u32) -> bool {
    PidStat::of(proc_dir, pid).is_some_and(|s| !s.has_ended())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stat line of proc(5)'s 52 fields with `comm`, the state, and fields 14-17, 22, 43.
    fn line(comm: &str, state: char) -> String {
        let mut f: Vec<String> = (3..=52).map(|k| format!("{}", k * 10)).collect();
        f[0] = state.to_string();
        f[13] = "-5".to_string(); // cutime of a child that was waited for oddly: read as 0
        format!("4242 ({comm}) {}\n", f.join(" "))
    }

    #[test]
    fn named_fields_are_read_from_their_positions() {
        let s = PidStat::parse(&line("fio", 'S')).unwrap();
        assert_eq!(
            (s.pid, s.comm.as_str(), s.state, s.ppid, s.pgrp, s.flags),
            (4242, "fio", 'S', 40, 50, 90)
        );
        assert_eq!((s.utime_ticks, s.stime_ticks, s.cutime_ticks, s.cstime_ticks), (140, 150, 0, 170));
        assert_eq!((s.start_ticks, s.guest_ticks, s.own_ticks()), (220, Some(430), 290));
        assert!(!s.has_ended());
        assert!(PidStat::parse(&line("x", 'Z')).unwrap().has_ended());
    }

    #[test]
    fn comm_may_hold_spaces_and_parentheses() {
        for comm in ["my (odd) prog", "a) b", "((", ")", "", "CPU 0/KVM"] {
            let s = PidStat::parse(&line(comm, 'R')).unwrap_or_else(|| panic!("{comm:?}"));
            assert_eq!((s.comm.as_str(), s.state, s.start_ticks), (comm, 'R', 220), "{comm:?}");
        }
    }

    #[test]
    fn a_real_line_and_short_or_broken_lines() {
        let real = "1 (systemd) S 0 1 1 0 -1 4194560 35291 1393946 101 1196 159 278 6279 2077 20 0 1 0 \
                    21 23400448 3214 18446744073709551615 1 1 0 0 0 0 671173123 4096 1260 0 0 0 17 1 0 0 0 0 \
                    0 0 0 0 0 0 0 0 0";
        let s = PidStat::parse(real).unwrap();
        assert_eq!(
            (s.comm.as_str(), s.ppid, s.utime_ticks, s.stime_ticks, s.start_ticks),
            ("systemd", 0, 159, 278, 21)
        );
        assert_eq!(s.guest_ticks, Some(0));
        // An old kernel's line ends before guest_time.
        let old: String = real.split(' ').take(40).collect::<Vec<_>>().join(" ");
        assert_eq!(PidStat::parse(&old).unwrap().guest_ticks, None);
        for bad in
            ["", "garbage", "1 (x) S 0 1", "x (y) S 0 1 1 0 -1 0 0 0 0 0 1 1 0 0 0 0 1 0 5", "1 (x) SS 0"]
        {
            assert_eq!(PidStat::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn this_process_is_running_and_a_missing_one_is_not() {
        let me = std::process::id();
        let s = PidStat::of(Path::new("/proc"), me).unwrap();
        assert_eq!((s.pid, s.ppid), (me, std::os::unix::process::parent_id()));
        assert!(running(Path::new("/proc"), me));
        assert!(!running(Path::new("/proc"), u32::MAX));
    }
}
