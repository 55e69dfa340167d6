//! racehorse-runner: suites, plans, measurement windows and sinks.
