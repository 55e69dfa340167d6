//! Integration tests of the racehorse binary and the libraries together (one test binary).

mod command_cli;
mod common;
mod compare_by_cli;
mod compare_cli;
mod compute_cli;
mod disk_cli;
mod fileserver_procs_cli;
mod house_rules;
mod import_cli;
mod layout_cli;
mod micro_cli;
mod mix_cli;
mod net_cli;
mod oltp_cli;
mod paging_cli;
mod plugd_cli;
mod profile_cli;
mod run_cli;
mod run_faults;
mod run_machine;
mod show_cli;
mod tour_cli;
mod trust_cli;
mod variants_cli;
mod volume_cli;
