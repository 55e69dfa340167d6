//! The guest's end of the channel to the host, inside a KVM guest (`guest-init`): the
//! virtio-serial port once open, the protocol's lines sent over it, and the window hooks that
//! tell the host when a cell's measured window starts and ends. Elsewhere nothing is sent.

use crate::guest_vm::LINE_PREFIX;
use racehorse_engines::WindowHooks;
use std::fs::File;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

/// The channel to the host, once open.
static PORT: OnceLock<Mutex<File>> = OnceLock::new();

/// Sends one protocol line to the host (nothing before the channel is open).
pub(crate) fn send(line: &str) {
    if let Some(p) = PORT.get() {
        let mut f = p.lock().unwrap_or_else(|e| e.into_inner());
        let _ = f.write_all(format!("{LINE_PREFIX}{line}\n").as_bytes());
        let _ = f.flush();
    }
}

/// Window hooks that tell the host the window starts before the guest reads its own edge,
/// and that it ended after: the host's readings bracket the guest's window.
struct Signalled(Box<dyn WindowHooks>);

impl WindowHooks for Signalled {
    fn measure_started(&self) {
        send("T0");
        self.0.measure_started();
    }
    fn measure_ended(&self) {
        self.0.measure_ended();
        send("T1");
    }
}

/// Inside a guest, wraps a cell's window hooks so that the host hears of its edges;
/// elsewhere returns them as they are.
pub(crate) fn signalled(hooks: Box<dyn WindowHooks>) -> Box<dyn WindowHooks> {
    if PORT.get().is_some() {
        Box::new(Signalled(hooks))
    } else {
        hooks
    }
}

/// Keeps the opened port as the channel (the first one opened stays).
pub(crate) fn open(port: File) {
    let _ = PORT.set(Mutex::new(port));
}
