//! What the engines' tests share: a cell of an engine with every option at its default (then
//! the test's overrides), and window hooks that do nothing.

use crate::{CellContext, Engine, WindowHooks};
use racehorse_core::{CellSpec, Params, Value};
use std::path::Path;

/// A cell of `engine`: its options' defaults, then `overrides`, in `work_dir` on `cpus` CPUs.
pub fn cell_ctx(engine: &dyn Engine, work_dir: &Path, cpus: u32, overrides: &[(&str, Value)]) -> CellContext {
    let mut params = Params::new();
    for o in engine.options() {
        if let Some(v) = o.default_value() {
            params.insert(o.name.into(), v);
        }
    }
    for (k, v) in overrides {
        params.insert((*k).into(), v.clone());
    }
    let spec = CellSpec { workload: engine.name().into(), params, variant: "default".into(), rep: 1 };
    CellContext { spec, work_dir: work_dir.to_path_buf(), cpus, env: Default::default() }
}

/// Window hooks that do nothing (no /proc reads at the window's edges).
pub struct NoHooks;
impl WindowHooks for NoHooks {}
