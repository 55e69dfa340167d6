//! The run lifecycle on a fixture machine with the null engine and a real store: the lock,
//! stop signals before the first change, recovery of what killed racehorses left, the
//! variant check and the restore at the end.

use super::*;
use crate::suite::Suite;
use racehorse_machine::fixtures::copy_fixture;
use racehorse_machine::lock::lock_file_for;

struct Bench {
    _tmp: tempfile::TempDir,
    root: SysRoot,
    state: PathBuf,
    store: Store,
    work: PathBuf,
}

impl Bench {
    fn new() -> Bench {
        let tmp = tempfile::tempdir().unwrap();
        let root = copy_fixture("vm2", tmp.path());
        let state = tmp.path().join("state/restore.json");
        let store = Store::open(&tmp.path().join("rh.db")).unwrap();
        let work = tmp.path().join("work");
        Bench { _tmp: tmp, root, state, store, work }
    }

    fn request(&self, suite: &str) -> RunRequest {
        let plan = Plan::expand(&Suite::parse("t.toml", suite).unwrap(), 2, 2).unwrap();
        RunRequest {
            plan,
            label: "t".into(),
            command: "racehorse run t.toml".into(),
            root: self.root.clone(),
            state_file: self.state.clone(),
            wait_for_lock: false,
            work_root: self.work.clone(),
            sample_interval: None,
            profile: None,
            noise_threshold: 0.05,
            warm_up: true,
            start_at: None,
            version: "test".into(),
            inventory_name: String::new(),
            campaign: None,
            tags: vec![("commit".into(), "abc".into())],
        }
    }

    fn swappiness(&self) -> String {
        std::fs::read_to_string(self.root.proc("sys/vm/swappiness")).unwrap().trim().to_string()
    }
}

const SUITE: &str = "runtime = \"20ms\"\nwarmup = \"0s\"\ncpus = [2]\n[[workload]]\nengine = \"null\"\n\
                     [[variant]]\nname = \"low\"\nsysctl = { \"vm.swappiness\" = 7 }\n";

/// The warnings and notices a run tells its sinks, as the progress sink prints them.
#[derive(Default)]
struct Notes(Vec<String>);
impl Sink for Notes {
    fn event(&mut self, e: &Event) -> Result<(), RunError> {
        match e {
            Event::Warning { message } => self.0.push(format!("warning: {message}")),
            Event::Notice { message } => self.0.push(message.clone()),
            _ => {}
        }
        Ok(())
    }
}

fn run_it(b: &Bench, req: &RunRequest, signals: &StopSignals) -> (Result<RunReport, RunError>, Vec<String>) {
    let mut notes = Notes::default();
    let r = run(req, &b.store, signals, &mut [&mut notes]);
    (r, notes.0)
}

#[test]
fn a_run_stores_its_cells_and_puts_the_machine_back() {
    let b = Bench::new();
    let before = b.swappiness();
    let (r, _) = run_it(&b, &b.request(SUITE), &StopSignals::never());
    let r = r.unwrap();
    assert_eq!((r.status, r.exit_code, r.outcome.ok), (RunStatus::Complete, 0, 1));
    assert_eq!(b.store.run_cells(r.run_id).unwrap().len(), 1, "the warm-up cell is not stored");
    assert_eq!(b.swappiness(), before);
    assert!(!b.state.exists(), "no state file left");
    assert!(r.verified_settings >= 1);
    // The user's tag and the automatic ones (issue 41).
    let tags = b.store.run_tags(r.run_id).unwrap();
    let keys: Vec<&str> = tags.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["commit", "kernel", "racehorse"], "{tags:?}");
    assert!(tags.contains(&("racehorse".into(), "test".into())));
}

/// Issue 21, case 1: two runs at the same moment both changed the machine.
#[test]
fn a_second_run_is_refused_naming_the_holder_and_changes_nothing() {
    let b = Bench::new();
    let holder = MachineLock::acquire(&lock_file_for(&b.state), "racehorse run other (label x)").unwrap();
    let before = b.swappiness();
    let (r, _) = run_it(&b, &b.request(SUITE), &StopSignals::never());
    let e = r.unwrap_err();
    assert_eq!(e.exit_code(), 75);
    let text = e.to_string();
    assert!(text.contains("racehorse run other (label x)") && text.contains("--wait"), "{text}");
    assert_eq!(b.swappiness(), before);
    assert!(b.store.list_runs().unwrap().is_empty(), "no run recorded");
    drop(holder);
}

#[test]
fn wait_queues_behind_the_holder() {
    let b = Bench::new();
    let holder = MachineLock::acquire(&lock_file_for(&b.state), "racehorse run first").unwrap();
    let mut req = b.request(SUITE);
    req.wait_for_lock = true;
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        drop(holder);
    });
    let (r, notes) = run_it(&b, &req, &StopSignals::never());
    release.join().unwrap();
    assert_eq!(r.unwrap().status, RunStatus::Complete);
    assert!(notes.iter().any(|n| n.contains("waiting for the machine") && n.contains("racehorse run first")));
}

/// Issue 21, case 9: a signal in the first moments of a run left a variant's sysctl set.
#[test]
fn a_stop_signal_before_the_first_cell_leaves_the_machine_as_found() {
    let b = Bench::new();
    let before = b.swappiness();
    let signals = StopSignals::never();
    signals.request(libc::SIGTERM);
    let (r, _) = run_it(&b, &b.request(SUITE), &signals);
    let e = r.unwrap_err();
    assert_eq!(e.exit_code(), 143, "{e}");
    assert_eq!(b.swappiness(), before);
    assert!(!b.state.exists());
    assert!(b.store.list_runs().unwrap().is_empty());
}

/// Stops the run at its first cell and makes the variant's sysctl impossible to write back
/// (the file becomes a directory), as a machine that refuses the restore.
struct StopAndBreakRestore {
    signals: StopSignals,
    sysctl: PathBuf,
}
impl Sink for StopAndBreakRestore {
    fn event(&mut self, e: &Event) -> Result<(), RunError> {
        if matches!(e, Event::CellStarted { .. }) && !self.signals.requested() {
            self.signals.request(libc::SIGINT);
            std::fs::remove_file(&self.sysctl).unwrap();
            std::fs::create_dir(&self.sysctl).unwrap();
        }
        Ok(())
    }
}

/// Issue 47, case 1: a run stopped by a signal whose machine cannot be restored does not
/// exit 130 (which says "restored"): it exits 4, says so and names `racehorse restore`, and
/// the state file keeps what is left.
#[test]
fn issue47_a_stopped_run_whose_restore_fails_says_so_and_exits_4() {
    let b = Bench::new();
    let signals = StopSignals::never();
    let mut breaker =
        StopAndBreakRestore { signals: signals.clone(), sysctl: b.root.proc("sys/vm/swappiness") };
    let r = run(&b.request(SUITE), &b.store, &signals, &mut [&mut breaker]);
    let e = r.unwrap_err();
    let msg = e.to_string();
    assert_eq!(e.exit_code(), crate::error::NOT_RESTORED_EXIT, "{msg}");
    assert!(msg.contains("stopped by signal 2") && msg.contains("NOT restored"), "{msg}");
    assert!(msg.contains("racehorse restore") && msg.contains("restore.json"), "{msg}");
    assert!(b.state.exists(), "the state file keeps what is left");
}

#[test]
fn a_signal_while_waiting_for_the_lock_gives_up_with_its_exit_code() {
    let b = Bench::new();
    let _holder = MachineLock::acquire(&lock_file_for(&b.state), "racehorse run first").unwrap();
    let mut req = b.request(SUITE);
    req.wait_for_lock = true;
    let signals = StopSignals::never();
    let s2 = signals.clone();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        s2.request(libc::SIGHUP);
    });
    let (r, _) = run_it(&b, &req, &signals);
    stopper.join().unwrap();
    assert_eq!(r.unwrap_err().exit_code(), 129);
}

/// Issue 21, case 9: what a killed daemon left is put back before the next run measures.
#[test]
fn a_killed_plugds_offline_cpu_is_restored_before_the_run() {
    let b = Bench::new();
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    std::fs::create_dir_all(b.state.parent().unwrap()).unwrap();
    let saved =
        format!("{{\"pid\": {pid}, \"start_ticks\": null, \"online\": {{\"1\": \"1\"}}, \"sysctl\": {{}}}}");
    std::fs::write(racehorse_machine::recovery::plugd_state_file(&b.state), saved).unwrap();
    let online = b.root.sys("devices/system/cpu/cpu1/online");
    std::fs::write(&online, "0").unwrap();
    let (r, notes) = run_it(&b, &b.request(SUITE), &StopSignals::never());
    assert_eq!(r.unwrap().status, RunStatus::Complete);
    assert!(notes.iter().any(|n| n.contains("restored machine state")), "{notes:?}");
    assert_eq!(std::fs::read_to_string(&online).unwrap().trim(), "1");
}

#[test]
fn a_variant_the_machine_refuses_is_a_usage_error_before_any_cell() {
    let b = Bench::new();
    let suite = "runtime = \"20ms\"\n[[workload]]\nengine = \"null\"\n\
                 [[variant]]\nname = \"bad\"\nsysctl = { \"vm.no_such_knob\" = 1 }\n";
    let (r, _) = run_it(&b, &b.request(suite), &StopSignals::never());
    let e = r.unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    assert!(e.to_string().contains("variant 'bad'"), "{e}");
}

/// Issue 23, case 6: `run … --dir /nonexistent/dir` created the directory tree as root.
#[test]
fn a_target_directory_is_made_only_under_an_existing_parent() {
    let tmp = tempfile::tempdir().unwrap();
    let deep = tmp.path().join("no/such/dir");
    let e = check_dir(&deep).unwrap_err().to_string();
    assert!(e.contains("does not exist") && e.contains("--dir"), "{e}");
    assert!(!tmp.path().join("no").exists(), "nothing created");
    let leaf = tmp.path().join("leaf");
    check_dir(&leaf).unwrap();
    assert!(leaf.is_dir());
}

/// Issue 23, case 2: with the store's disk full, the measured cell was lost and only
/// "marking the run finished" was printed.
#[test]
fn a_cell_the_store_refuses_is_kept_beside_it_and_named() {
    let b = Bench::new();
    let run_id = b
        .store
        .create_run(&racehorse_store::NewRun {
            label: "t".into(),
            host: "h".into(),
            command: "c".into(),
            suite_json: "{}".into(),
            env_json: "{}".into(),
            exclusivity_json: "{}".into(),
            racehorse_version: "t".into(),
            cpu_method: "none".into(),
            inventory_name: String::new(),
            campaign: None,
            tags: Vec::new(),
        })
        .unwrap();
    let path = PathBuf::from(b.store.path());
    let read_only = Store::open_read_only(&path).unwrap();
    let spec = racehorse_core::CellSpec {
        workload: "null".into(),
        params: racehorse_core::Params::new(),
        variant: "default".into(),
        rep: 1,
    };
    let cell = racehorse_core::CellResult::empty(spec, racehorse_core::WorkUnit::Ops);
    let run_uuid = b.store.run(run_id).unwrap().unwrap().uuid;
    let mut sink = StoreSink { store: &read_only, run_id, run_uuid: run_uuid.clone() };
    let e = sink
        .event(&Event::CellFinished { index: 3, result: Box::new(cell.clone()) })
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot store cell null") && e.contains("racehorse import"), "{e}");
    let file = PathBuf::from(format!("{}.spill", path.display()))
        .join(format!("run{run_id}-cell3-{}.json", std::process::id()));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        (doc["format"].as_str(), doc["run_id"].as_i64(), doc["idx"].as_u64()),
        (Some(racehorse_store::spill::SPILL_FORMAT), Some(run_id), Some(3))
    );
    assert_eq!(doc["run_uuid"].as_str(), Some(run_uuid.as_str()));
    let back: racehorse_core::CellResult = serde_json::from_value(doc["cell"].clone()).unwrap();
    assert_eq!(back, cell);
}

#[test]
fn a_start_time_holds_the_run_until_then_and_says_so() {
    let b = Bench::new();
    let mut req = b.request(SUITE);
    let at = std::time::SystemTime::now() + Duration::from_millis(700);
    req.start_at = Some(at);
    let (r, notes) = run_it(&b, &req, &StopSignals::never());
    let r = r.unwrap();
    assert!(std::time::SystemTime::now() >= at, "the run ended before its start time");
    let run = b.store.list_runs().unwrap().into_iter().find(|x| x.id == r.run_id).unwrap();
    let at_s = at.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    assert!(run.started_at_unix_s >= at_s, "recorded at {} before the start {at_s}", run.started_at_unix_s);
    assert!(notes.iter().any(|n| n.contains("waiting") && n.contains("start time")), "{notes:?}");
}

#[test]
fn a_start_time_already_past_warns_and_a_signal_ends_the_wait() {
    let b = Bench::new();
    let mut req = b.request(SUITE);
    req.start_at = Some(std::time::SystemTime::now() - Duration::from_secs(5));
    let (r, notes) = run_it(&b, &req, &StopSignals::never());
    assert_eq!(r.unwrap().status, RunStatus::Complete);
    assert!(notes.iter().any(|n| n.starts_with("warning: --start-at passed")), "{notes:?}");
    // A start an hour away: a signal ends the wait at once and nothing is recorded.
    req.start_at = Some(std::time::SystemTime::now() + Duration::from_secs(3600));
    let signals = StopSignals::never();
    let flag = signals.clone();
    let t0 = std::time::Instant::now();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        flag.request(libc::SIGTERM);
    });
    let (r, _) = run_it(&b, &req, &signals);
    stopper.join().unwrap();
    assert_eq!(r.unwrap_err().exit_code(), 143);
    assert!(t0.elapsed() < Duration::from_secs(5), "the wait did not end on the signal");
    assert_eq!(b.store.list_runs().unwrap().len(), 1, "the stopped run was not recorded");
}
