//! The daemon's log: stderr with a timestamp in the foreground (the journal picks it up under
//! systemd), syslog (facility daemon) when detached; debug lines only with -v (or cpuplugd's -V).

use std::ffi::CString;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Info,
    Debug,
}

/// Where log lines go.
#[derive(Debug, Clone)]
pub struct Log {
    pub verbose: bool,
    pub syslog: bool,
    /// Collected lines instead of output (tests).
    pub capture: Option<std::sync::Arc<std::sync::Mutex<Vec<String>>>>,
}

impl Log {
    pub fn stderr(verbose: bool) -> Log {
        Log { verbose, syslog: false, capture: None }
    }

    /// Opens syslog under the name `racehorse-plugd`.
    pub fn to_syslog(verbose: bool) -> Log {
        static IDENT: &[u8] = b"racehorse-plugd\0";
        // SAFETY: IDENT is a static NUL-terminated string that outlives every syslog call.
        unsafe { libc::openlog(IDENT.as_ptr().cast(), libc::LOG_PID, libc::LOG_DAEMON) };
        Log { verbose, syslog: true, capture: None }
    }

    pub fn captured() -> (Log, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        (Log { verbose: true, syslog: false, capture: Some(lines.clone()) }, lines)
    }

    pub fn write(&self, level: Level, msg: &str) {
        if level == Level::Debug && !self.verbose {
            return;
        }
        if let Some(c) = &self.capture {
            c.lock().unwrap_or_else(|p| p.into_inner()).push(msg.to_string());
        } else if self.syslog {
            let prio = match level {
                Level::Error => libc::LOG_ERR,
                Level::Info => libc::LOG_INFO,
                Level::Debug => libc::LOG_DEBUG,
            };
            let text = CString::new(msg.replace('\0', " ")).unwrap_or_default();
            // SAFETY: both strings are NUL-terminated; "%s" consumes exactly one argument.
            unsafe { libc::syslog(prio, c"%s".as_ptr(), text.as_ptr()) };
        } else {
            let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            let secs = t.as_secs() % 86_400;
            let tag = match level {
                Level::Error => "error: ",
                _ => "",
            };
            eprintln!("{:02}:{:02}:{:02} plugd: {tag}{msg}", secs / 3600, secs / 60 % 60, secs % 60);
        }
    }

    pub fn error(&self, msg: impl AsRef<str>) {
        self.write(Level::Error, msg.as_ref());
    }
    pub fn info(&self, msg: impl AsRef<str>) {
        self.write(Level::Info, msg.as_ref());
    }
    pub fn debug(&self, msg: impl AsRef<str>) {
        self.write(Level::Debug, msg.as_ref());
    }
}
