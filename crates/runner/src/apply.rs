//! Puts a variant's settings on the machine through the Guard (sysctls, block-device queue
//! files, THP, governor, memory limit, before/after commands), checks every variant before a
//! run starts, and describes what was applied for the cells' records.

use crate::error::{Context, RunError};
use crate::plan::Plan;
use crate::suite::variant::Variant;
use crate::suite::Suite;
use crate::volume::VolumeRefusal;
use racehorse_machine::cpuctl::format_cpu_list;
use racehorse_machine::knobs::{block_queue_dir, device_of_path, governor_files, selected_value, thp_file};
use racehorse_machine::{Guard, SysRoot};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a variant set: setting → value, as stored with each of its cells.
pub type Settings = BTreeMap<String, String>;

/// The directory disk workloads of `v` use.
pub fn variant_dir(v: &Variant, suite_dir: &Path) -> PathBuf {
    v.dir.clone().unwrap_or_else(|| suite_dir.to_path_buf())
}

/// The files or devices the cells of variant `index` really use: an engine's `target`
/// option when it names one (diskio on another filesystem or a block device), else the
/// variant's directory. The environment and block-device variants describe these.
pub fn variant_targets(plan: &Plan, index: usize, suite_dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let dir = plan.variants.get(index).map(|v| variant_dir(v, suite_dir)).unwrap_or_default();
    for c in plan.cells.iter().filter(|c| c.variant == index) {
        let named = c.spec.params.get("target").and_then(|v| v.as_str()).filter(|t| !t.is_empty());
        let t = named.map(PathBuf::from).unwrap_or_else(|| dir.clone());
        if !out.contains(&t) {
            out.push(t);
        }
    }
    if out.is_empty() {
        out.push(dir);
    }
    out
}

/// Every target of the plan, in order, without repeats.
pub fn plan_targets(plan: &Plan, suite_dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for t in (0..plan.variants.len()).flat_map(|i| variant_targets(plan, i, suite_dir)) {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// The one block device behind `targets`, for a block variant that names none.
fn device_of_targets(root: &SysRoot, targets: &[PathBuf]) -> Result<String, RunError> {
    let mut devices: Vec<String> = Vec::new();
    for t in targets {
        let d = device_of_path(root, t).context("block")?;
        if !devices.contains(&d) {
            devices.push(d);
        }
    }
    match devices.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(RunError::Usage(
            "block: the variant has no target to find a device for; name it with device = \"…\"".into(),
        )),
        many => Err(RunError::Usage(format!(
            "block: the variant's cells use targets on several devices ({}); name one with device = \"…\"",
            many.join(", ")
        ))),
    }
}

/// One sysfs write of a variant: the name it is recorded under, the file and the value.
struct FileKnob {
    key: String,
    path: PathBuf,
    value: String,
}

/// The sysfs files `v` writes, with the block device resolved (the device of the targets
/// its cells use when the variant names none).
fn file_knobs(v: &Variant, root: &SysRoot, targets: &[PathBuf]) -> Result<Vec<FileKnob>, RunError> {
    let mut out = Vec::new();
    if let Some(b) = &v.block {
        let device = match &b.device {
            Some(d) => d.clone(),
            None => device_of_targets(root, targets)?,
        };
        let queue = block_queue_dir(root, &device).context("block")?;
        let name = device.trim_start_matches("/dev/");
        for (k, val) in &b.queue {
            out.push(FileKnob { key: format!("block {name} {k}"), path: queue.join(k), value: val.clone() });
        }
    }
    for (which, value) in [("enabled", &v.thp), ("defrag", &v.thp_defrag)] {
        if let Some(value) = value {
            let path = thp_file(root, which).context("thp")?;
            out.push(FileKnob { key: format!("thp {which}"), path, value: value.clone() });
        }
    }
    if let Some(g) = &v.governor {
        let files = governor_files(root).context("governor")?;
        for (i, path) in files.into_iter().enumerate() {
            let key = if i == 0 { "governor".to_string() } else { format!("governor #{i}") };
            out.push(FileKnob { key, path, value: g.clone() });
        }
    }
    for (path, value) in &v.sysfs {
        let mapped = root.map_host_path(Path::new(path));
        out.push(FileKnob { key: format!("sysfs {path}"), path: mapped, value: value.clone() });
    }
    Ok(out)
}

/// The value a file holds after writing `asked` to it: the kernel may adjust a number (e.g.
/// `nr_requests = 0` reads back as 4); then both are recorded.
fn effective(path: &Path, asked: String) -> String {
    match std::fs::read_to_string(path).map(|t| selected_value(&t)) {
        Ok(now) if now != asked => format!("{now} (asked {asked})"),
        _ => asked,
    }
}

/// Sets the variant's sysctls and sysfs files; returns what was set.
fn apply_files(
    v: &Variant,
    root: &SysRoot,
    targets: &[PathBuf],
    guard: &mut Guard,
) -> Result<Settings, RunError> {
    let mut set = Settings::new();
    for (k, val) in &v.sysctl {
        guard.set_sysctl(k, val).with_context(|| format!("sysctl {k} = {val}"))?;
        let file = root.proc("sys").join(k.replace('.', "/"));
        set.insert(format!("sysctl {k}"), effective(&file, val.clone()));
    }
    let knobs = file_knobs(v, root, targets)?;
    let items: Vec<(PathBuf, String)> = knobs.iter().map(|k| (k.path.clone(), k.value.clone())).collect();
    guard.set_files(&items).with_context(|| {
        let keys: Vec<&str> = knobs.iter().map(|k| k.key.as_str()).collect();
        keys.join(", ")
    })?;
    for k in knobs.into_iter().filter(|k| !k.key.starts_with("governor #")) {
        set.insert(k.key, effective(&k.path, k.value));
    }
    Ok(set)
}

/// The settings applied per cell rather than here (CPUs, directory, environment, commands).
fn described(v: &Variant, dir: &Path, set: &mut Settings) {
    if let Some(n) = v.cpus {
        set.insert("cpus".into(), n.to_string());
    }
    if let Some(list) = &v.cpu_list {
        set.insert("cpu_list".into(), format_cpu_list(list));
    }
    if v.dir.is_some() {
        set.insert("dir".into(), dir.display().to_string());
    }
    for (k, val) in &v.env {
        set.insert(format!("env {k}"), val.clone());
    }
    for (k, c) in [("before", &v.before), ("after", &v.after)] {
        if let Some(c) = c {
            set.insert(k.into(), c.clone());
        }
    }
    if let Some(p) = &v.plugd {
        set.insert("plugd".into(), crate::suite::variant::plugd_summary(p));
    }
}

/// Where a plugd variant's daemon keeps its config, pid, lock, state and log: beside the
/// machine state file (root-owned for root), never in a shared temp directory, where another
/// user could plant a state file that the daemon would act on.
fn plugd_dir(v: &Variant) -> Result<PathBuf, RunError> {
    let state = racehorse_machine::default_state_file();
    let base = state.parent().map(Path::to_path_buf).unwrap_or_else(std::env::temp_dir);
    let dir = base.join(format!("plugd-{}-{}", std::process::id(), v.name));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&base).map_err(|e| RunError::io(format_args!("plugd: {}", base.display()), e))?;
    std::fs::create_dir(&dir).map_err(|e| RunError::io(format_args!("plugd: {}", dir.display()), e))?;
    Ok(dir)
}

/// The commands that start `racehorse plugd` in the background (waiting until it has
/// enforced its limits and written its pid file, or failing with its log) and stop it
/// (SIGTERM: it restores the CPUs it found; then `plugd restore` for a daemon that died).
fn plugd_commands(v: &Variant, text: &str) -> Result<(String, String), RunError> {
    let dir = plugd_dir(v)?;
    let conf = dir.join("plugd.conf");
    std::fs::write(&conf, text).map_err(|e| RunError::io(format_args!("plugd: {}", conf.display()), e))?;
    let exe = std::env::current_exe().map_err(|e| RunError::io("plugd: the racehorse binary", e))?;
    let q = |p: &Path| racehorse_core::shell::quote(&p.display().to_string());
    let (pid, log, state) = (dir.join("pid"), dir.join("log"), dir.join("state.json"));
    let start = format!(
        "rm -f {pid}; RACEHORSE_UNDER_RUN={run} {exe} plugd -c {conf} -f --pid-file {pid} --lock-file {lock} --state-file {state} >> {log} 2>&1 & \
         d=$!; i=0; while [ ! -s {pid} ] && kill -0 $d 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; \
         [ -s {pid} ] || {{ kill $d 2>/dev/null; tail -n 5 {log} >&2; exit 1; }}",
        run = std::process::id(),
        exe = q(&exe),
        conf = q(&conf),
        pid = q(&pid),
        lock = q(&dir.join("lock")),
        state = q(&state),
        log = q(&log),
    );
    let stop = format!(
        "if [ -s {pid} ]; then p=$(cat {pid}); kill -TERM $p 2>/dev/null; i=0; \
         while kill -0 $p 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; \
         if kill -0 $p 2>/dev/null; then kill -KILL $p; sleep 0.2; fi; fi; \
         {exe} plugd restore --state-file {state} > /dev/null && rm -rf {dir}",
        exe = q(&exe),
        pid = q(&pid),
        state = q(&state),
        dir = q(&dir),
    );
    Ok((start, stop))
}

/// Undoes the previous variant and applies `v`: memory limit (the variant's, else the
/// suite's), sysctls, sysfs files, then the before command (its after command is recorded
/// with the Guard, so it runs when the variant's cells end, on every path). Errors name the
/// setting; whatever was applied stays recorded in the Guard, which the caller restores.
/// `targets` are what the variant's cells use ([`variant_targets`]).
pub fn apply_variant(
    v: &Variant,
    suite: &Suite,
    root: &SysRoot,
    suite_dir: &Path,
    targets: &[PathBuf],
    guard: &mut Guard,
) -> Result<Settings, RunError> {
    let limit = v.mem_limit_bytes.or(suite.mem_limit_bytes);
    let restored = if limit.is_some() { guard.restore_keeping_memory_limit() } else { guard.restore() };
    restored.context("restoring the machine before it")?;
    let dir = variant_dir(v, suite_dir);
    let mut set = Settings::new();
    if let Some(bytes) = limit {
        let l = guard.limit_memory(bytes).context("mem_limit")?;
        if v.mem_limit_bytes.is_some() {
            set.insert("mem_limit".into(), format!("{} MiB", l.limit_bytes >> 20));
        }
    }
    set.extend(apply_files(v, root, targets, guard)?);
    described(v, &dir, &mut set);
    if let Some(p) = &v.plugd {
        let (start, stop) = plugd_commands(v, &p.config_text()?)?;
        guard.run_command(Some(&start), Some(&stop)).context("starting plugd")?;
    }
    if let Some(vol) = &v.volume {
        check_volume(vol, root)?;
        let (build, teardown) = vol.commands(&v.name, &dir);
        guard.run_command(Some(&build), Some(&teardown)).context("building the volume")?;
        set.insert("volume".into(), vol.describe());
        if let Some(l) = racehorse_machine::env::layout_of(root, &dir) {
            set.insert("volume layout".into(), layout_summary(&l));
        }
    }
    if v.before.is_some() || v.after.is_some() {
        guard.run_command(v.before.as_deref(), v.after.as_deref()).context("before")?;
    }
    Ok(set)
}

/// Whether `vol` can be built here: the kernel has what the layout needs, its tools are on
/// PATH, and every device is a free block device that holds no data (unless destructive).
fn check_volume(vol: &crate::volume::VolumeSpec, root: &SysRoot) -> Result<(), VolumeRefusal> {
    racehorse_machine::scratch::kernel_supports(root, &vol.kind).map_err(VolumeRefusal::Kernel)?;
    if let Some(&tool) = vol.tools().iter().find(|t| racehorse_machine::path::find_file(t).is_none()) {
        return Err(VolumeRefusal::ToolMissing { kind: vol.kind.clone(), tool });
    }
    for d in &vol.devices {
        if let Some(why) = racehorse_machine::scratch::refuse_device(root, d, vol.destructive) {
            return Err(VolumeRefusal::Device(why));
        }
    }
    Ok(())
}

/// `btrfs raid0, 2 devices (loop0 mq-deadline 128k, loop1 …)` for the cells' records.
fn layout_summary(l: &racehorse_machine::env::VolumeLayout) -> String {
    let mut s = l.kind.clone();
    if let Some(level) = &l.level {
        s.push_str(&format!(" {level}"));
    }
    if let Some(b) = l.stripe_bytes {
        s.push_str(&format!(", stripe {} KiB", b >> 10));
    }
    let members: Vec<String> = l
        .members
        .iter()
        .map(|m| {
            let sched = m.scheduler.as_deref().unwrap_or("?");
            let ra = m.read_ahead_kb.map_or("?".to_string(), |r| format!("{r}k"));
            format!("{} {sched} {ra}", m.name)
        })
        .collect();
    s.push_str(&format!(", members {}", members.join(", ")));
    s
}

/// Before any cell runs: every variant's sysctls, sysfs files and CPU list are set once and
/// put back, and its directory checked, so that a knob the machine refuses stops the run
/// with the variant and the setting named and nothing left applied. Before/after commands
/// are not tried (they run only around the variant's cells). Every error is a refusal of
/// the variant (exit 2).
pub fn check_variants(
    plan: &Plan,
    root: &SysRoot,
    suite_dir: &Path,
    guard: &mut Guard,
) -> Result<(), RunError> {
    for (i, v) in plan.variants.iter().enumerate().filter(|(_, v)| !v.is_plain()) {
        let refused = |e: RunError| e.refused(format_args!("variant '{}'", v.name));
        let targets = variant_targets(plan, i, suite_dir);
        if let Some(p) = &v.plugd {
            p.config_text().map_err(|e| refused(e.into()))?;
        }
        if let Some(vol) = &v.volume {
            if let Err(e) = check_volume(vol, root) {
                // The run made the default mount point when it checked the directories.
                let _ = std::fs::remove_dir(crate::volume::default_mount(&v.name));
                return Err(refused(e.into()));
            }
        }
        let mut tried = apply_files(v, root, &targets, guard).map(|_| ());
        if let (Ok(()), Some(list)) = (&tried, &v.cpu_list) {
            tried = guard.set_cpu_list(list).map(|_| ()).context("cpu_list");
        }
        let undone = guard.restore_keeping_memory_limit();
        tried.map_err(refused)?;
        undone.context("putting its settings back after the check").map_err(refused)?;
    }
    Ok(())
}
