//! A whole `racehorse load`: every input read and checked first, several files at once
//! (parsing is the client's work, and it has CPUs to spare), keeping the rows made of them
//! up to a memory budget; then the runs written in batches of about [`BATCH_CELLS`] cells,
//! one transaction each, over several connections at once, while one thread reads again
//! what was not kept (and the runs of SQLite stores).

use crate::error::CentralError;
use crate::load::{Input, Loader, RunLoaded};
use crate::prepare::{prepare_file, runs_of, PreparedRun};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};

/// A transaction holds runs until it has this many cells (or [`BATCH_RUNS`] runs).
pub const BATCH_CELLS: usize = 2_000;
/// The most runs in one transaction.
pub const BATCH_RUNS: usize = 64;

/// What a writer reports: the runs of a batch once committed, or why not.
type Done = Result<Vec<RunLoaded>, CentralError>;

/// An input after the check.
#[derive(Debug)]
pub enum Pending {
    /// An export's run, ready to write.
    Ready(Box<PreparedRun>),
    /// Read again while writing: an export over the memory budget, or a SQLite store.
    Again(Input),
}

/// Reads and checks every input, `threads` files at a time, before anything is written;
/// keeps the rows of exports while they total under `budget_bytes`. The first input (in
/// the given order) with a problem is the error.
pub fn check_all(
    inputs: &[Input],
    threads: usize,
    budget_bytes: usize,
) -> Result<Vec<Pending>, CentralError> {
    let next = AtomicUsize::new(0);
    let held = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Result<Pending, CentralError>>>> =
        inputs.iter().map(|_| Mutex::new(None)).collect();
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(input) = inputs.get(i) else { break };
        let checked = match input {
            Input::Export(path) => prepare_file(path).map(|run| {
                let size = run.size_bytes();
                if held.fetch_add(size, Ordering::Relaxed) + size <= budget_bytes {
                    Pending::Ready(Box::new(run))
                } else {
                    held.fetch_sub(size, Ordering::Relaxed);
                    Pending::Again(input.clone())
                }
            }),
            Input::Store(_) => input.check().map(|_| Pending::Again(input.clone())),
        };
        *results[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(checked);
    };
    std::thread::scope(|s| {
        for _ in 1..threads.clamp(1, inputs.len().max(1)) {
            s.spawn(work);
        }
        work();
    });
    results
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner()).expect("every input was read"))
        .collect()
}

/// Writes `pending` in order over `jobs` connections to `url`, calling `each` for every
/// run once its transaction committed (in the order they commit). On an error the batches
/// under way finish or roll back, nothing more is started, and the first error is returned.
pub fn write_all(
    url: &str,
    pending: Vec<Pending>,
    jobs: usize,
    each: &mut dyn FnMut(&RunLoaded),
) -> Result<(), CentralError> {
    let stop = AtomicBool::new(false);
    let (batch_tx, batch_rx) = sync_channel::<Vec<PreparedRun>>(jobs.max(1));
    let batch_rx = Arc::new(Mutex::new(batch_rx));
    let (done_tx, done_rx) = channel::<Done>();
    let mut first_error = None;
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            let (rx, done, stop) = (Arc::clone(&batch_rx), done_tx.clone(), &stop);
            s.spawn(move || writer(url, &rx, &done, stop));
        }
        drop(batch_rx);
        let done = done_tx.clone();
        let stop = &stop;
        s.spawn(move || produce(pending, &batch_tx, &done, stop));
        drop(done_tx);
        for result in done_rx {
            match result {
                Ok(runs) => runs.iter().for_each(&mut *each),
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    first_error.get_or_insert(e);
                }
            }
        }
    });
    first_error.map_or(Ok(()), Err)
}

/// Reads what was not kept and groups the runs into batches, in order, for the writers.
fn produce(
    pending: Vec<Pending>,
    batch_tx: &SyncSender<Vec<PreparedRun>>,
    done: &Sender<Done>,
    stop: &AtomicBool,
) {
    let mut batch = Vec::new();
    let mut cells = 0;
    let mut add = |run: PreparedRun| {
        if stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        cells += run.cell_count();
        batch.push(run);
        if cells >= BATCH_CELLS || batch.len() >= BATCH_RUNS {
            cells = 0;
            return Ok(batch_tx.send(std::mem::take(&mut batch)).is_ok());
        }
        Ok(true)
    };
    for p in pending {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let going = match p {
            Pending::Ready(run) => add(*run),
            Pending::Again(input) => runs_of(&input, &mut add).map(|()| true),
        };
        match going {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                stop.store(true, Ordering::Relaxed);
                let _ = done.send(Err(e));
                return;
            }
        }
    }
    if !batch.is_empty() {
        let _ = batch_tx.send(batch);
    }
}

/// One connection writing batches until there are none or something failed.
fn writer(url: &str, rx: &Mutex<Receiver<Vec<PreparedRun>>>, done: &Sender<Done>, stop: &AtomicBool) {
    let mut loader = match Loader::open(url) {
        Ok(l) => l,
        Err(e) => {
            stop.store(true, Ordering::Relaxed);
            let _ = done.send(Err(e));
            return;
        }
    };
    loop {
        let batch = match rx.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(batch) = batch else { return };
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let result = loader.write_batch(&batch);
        let failed = result.is_err();
        if failed {
            stop.store(true, Ordering::Relaxed);
        }
        if done.send(result).is_err() || failed {
            return;
        }
    }
}
