//! The fleet end to end (issue 30): dist/ansible's playbook drives four namespace "hosts"
//! over ssh (tests/fleet_hosts.rs), one host's sshd dies before the net pairs, the exports
//! and the campaign manifest come back to the controller, and everything goes into a real
//! PostgreSQL (tests/fleet_pg.rs) and is listed and compared there. Also `run --start-at`
//! and the playbook's syntax check.

use crate::common::{bin, is_root, machine_lock, text, Sandbox};
use crate::fleet_hosts::{leftovers, processes_named, Fleet};
use crate::fleet_pg::{pg_bin, Pg};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn dist() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("dist/ansible")
}

fn on_path(program: &str) -> bool {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).any(|d| d.join(program).is_file())
}

/// Why this machine cannot run the fleet test, if it cannot; under RACEHORSE_REQUIRE_TOOLS
/// (CI) a missing piece is a failure, elsewhere the test says why it skips.
fn cannot_run(need_root: bool) -> Option<String> {
    let mut missing: Vec<&str> = Vec::new();
    for p in ["ansible-playbook", "ssh", "ssh-keygen", "ip", "unshare"] {
        if !on_path(p) {
            missing.push(p);
        }
    }
    if need_root && !Path::new("/usr/sbin/sshd").is_file() {
        missing.push("/usr/sbin/sshd (openssh-server)");
    }
    if need_root && pg_bin().is_none() {
        missing.push("PostgreSQL's initdb (postgresql)");
    }
    let why = if need_root && !is_root() {
        "needs root (network namespaces, sshd)".to_string()
    } else if !missing.is_empty() {
        format!(
            "missing {} (scripts/test.sh installs ansible-core, openssh-server, postgresql)",
            missing.join(", ")
        )
    } else {
        return None;
    };
    assert!(std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(), "the fleet test {why}");
    racehorse_testkit::skip!("the fleet test {why}");
    Some(why)
}

/// Environment for ansible-playbook: the repository's config and role, and every file Ansible
/// makes on the controller inside `tmp`.
fn ansible(tmp: &Path) -> Command {
    let mut c = Command::new("ansible-playbook");
    c.current_dir(dist())
        .env("ANSIBLE_CONFIG", dist().join("ansible.cfg"))
        .env("ANSIBLE_ROLES_PATH", dist().join("roles"))
        .env("ANSIBLE_HOME", tmp.join("ansible-home"))
        .env("ANSIBLE_LOCAL_TEMP", tmp.join("ansible-local"))
        .env("ANSIBLE_SSH_CONTROL_PATH_DIR", tmp.join("cp"))
        .env("ANSIBLE_HOST_KEY_CHECKING", "False")
        .env("ANSIBLE_RETRY_FILES_ENABLED", "False")
        .env("ANSIBLE_NOCOLOR", "1")
        .env_remove("RACEHORSE_CAMPAIGN")
        .env_remove("RACEHORSE_PG_DSN")
        .env_remove("RACEHORSE_DB");
    c
}

/// Runs a command with its output in files, killed after `limit`.
fn run_with_limit(mut c: Command, dir: &Path, limit: Duration) -> (Option<i32>, String) {
    let (out, err) = (dir.join("ansible.out"), dir.join("ansible.err"));
    let f = |p: &Path| Stdio::from(std::fs::File::create(p).expect("output file"));
    let mut child = c.stdin(Stdio::null()).stdout(f(&out)).stderr(f(&err)).spawn().expect("ansible-playbook");
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s.code();
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    (status, format!("{}{}", read(&out), read(&err)))
}

/// The inventory: h1..h4 with their ssh and data-plane addresses, directories and the two net
/// pairs (h2 runs against h1, h3 against h4), and the campaign's settings.
fn inventory(f: &Fleet, campaign: &str, dsn: &str) -> Value {
    let mut hosts = serde_json::Map::new();
    for h in &f.hosts {
        let d = &h.dir;
        let mut v = json!({
            "ansible_host": h.ssh_addr,
            "racehorse_data_addr": h.data_addr,
            "racehorse_bin": d.join("bin/racehorse"),
            "racehorse_home": d.join("home"),
            "racehorse_state_dir": d.join("state"),
            "racehorse_env": { "TMPDIR": d.join("tmp") },
            "ansible_remote_tmp": d.join("tmp/ansible"),
            "ansible_async_dir": d.join("tmp/async"),
        });
        let peer = match h.name.as_str() {
            "h2" => "h1",
            "h3" => "h4",
            _ => "",
        };
        if !peer.is_empty() {
            v["racehorse_net_peer"] = json!(peer);
        }
        hosts.insert(h.name.clone(), v);
    }
    let quick = ["--no-drop-caches", "--no-warm-up", "--sample-ms", "0"];
    let mut suite_args: Vec<&str> = vec!["-o", "bench=null,pipe", "-o", "level=l1", "-o", "tries=3"];
    suite_args.extend(["-o", "enough_ms=2"].iter().chain(quick.iter()));
    let mut net_args: Vec<&str> = vec!["-o", "mode=rr", "-o", "request=200", "-o", "response=1000"];
    net_args.extend(["-o", "connections=1", "--runtime", "1s", "--warmup", "0s"].iter().chain(quick.iter()));
    // The campaign's settings are read on the controller (the implicit localhost), which
    // sees the `all` group's variables only.
    let campaign_vars = json!({
        "racehorse_campaign": campaign,
        "racehorse_controller_bin": bin(),
        "racehorse_collect_dir": f.dir.path().join("results"),
        "racehorse_pg_dsn": dsn,
        // A common start a minute after the campaign play: the preflight (copying the
        // binary) takes about half of that here.
        "racehorse_start_in_s": 60,
    });
    json!({ "all": { "vars": campaign_vars, "children": { "racehorse": { "hosts": hosts, "vars": {
        "ansible_user": "root",
        "ansible_ssh_private_key_file": f.key,
        "ansible_ssh_common_args": "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR",
        "ansible_python_interpreter": "/usr/bin/python3",
        "racehorse_binary_src": bin(),
        "racehorse_suite": "micro",
        "racehorse_suite_args": suite_args,
        "racehorse_net_args": net_args,
        "racehorse_poll_s": 1,
        "racehorse_connect_timeout_s": 5,
    }}}}})
}

/// site.yml's plays, with a play between the run and the net pairs that kills every sshd of
/// h4 (rh-fleet-4): the host goes down between two plays.
fn test_playbook(tmp: &Path) -> PathBuf {
    let site = std::fs::read_to_string(dist().join("site.yml")).expect("site.yml");
    let kill = "- name: \"test: h4 goes down before the net pairs\"\n  hosts: localhost\n  connection: local\n  \
                gather_facts: false\n  tasks:\n    - name: Kill every sshd in rh-fleet-4\n      \
                ansible.builtin.shell: for p in $(ip netns pids rh-fleet-4); do [ \"$(cat /proc/$p/comm)\" = sshd ] \
                && kill -9 $p; done; true\n";
    let mut out = String::new();
    let mut plays = Vec::new();
    for line in site.lines() {
        if let Some(p) = line.strip_prefix("- import_playbook: ") {
            if p == "plays/net.yml" {
                out.push_str(kill);
            }
            out.push_str(&format!("- import_playbook: {}\n", dist().join(p).display()));
            plays.push(p.to_string());
        }
    }
    let want = ["campaign", "preflight", "run", "net", "collect", "load"].map(|p| format!("plays/{p}.yml"));
    assert_eq!(plays, want, "site.yml's plays changed: update this test");
    let path = tmp.join("fleet-test.yml");
    std::fs::write(&path, out).expect("playbook");
    path
}

fn read_json(p: &Path) -> Value {
    let t = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&t).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every file under `dir` (the copied binaries left out) that holds `needle`.
fn files_holding(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let (p, meta) = (e.path(), e.metadata());
            match meta {
                Ok(m) if m.is_dir() => todo.push(p),
                Ok(m) if m.is_file() && m.len() < (16 << 20) => {
                    let bytes = std::fs::read(&p).unwrap_or_default();
                    if bytes.windows(needle.len()).any(|w| w == needle) {
                        found.push(p);
                    }
                }
                _ => {}
            }
        }
    }
    found
}

#[test]
fn a_campaign_on_four_hosts_survives_a_dead_host_and_lands_in_postgres() {
    if cannot_run(true).is_some() {
        return;
    }
    let _m = machine_lock();
    let t0 = Instant::now();
    let fleet = Fleet::start(4).unwrap_or_else(|e| panic!("making the namespace hosts: {e}"));
    let pg = Pg::start().unwrap_or_else(|e| panic!("starting PostgreSQL: {e}"));
    let pg_pid = pg.pid().expect("postgres runs");
    let campaign = format!("e2e-{}", std::process::id());
    let token = format!(
        "tok-{}-{}",
        std::process::id(),
        SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos()
    );
    let tmp = fleet.dir.path();
    let dsn = pg.dsn();
    std::fs::write(tmp.join("inventory.json"), inventory(&fleet, &campaign, &dsn).to_string()).unwrap();
    let mut c = ansible(tmp);
    c.arg("-i").arg(tmp.join("inventory.json")).arg(test_playbook(tmp)).env("RACEHORSE_TOKEN", &token);
    let (code, out) = run_with_limit(c, tmp, Duration::from_secs(900));
    let played = t0.elapsed();
    if let Some(keep) = std::env::var_os("RACEHORSE_FLEET_LOG") {
        let _ = std::fs::write(keep, &out);
    }
    eprintln!("fleet: hosts and PostgreSQL up and the playbook done in {:.1} s", played.as_secs_f64());
    // The playbook ran to its end and failed there, naming the hosts that did not come through.
    assert_eq!(code, Some(2), "ansible-playbook:\n{out}");
    assert!(out.contains("not every host came through: h3, h4"), "{out}");
    assert!(!out.contains(&token), "the token is in Ansible's output:\n{out}");
    let leaked = files_holding(tmp, token.as_bytes());
    assert!(leaked.is_empty(), "the token is in {leaked:?}");
    assert!(fleet.sshd_pids(3).is_empty() && !fleet.sshd_pids(0).is_empty(), "only h4's sshd was killed");
    let results = tmp.join("results").join(&campaign);
    let in_tree = ["results", "plays/results"].map(|d| dist().join(d).join(&campaign));
    assert!(!in_tree.iter().any(|d| d.exists()), "the campaign wrote into the source tree: {in_tree:?}");
    check_manifest(&read_json(&results.join("manifest.json")), &campaign);
    let counts = check_exports(&fleet, &results, &campaign);
    check_central(&pg, &results, &campaign, &counts, &out);
    let masters = fleet.masters_prefix();
    drop(pg);
    drop(fleet);
    assert!(leftovers().is_empty(), "left behind: {:?}", leftovers());
    assert!(processes_named(&masters).is_empty(), "ssh masters left behind");
    assert!(!Path::new(&format!("/proc/{pg_pid}")).exists(), "postgres (pid {pg_pid}) still runs");
    eprintln!("fleet: the whole test took {:.1} s", t0.elapsed().as_secs_f64());
}

/// h1 and h2 ok; h3 failed because its partner h4 was gone; h4 unreachable.
fn check_manifest(m: &Value, campaign: &str) {
    assert_eq!((m["format"].as_str(), m["version"].as_u64()), (Some("racehorse-campaign"), Some(1)), "{m}");
    assert_eq!(m["campaign"], campaign);
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    let started = m["started_at_unix_s"].as_u64().expect("started_at_unix_s");
    assert!(started <= now && started + 900 > now, "{m}");
    let hosts = m["hosts"].as_array().expect("hosts");
    let by = |n: &str| hosts.iter().find(|h| h["name"] == n).unwrap_or_else(|| panic!("{n} in {m}")).clone();
    assert_eq!(hosts.len(), 4, "{m}");
    for (name, outcome) in [("h1", "ok"), ("h2", "ok"), ("h3", "failed"), ("h4", "unreachable")] {
        assert_eq!(by(name)["outcome"], outcome, "{name}: {m}");
    }
    let h3 = by("h3")["detail"].as_str().unwrap_or("").to_string();
    assert!(h3.contains("net pair h3 -> h4") && h3.contains("not serving"), "{h3}");
    let h4 = by("h4")["detail"].as_str().unwrap_or("").to_string();
    assert!(h4.starts_with("net: "), "h4 dropped out at the start of the net pairs: {h4}");
}

/// Each host's exports on the controller: the suite's cells, the net pair's run, the host's
/// own hostname and environment; returns the cell count of every collected run by host.
fn check_exports(fleet: &Fleet, results: &Path, campaign: &str) -> Vec<(String, String, usize)> {
    let mut counts = Vec::new();
    for h in &fleet.hosts {
        let dir = results.join(&h.name);
        if h.name == "h4" {
            assert!(!dir.join("suite.json").exists(), "an unreachable host's runs cannot be collected");
            continue;
        }
        let env = read_json(&dir.join("env.json"));
        assert_eq!(
            (env["format"].as_str(), env["hostname"].as_str()),
            (Some("racehorse-env"), Some(h.ns.as_str()))
        );
        let mut kinds = vec!["suite"];
        if h.name == "h2" {
            kinds.push("net");
        }
        assert_eq!(dir.join("net.json").exists(), h.name == "h2", "{}: only h2 ran a net client", h.name);
        for kind in kinds {
            let e = read_json(&dir.join(format!("{kind}.json")));
            let run = &e["run"];
            assert_eq!(run["label"], format!("{campaign}-{kind}"), "{e}");
            if kind == "suite" {
                check_common_start(run);
            }
            assert_eq!(
                (run["host"].as_str(), run["status"].as_str()),
                (Some(h.ns.as_str()), Some("complete"))
            );
            let cells = e["cells"].as_array().expect("cells");
            assert_eq!(cells.len(), if kind == "net" { 1 } else { 2 }, "{}: {e}", h.name);
            assert!(cells
                .iter()
                .all(|c| c["status"] == "ok" && c["units"].as_f64().is_some_and(|u| u > 0.0)));
            assert_eq!(run["inventory_name"], h.name.as_str(), "{run}");
            assert_eq!(run["campaign"], campaign, "{run}");
            assert!(run["uuid"].as_str().is_some_and(|u| u.len() == 36), "{run}");
            counts.push((h.name.clone(), kind.to_string(), cells.len()));
        }
    }
    // h1 served h2's connections on its data-plane address, then stopped on SIGTERM.
    let log = std::fs::read_to_string(fleet.hosts[0].dir.join(format!("home/serve-{campaign}.log")))
        .unwrap_or_default();
    assert!(log.contains("listening on 10.213.1.11:7420") && log.contains("token required"), "{log}");
    let served =
        log.split(" served").next().and_then(|s| s.rsplit(' ').next()).and_then(|n| n.parse::<u32>().ok());
    assert!(served.is_some_and(|n| n >= 1), "{log}");
    counts
}

/// The suite ran with the campaign's `--start-at T` and was recorded no earlier than T.
fn check_common_start(run: &Value) {
    let command = run["command"].as_str().unwrap_or("");
    let at = command
        .split("--start-at ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|t| t.parse::<f64>().ok());
    let at = at.unwrap_or_else(|| panic!("no --start-at in {command}"));
    assert!(run["started_at_unix_s"].as_f64().is_some_and(|s| s >= at.floor()), "{run}");
}

fn racehorse(args: &[&str]) -> Output {
    Command::new(bin()).args(args).env_remove("RACEHORSE_DB").output().expect("racehorse")
}

/// The central store: the playbook's load put every collected run in with its cells; `list
/// --campaign` shows h4 without a run, as unreachable, and h3's runs with its failure;
/// loading again changes nothing; `compare` takes runs of two hosts.
fn check_central(pg: &Pg, results: &Path, campaign: &str, counts: &[(String, String, usize)], out: &str) {
    let dsn = pg.dsn();
    assert!(
        out.contains("campaign ") && out.contains("4 host(s) recorded"),
        "the load play's output:\n{out}"
    );
    let list = || {
        let o = racehorse(&["list", "--db", &dsn, "--campaign", campaign, "--json"]);
        assert!(o.status.success(), "{}", text(&o));
        serde_json::from_slice::<Value>(&o.stdout).expect("list --json")
    };
    let before = list();
    let runs = before["runs"].as_array().unwrap_or_else(|| panic!("{before}"));
    for (host, kind, n) in counts {
        let label = format!("{campaign}-{kind}");
        let r = runs
            .iter()
            .find(|r| r["inventory_name"] == host.as_str() && r["label"] == label.as_str())
            .unwrap_or_else(|| panic!("{host} {label} not in the central list: {before}\n{out}"));
        let cells = r["cells_ok"].as_u64().unwrap_or(0) + r["cells_failed"].as_u64().unwrap_or(0);
        assert_eq!(cells, *n as u64, "{host} {label}: {r}");
        let sql = format!(
            "SELECT count(*) FROM racehorse.cells WHERE run_uuid = '{}'",
            r["uuid"].as_str().unwrap_or("")
        );
        assert_eq!(pg.query(&sql).map(|t| t.trim().to_string()), Ok(n.to_string()), "{sql}");
        assert_eq!(r["host_outcome"], if host == "h3" { "failed" } else { "ok" }, "{r}");
    }
    assert_eq!(runs.len(), counts.len(), "{before}");
    let missing = before["hosts_without_runs"].as_array().cloned().unwrap_or_default();
    assert!(
        missing.len() == 1 && missing[0]["name"] == "h4" && missing[0]["outcome"] == "unreachable",
        "{before}"
    );
    let text_list = text(&racehorse(&["list", "--db", &dsn, "--campaign", campaign]));
    let h4 = text_list.lines().find(|l| l.contains("h4")).unwrap_or_else(|| panic!("{text_list}"));
    assert!(h4.contains("unreachable"), "{text_list}");
    // Load the same files again: nothing changes.
    let totals = "SELECT (SELECT count(*) FROM racehorse.runs), (SELECT count(*) FROM racehorse.cells), \
                  (SELECT count(*) FROM racehorse.campaign_hosts)";
    let rows_before = pg.query(totals);
    let mut args = vec!["load".to_string(), "--db".into(), dsn.clone(), "--campaign-manifest".into()];
    args.push(results.join("manifest.json").display().to_string());
    for (host, kind, _) in counts {
        args.push(results.join(host).join(format!("{kind}.json")).display().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = racehorse(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains(&format!("runs 0 new, 0 updated, {} unchanged", counts.len())), "{}", text(&o));
    assert_eq!(pg.query(totals), rows_before);
    assert_eq!(list(), before, "a second load changed the central store");
    let cmp = racehorse(&[
        "compare",
        "--db",
        &dsn,
        &format!("h1:{campaign}-suite"),
        &format!("h2:{campaign}-suite"),
    ]);
    let t = text(&cmp);
    assert!(cmp.status.success(), "{t}");
    assert!(t.contains("(in host h1)") && t.contains("(in host h2)") && t.contains("rh-fleet-2"), "{t}");
}

#[test]
fn start_at_holds_the_first_cell_until_the_campaign_time() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let now = || SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
    let at = now() + 3.0;
    let t0 = Instant::now();
    let args = [
        "run",
        "null",
        "--label",
        "s",
        "--runtime",
        "200ms",
        "--warmup",
        "0s",
        "--no-warm-up",
        "--no-drop-caches",
    ];
    let with = |extra: &[&str]| -> Vec<String> { args.iter().chain(extra).map(|s| s.to_string()).collect() };
    let at_text = format!("{at:.3}");
    let o = sb.run(&with(&["--start-at", &at_text, "-v"]).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", text(&o));
    assert!(now() >= at, "the run ended before its start time");
    assert!(t0.elapsed() >= Duration::from_millis(2500), "no wait: {:?}", t0.elapsed());
    assert!(text(&o).contains("start time"), "{}", text(&o));
    let run = &read_export(&sb, "s")["run"];
    assert!(run["started_at_unix_s"].as_f64().is_some_and(|s| s >= at.floor()), "{run}");
    let far = format!("{}", now() + 30.0 * 86400.0);
    for bad in ["12", "soon", far.as_str()] {
        let o = sb.run(&with(&["--start-at", bad]).iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(o.status.code(), Some(2), "--start-at {bad}: {}", text(&o));
        assert!(text(&o).contains("--start-at"), "{}", text(&o));
    }
}

fn read_export(sb: &Sandbox, label: &str) -> Value {
    serde_json::from_slice(&sb.run(&["export", label, "--format", "json"]).stdout).expect("json")
}

#[test]
fn the_playbook_passes_ansibles_syntax_check() {
    if cannot_run(false).is_some() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut c = ansible(tmp.path());
    c.args(["--syntax-check", "-i", "inventory.example.yml", "site.yml"]);
    let (code, out) = run_with_limit(c, tmp.path(), Duration::from_secs(120));
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("playbook: site.yml"), "{out}");
}
