//! Home of the workspace-wide integration tests in `tests/` (one test binary); no code of its own.
