//! racehorse-stats: pure statistics over repeated measurements (no I/O).
