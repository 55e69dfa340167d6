//! `mix`: a re-aim 7 like scalability mix. A workfile of weighted tasks gives every simulated
//! user (a forked process) a fixed multiset of about `jobs` task runs in random order; all
//! users start together and jobs per minute = jobs per user × users × 60 / wall time.
//! With `users = 0` the cell is a ramp: the runner runs one cell per load, asking
//! [`Engine::ramp_next`] for the next user count until a stop rule holds (see `ramp`).

pub mod ramp;
pub mod tasks;
pub mod user;
pub mod workfile;

use crate::info::EngineInfo;
use crate::{
    AreaRule, Caps, CellContext, Control, Engine, EngineError, Figure, OptKind, OptionSpec, RampPoint,
    Recorder, SummaryArea, Workload,
};
use racehorse_core::{CellSpec, CpuMethod, Params, Value, WorkUnit, WorkloadCpu};
use ramp::{Point, RampRules, StopRule};
use std::path::PathBuf;
use std::time::Duration;
use user::UserPlan;

pub struct Mix;

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "workfile",
        kind: OptKind::Str,
        default: "fserver",
        help: "the task mix: fserver, new_db, compute (re-aim 7's) or the path of a workfile",
    },
    OptionSpec {
        name: "users",
        kind: OptKind::Int { min: 0, max: 100_000 },
        default: "0",
        help: "simulated users (processes) of the cell; 0 = ramp the load from start_users until a stop rule holds",
    },
    OptionSpec {
        name: "jobs",
        kind: OptKind::Int { min: 1, max: 100_000 },
        default: "100",
        help: "jobs per user (re-aim's JOBS); each task gets its share of them, at least 1",
    },
    OptionSpec {
        name: "start_users",
        kind: OptKind::Int { min: 1, max: 100_000 },
        default: "1",
        help: "ramp: the first load",
    },
    OptionSpec {
        name: "increment",
        kind: OptKind::Int { min: 1, max: 100_000 },
        default: "1",
        help: "ramp: users added per step (adaptive changes it from the 10th point on)",
    },
    OptionSpec {
        name: "max_users",
        kind: OptKind::Int { min: 1, max: 100_000 },
        default: "1024",
        help: "ramp: the highest load (re-aim -e)",
    },
    OptionSpec {
        name: "stop",
        kind: OptKind::Choice(&["peak", "crossover", "max"]),
        default: "peak",
        help: "ramp: peak = stop once throughput levels off or drops after its peak (re-aim -g); crossover \
               = once jobs/min per user <= crossover (-x); max = run up to max_users",
    },
    OptionSpec {
        name: "crossover",
        kind: OptKind::Float,
        default: "10",
        help: "ramp: jobs/min per user of the crossover (re-aim: 10, -q: 60)",
    },
    OptionSpec {
        name: "adaptive",
        kind: OptKind::Bool,
        default: "true",
        help: "ramp: re-aim's adaptive increment (false = re-aim -t)",
    },
    OptionSpec {
        name: "seed",
        kind: OptKind::Int { min: 0, max: i64::MAX },
        default: "1",
        help: "seed of the users' job orders and random offsets",
    },
    OptionSpec {
        name: "filesize",
        kind: OptKind::Size { min: 1024, max: 1 << 40 },
        default: "10k",
        help: "re-aim FILESIZE: disk task file size = filesize + poolsize / users (a workfile line wins)",
    },
    OptionSpec {
        name: "poolsize",
        kind: OptKind::Size { min: 0, max: 1 << 40 },
        default: "1m",
        help: "re-aim POOLSIZE, shared by the users of a load point (a workfile line wins)",
    },
    OptionSpec {
        name: "timeout",
        kind: OptKind::Int { min: 1, max: 86_400 },
        default: "600",
        help: "seconds a load point may take before its users are killed and the cell fails",
    },
];

/// Size of a disk block in the tasks (re-aim's NBUFSIZE).
const BLOCK_BYTES: u64 = 1024;

impl Mix {
    /// The ramp settings of a cell (defaults where a parameter is missing).
    fn rules(spec: &CellSpec) -> RampRules {
        let int = |k: &str, d: u64| spec.params.get(k).and_then(Value::as_u64).unwrap_or(d);
        let stop = spec.params.get("stop").and_then(Value::as_str).and_then(StopRule::parse);
        RampRules {
            start_users: int("start_users", 1).max(1),
            increment: int("increment", 1).max(1),
            max_users: int("max_users", 1024).max(1),
            stop: stop.unwrap_or(StopRule::Peak),
            crossover_jpm_per_user: spec.params.get("crossover").and_then(Value::as_f64).unwrap_or(10.0),
            adaptive: spec.params.get("adaptive").and_then(Value::as_bool).unwrap_or(true),
        }
    }
}

/// The disk task file size in 1 KiB blocks for `users` users (at least 1).
pub fn disk_blocks(filesize_bytes: u64, poolsize_bytes: u64, users: u64) -> u64 {
    ((filesize_bytes + poolsize_bytes / users.max(1)) / BLOCK_BYTES).max(1)
}

/// re-aim's figures of one load point.
const FIGURES: &[Figure] = &[
    Figure::info("jpm", "jobs per minute", "jobs/min"),
    Figure::info("jpm_per_user", "jobs per minute per user", "jobs/min"),
    Figure::info("jobs_per_user", "jobs per user", "jobs"),
    Figure::info("real_s", "wall time of the load", "s"),
    Figure::info("disk_file_kib", "shared disk file", "KiB"),
    Figure::info("child_user_s_per_job", "users' user CPU per job", "cpu_s"),
    Figure::info("child_sys_s_per_job", "users' system CPU per job", "cpu_s"),
];

/// What `Mix` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "mix",
    about: "re-aim 7 like mix: forked users run weighted task lists (fserver, new_db, compute); jobs/min over a load ramp",
    area: "Scalability",
    summary_area: AreaRule::ByParam {
        param: "workfile",
        cases: &[
            ("compute", SummaryArea::CpuAndMemoryIntense),
            ("new_db", SummaryArea::Database),
            ("fserver", SummaryArea::FileServer),
        ],
        missing: SummaryArea::FileServer,
        otherwise: SummaryArea::ScalingCpuAndProcesses,
    },
    unit: WorkUnit::Jobs,
    caps: Caps { needs_disk: true, ..Caps::NONE },
    options: OPTIONS,
    figures: FIGURES,
    shortcuts: &[],
};

impl Engine for Mix {
    fn info(&self) -> &'static EngineInfo {
        &INFO
    }
    fn validate(&self, ctx: &CellContext) -> Result<(), EngineError> {
        workfile::load(ctx.get_str("workfile")?).map_err(EngineError::Usage)?;
        let rules = Self::rules(&ctx.spec);
        if ctx.get_u64("users")? == 0 && rules.start_users > rules.max_users {
            return Err(EngineError::Usage(format!(
                "start_users = {} is above max_users = {}; raise max_users",
                rules.start_users, rules.max_users
            )));
        }
        Ok(())
    }
    fn ramp_next(&self, planned: &CellSpec, done: &[RampPoint]) -> Option<Params> {
        if planned.params.get("users").and_then(Value::as_u64) != Some(0) {
            return None;
        }
        let rules = Self::rules(planned);
        let points: Vec<Point> = done
            .iter()
            .map(|p| Point {
                users: p.params.get("users").and_then(Value::as_u64).unwrap_or(0),
                jpm: p.units_per_s.map(|u| u * 60.0),
                real_s: p.window_s,
            })
            .collect();
        let users = ramp::next_users(&rules, &points)?;
        let mut params = planned.params.clone();
        params.insert("users".into(), Value::Int(users as i64));
        Some(params)
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        let users = ctx.get_u64("users")?;
        if users == 0 {
            return Err(EngineError::Usage(
                "users = 0 is a ramp, which the runner expands into one cell per load; give users >= 1 to run one load".into(),
            ));
        }
        let (_, wf) = workfile::load(ctx.get_str("workfile")?).map_err(EngineError::Usage)?;
        let counts = wf.job_counts(ctx.get_u64("jobs")?);
        let jobs_per_user: u64 = counts.iter().map(|c| c.1).sum();
        let filesize = wf.filesize_bytes.unwrap_or(ctx.get_u64("filesize")?);
        let poolsize = wf.poolsize_bytes.unwrap_or(ctx.get_u64("poolsize")?);
        let blocks = disk_blocks(filesize, poolsize, users);
        let shared_file = ctx.work_dir.join("shared.dat");
        tasks::create_shared(&shared_file, blocks)
            .map_err(|e| EngineError::io("creating the shared disk file", &shared_file, e))?;
        let seed = ctx.get_u64("seed")?;
        let mut plans = Vec::with_capacity(users as usize);
        for u in 0..users {
            let dir = ctx.work_dir.join(format!("user{u}"));
            std::fs::create_dir(&dir).map_err(|e| EngineError::io("creating a user directory", &dir, e))?;
            let user_seed = seed ^ (u + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            plans.push(UserPlan {
                dir,
                jobs: workfile::job_list(&counts, user_seed),
                seed: user_seed.rotate_left(17),
            });
        }
        Ok(Box::new(MixCell {
            plans,
            shared_file,
            blocks,
            jobs_per_user,
            timeout: Duration::from_secs(ctx.get_u64("timeout")?),
        }))
    }
}

struct MixCell {
    plans: Vec<UserPlan>,
    shared_file: PathBuf,
    blocks: u64,
    jobs_per_user: u64,
    timeout: Duration,
}

impl Workload for MixCell {
    fn run(&mut self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        let users = self.plans.len() as u64;
        let r = user::run_load(&self.plans, &self.shared_file, self.blocks, ctl, self.timeout)?;
        let jobs = self.jobs_per_user * users;
        rec.submit(crate::WorkerStats { units: jobs as f64, ops: jobs, ..Default::default() });
        rec.set_workload_cpu(WorkloadCpu {
            user_s: r.user_s,
            kernel_s: r.sys_s,
            method: CpuMethod::Children,
        });
        let jpm = ramp::jobs_per_minute(self.jobs_per_user, users, r.real_s);
        rec.set_extra("jpm", jpm);
        rec.set_extra("jpm_per_user", jpm / users as f64);
        rec.set_extra("jobs_per_user", self.jobs_per_user as f64);
        rec.set_extra("real_s", r.real_s);
        rec.set_extra("disk_file_kib", self.blocks as f64);
        rec.set_extra("child_user_s_per_job", r.user_s / jobs as f64);
        rec.set_extra("child_sys_s_per_job", r.sys_s / jobs as f64);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
