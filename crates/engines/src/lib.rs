//! racehorse-engines: the Engine contract and the workloads.
