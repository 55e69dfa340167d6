//! The `dbench` engine (dbench-like). PLACEHOLDER: being written.

use crate::{Caps, CellContext, Engine, EngineError, OptionSpec, Workload};
use racehorse_core::WorkUnit;

pub struct Dbench;

impl Engine for Dbench {
    fn name(&self) -> &'static str {
        "dbench"
    }
    fn about(&self) -> &'static str {
        "the real dbench"
    }
    fn unit(&self) -> WorkUnit {
        WorkUnit::Bytes
    }
    fn caps(&self) -> Caps {
        Caps { needs_disk: true, ..Caps::default() }
    }
    fn options(&self) -> &'static [OptionSpec] {
        &[]
    }
    fn prepare(&self, _ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        Err(EngineError::Failed("not yet".into()))
    }
}
