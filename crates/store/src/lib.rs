//! racehorse-store: the SQLite store of runs and cells.
