//! Config tests: line syntax, keys, numbers, variables, checks, warnings, the sample configs.

use super::*;
use crate::{parse_expr, EvalError, Values, MAX_DEPTH};

const SEED_HOTPLUG: &str = "(loadavg > onumcpus + 0.75) & (idle < 10.0)";
const SEED_HOTUNPLUG: &str = "(loadavg < onumcpus - 0.25) | (idle > 50)";

/// A minimal CPU config around extra lines.
fn cpu(extra: &str) -> String {
    format!(
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"{SEED_HOTPLUG}\"\nHOTUNPLUG=\"{SEED_HOTUNPLUG}\"\n{extra}"
    )
}

fn ok(text: &str) -> Config {
    parse_config(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn err(text: &str) -> ConfigError {
    parse_config(text).expect_err(text)
}

struct Scalars(Vec<(&'static str, f64)>);
impl Values for Scalars {
    fn value(&self, name: &Name, back: usize) -> Option<f64> {
        let found = self.0.iter().find(|(n, _)| *n == name.field());
        found.filter(|_| back == 0 && name.family().is_none()).map(|(_, v)| *v)
    }
}

#[test]
fn seed_default_rules_parse_and_evaluate() {
    let cfg = ok(&cpu(""));
    assert!(cfg.cpu_control() && !cfg.memory_rules());
    assert_eq!((cfg.update_s, cfg.cpu_min, cfg.cpu_max), (Some(1), Some(1), Some(0)));
    let (plug, unplug) = (&cfg.hotplug.as_ref().unwrap().expr, &cfg.hotunplug.as_ref().unwrap().expr);
    assert_eq!(plug.parenthesised(), "((loadavg > (onumcpus + 0.75)) & (idle < 10))");
    assert_eq!(unplug.parenthesised(), "((loadavg < (onumcpus - 0.25)) | (idle > 50))");
    let busy = Scalars(vec![("loadavg", 3.0), ("onumcpus", 2.0), ("idle", 5.0)]);
    assert_eq!((plug.eval_bool(&busy), unplug.eval_bool(&busy)), (Ok(true), Ok(false)));
    let quiet = Scalars(vec![("loadavg", 0.5), ("onumcpus", 2.0), ("idle", 180.0)]);
    assert_eq!((plug.eval_bool(&quiet), unplug.eval_bool(&quiet)), (Ok(false), Ok(true)));
    // Just above the threshold but idle: no plug; loadavg exactly at onumcpus - 0.25: no unplug.
    let edge = Scalars(vec![("loadavg", 1.75), ("onumcpus", 2.0), ("idle", 20.0)]);
    assert_eq!((plug.eval_bool(&edge), unplug.eval_bool(&edge)), (Ok(false), Ok(false)));
    let missing = Scalars(vec![("loadavg", 3.0), ("onumcpus", 2.0)]);
    assert_eq!(plug.eval_bool(&missing), Err(EvalError::Missing(Name::Scalar("idle".into()), 0)));
    assert_eq!(cfg.rules().len(), 2);
    assert_eq!(cfg.hotplug.as_ref().unwrap().line, 4);
}

#[test]
fn upstream_style_sample_config_parses() {
    let text = r#"# A sample in the style of the upstream cpuplugd.conf
#
CPU_MIN="1"
CPU_MAX="0"
UPDATE="1"
CMM_MIN="0"
CMM_MAX="131072"
CMM_INC="meminfo.MemFree / 40"
CMM_DEC="meminfo.MemTotal / 40"

pgscan_k="vmstat.pgscan_kswapd[0] - vmstat.pgscan_kswapd[2]"
pgsteal="vmstat.pgsteal_kswapd[0] - vmstat.pgsteal_kswapd[2]"
user_0="(cpustat.user[0] - cpustat.user[1])"
nice_0="(cpustat.nice[0] - cpustat.nice[1])"
system_0="(cpustat.system[0] - cpustat.system[1])"
total_0="(cpustat.total_ticks[0] - cpustat.total_ticks[1])"
CP_Active0="(user_0 + nice_0 + system_0) / total_0"
CP_ActiveAVG="CP_Active0"
idle_0="(cpustat.idle[0] - cpustat.idle[1]) / total_0"

HOTPLUG="((1 - CP_ActiveAVG) * onumcpus) < 0.08"
HOTUNPLUG="(CP_ActiveAVG * onumcpus) < (onumcpus - 1.5) & idle_0 > 0.5"
MEMPLUG="0"
MEMUNPLUG="0"
"#;
    let cfg = ok(text);
    assert!(cfg.cpu_control() && cfg.memory_rules());
    assert_eq!((cfg.cmm_min, cfg.cmm_max), (Some(0), Some(131_072)));
    assert_eq!(cfg.vars.len(), 9);
    assert_eq!(
        cfg.vars[0],
        ("pgscan_k".to_string(), "vmstat.pgscan_kswapd[0] - vmstat.pgscan_kswapd[2]".to_string())
    );
    assert_eq!(cfg.history_depth(), 1);
    let names = cfg.names();
    assert_eq!(names[&Name::Cpustat("total_ticks".into())], 1);
    assert_eq!(names[&Name::Meminfo("MemTotal".into())], 0);
    assert!(!names.contains_key(&Name::Vmstat("pgscan_kswapd".into())), "unused variables are not read");
    let never = &cfg.memplug.as_ref().unwrap().expr;
    assert_eq!(never.eval_bool(&Scalars(vec![])), Ok(false));
    assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
}

#[test]
fn history_depth_follows_the_deepest_index() {
    let cfg = ok(&cpu("CMM_MIN=\"0\"\nCMM_MAX=\"10\"\nCMM_INC=\"vmstat.pgscan_kswapd[0] - vmstat.pgscan_kswapd[5]\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"time[3] > 0\""));
    assert_eq!(cfg.history_depth(), 5);
    assert_eq!(cfg.names()[&Name::Scalar("time".into())], 3);
    let e = err(&cpu("HOTPLUG=\"time[101] > 1\""));
    assert_eq!((e.line, e.column), (6, 14));
}

#[test]
fn quotes_and_trailing_text() {
    let cfg = ok(&cpu("UPDATE=\"5\" # five seconds"));
    assert_eq!(cfg.update_s, Some(5));
    let e = err(&cpu("UPDATE=5"));
    assert_eq!((e.line, e.column), (6, 8));
    assert!(e.message.contains("UPDATE must be in double quotes"), "{e}");
    let e = err(&cpu("UPDATE=\"5"));
    assert_eq!((e.line, e.column), (6, 10));
    assert!(e.message.contains("missing closing `\"`"), "{e}");
    // The value runs to the LAST quote on the line: `5" # "x` is not a number.
    let e = err(&cpu("UPDATE=\"5\" # \"x\""));
    assert_eq!((e.line, e.column), (6, 10));
    assert!(e.message.starts_with("UPDATE: "), "{e}");
    // A `#` inside the quotes is part of the value.
    let e = err(&cpu("HOTPLUG=\"idle > 1 # x\""));
    assert_eq!((e.line, e.column), (6, 19));
}

#[test]
fn whitespace_is_deleted_and_columns_are_original() {
    let cfg = ok(&cpu("  U P DATE = \" 1 0 \"  "));
    assert_eq!(cfg.update_s, Some(10));
    let e = err(&cpu("UPDATE  =  \" 1 x\""));
    assert_eq!((e.line, e.column), (6, 16));
    let e = err(&cpu("\tHOTPLUG = \"idle >= 1\""));
    assert_eq!((e.line, e.column), (6, 18));
    assert!(e.message.contains("write `!(a < b)`"));
    let crlf = cpu("").replace('\n', "\r\n");
    assert_eq!(ok(&crlf).hotplug, ok(&cpu("")).hotplug);
}

#[test]
fn comments_only_in_the_first_column() {
    assert_eq!(ok(&cpu("#UPDATE=\"x\"")).update_s, Some(1));
    let e = err(&cpu("  # UPDATE=\"x\""));
    assert_eq!((e.line, e.column), (6, 3));
    assert!(e.message.contains("`#` starts a comment only in the first column"), "{e}");
}

#[test]
fn keys_are_whole_names_and_case_insensitive() {
    let cfg = ok(&cpu("update_rate=\"5\"\nUpdate=\"3\""));
    assert_eq!(cfg.update_s, Some(3));
    assert_eq!(cfg.vars, vec![("update_rate".to_string(), "5".to_string())]);
    assert!(
        cfg.warnings.iter().any(|w| w.starts_with("line 6, column 1: `update_rate` is a user variable here")
            && w.ends_with("reads it as UPDATE")),
        "{:?}",
        cfg.warnings
    );
    assert!(cfg
        .warnings
        .iter()
        .any(|w| w.starts_with("line 7, column 1: UPDATE is set again (previously on line 1)")));
}

#[test]
fn bad_names() {
    let cases: &[(&str, usize, &str)] = &[
        ("foo-bar=\"1\"", 4, "`foo-bar` is neither a key nor a valid variable name"),
        ("loadavg=\"1\"", 1, "`loadavg` is a predefined name"),
        ("meminfo=\"1\"", 1, "predefined"),
        ("2x=\"1\"", 1, "must not start with a digit"),
        ("=\"1\"", 1, "missing name before `=`"),
    ];
    for (line, column, message) in cases {
        let e = err(&cpu(line));
        assert_eq!((e.line, e.column), (6, *column), "{line}: {e}");
        assert!(e.message.contains(message), "{line}: {e}");
    }
    let long = format!("{}=\"1\"", "v".repeat(MAX_VAR_NAME + 1));
    assert!(err(&cpu(&long)).message.contains("longer than 128"));
    assert!(parse_config(&cpu(&format!("{}=\"1\"", "v".repeat(MAX_VAR_NAME)))).is_ok());
    // Predefined words are case-sensitive, so `Loadavg` is a fine variable.
    assert!(parse_config(&cpu("Loadavg=\"1\"")).is_ok());
}

#[test]
fn numbers_are_digits_only_and_errors_name_the_key() {
    for (line, key, column) in [
        ("CPU_MIN=\"-1\"", "CPU_MIN", 10),
        ("CMM_MAX=\"1.5\"", "CMM_MAX", 11),
        ("UPDATE=\"+2\"", "UPDATE", 9),
    ] {
        let e = err(&cpu(line));
        assert_eq!((e.line, e.column), (6, column), "{e}");
        assert!(e.message.starts_with(&format!("{key}: ")) && e.message.contains("digits only"), "{e}");
    }
    let e = err(&cpu("CPU_MAX=\"4294967296\""));
    assert!(e.message.contains("CPU_MAX: `4294967296` is too large"), "{e}");
    let e = err(&cpu("UPDATE=\"\""));
    assert_eq!((e.line, e.column, e.message.as_str()), (6, 9, "UPDATE must be at least 1 (seconds)"));
    let e = err(&cpu("CPU_MIN=\"0\""));
    assert_eq!((e.line, e.message.as_str()), (6, "CPU_MIN must be at least 1"));
}

#[test]
fn cpu_max_zero_and_ordering() {
    let cfg = ok(&cpu("CPU_MIN=\"4\"\nCPU_MAX=\"0\""));
    assert_eq!((cfg.cpu_min, cfg.cpu_max), (Some(4), Some(0)));
    let e = err(&cpu("CPU_MIN=\"4\"\nCPU_MAX=\"2\""));
    assert_eq!((e.line, e.column), (7, 10));
    assert!(e.message.starts_with("CPU_MAX (2) is less than CPU_MIN (4)"), "{e}");
    assert!(parse_config(&cpu("CPU_MIN=\"2\"\nCPU_MAX=\"2\"")).is_ok());
}

#[test]
fn repeated_variable_is_an_error() {
    let e = err(&cpu("v=\"1\"\n\nv=\"2\""));
    assert_eq!((e.line, e.column), (8, 1));
    assert_eq!(e.message, "variable `v` is already defined on line 6");
}

#[test]
fn forward_references_and_cycles() {
    let cfg = ok("UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"busy\"\nHOTUNPLUG=\"!busy\"\nbusy=\"idle < 10\"");
    assert_eq!(cfg.hotunplug.as_ref().unwrap().expr.parenthesised(), "(!(idle < 10))");
    let e = err(&cpu("a=\"b + 1\"\nb=\"  2 * a\""));
    assert_eq!((e.line, e.column), (7, 10));
    assert!(e.message.ends_with("variable cycle: a -> b -> a"), "{e}");
}

#[test]
fn errors_inside_variables_point_at_the_variable() {
    let text = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"v > 1\"\nHOTUNPLUG=\"0\"\nv=\"idle +\"";
    let e = err(text);
    assert_eq!((e.line, e.column, e.message.as_str()), (6, 10, "unexpected end of expression"));
    // Unused variables are checked too.
    let e = err(&cpu("unused=\"loadavg[1]\""));
    assert_eq!((e.line, e.column), (6, 16));
    let e = err(&cpu("v=\"\""));
    assert_eq!((e.line, e.column, e.message.as_str()), (6, 4, "empty expression"));
}

#[test]
fn rules_and_variables_keep_the_text_as_written() {
    let cfg = ok(&cpu("HOTPLUG = \"busy &  idle < 5\"\nbusy = \" loadavg > 2 \""));
    let rule = cfg.hotplug.as_ref().unwrap();
    assert_eq!(rule.text, "busy &  idle < 5");
    assert_eq!(cfg.vars, vec![("busy".to_string(), " loadavg > 2 ".to_string())]);
    assert_eq!(parse_expr(&rule.text, &cfg.vars).unwrap(), rule.expr);
}

#[test]
fn type_rules_per_key() {
    let e = err(&mem_only("CMM_INC=\"meminfo.MemFree > 40\""));
    assert!(e.message.starts_with("CMM_INC must be a number of pages"), "{e}");
    assert_eq!(e.column, 10);
    assert!(err(&mem_only("CMM_DEC=\"!1\"")).message.starts_with("CMM_DEC must be a number"));
    let cfg = ok(&cpu("HOTPLUG=\"idle\"\nHOTUNPLUG=\"idle * 2\""));
    assert_eq!(cfg.hotplug.unwrap().expr.ty(), crate::Ty::Num);
    let e = err(&cpu("HOTPLUG=\"(idle > 1) + 1\""));
    assert_eq!((e.line, e.column), (6, 21));
}

fn mem_only(extra: &str) -> String {
    format!("UPDATE=\"2\"\nCMM_MIN=\"0\"\nCMM_MAX=\"100\"\nCMM_INC=\"10\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"1\"\n{extra}")
}

#[test]
fn memory_only_config_and_cmm_dec_default() {
    let cfg = ok(&mem_only(""));
    assert!(cfg.memory_rules() && !cfg.cpu_control());
    assert_eq!(cfg.cmm_dec_or_inc().unwrap().text, "10");
    let cfg = ok(&mem_only("CMM_DEC=\"20\""));
    assert_eq!(cfg.cmm_dec_or_inc().unwrap().text, "20");
    let cfg = ok(&mem_only("CPU_MIN=\"2\""));
    assert!(cfg
        .warnings
        .iter()
        .any(|w| w.starts_with("line 7, column 10: CPU control is missing CPU_MAX, HOTPLUG, HOTUNPLUG")));
}

#[test]
fn missing_keys() {
    let e = err("CPU_MIN=\"1\"\n");
    assert_eq!((e.line, e.column), (2, 1));
    assert!(e.message.starts_with("UPDATE is missing"), "{e}");
    let e = err("UPDATE=\"1\"\nHOTPLUG=\"\"");
    assert_eq!((e.line, e.column), (2, 11));
    assert_eq!(
        e.message,
        "neither CPU nor memory control is complete: CPU control is missing CPU_MIN, CPU_MAX, HOTPLUG, \
         HOTUNPLUG; memory control is missing CMM_MIN, CMM_MAX, CMM_INC, MEMPLUG, MEMUNPLUG"
    );
    let e = err(&mem_only("CMM_MIN=\"200\""));
    assert!(
        e.message.ends_with("memory control is off because CMM_MAX (100) is less than CMM_MIN (200)"),
        "{e}"
    );
    let cfg = ok(&cpu("CMM_MIN=\"200\"\nCMM_MAX=\"100\""));
    assert!(!cfg.memory_rules());
    assert!(cfg.warnings.iter().any(|w| w.contains("memory control is missing CMM_INC, MEMPLUG, MEMUNPLUG")));
    assert!(err("").message.starts_with("UPDATE is missing"));
}

#[test]
fn empty_rule_counts_as_missing_and_repeated_keys_last_wins() {
    let e = err(&cpu("HOTUNPLUG=\"\""));
    assert!(e.message.contains("CPU control is missing HOTUNPLUG"), "{e}");
    let cfg = ok(&cpu("HOTPLUG=\"0\""));
    assert_eq!(cfg.hotplug.as_ref().unwrap().text, "0");
    assert_eq!(cfg.hotplug.unwrap().expr.eval_bool(&Scalars(vec![])), Ok(false));
}

#[test]
fn long_lines_and_ignored_lines() {
    let long = format!("# {}", "x".repeat(MAX_LINE));
    let e = err(&cpu(&long));
    assert_eq!((e.line, e.column), (6, MAX_LINE + 1));
    let fits = format!("#{}", "x".repeat(MAX_LINE - 1));
    assert!(parse_config(&cpu(&fits)).is_ok());
    let cfg = ok(&cpu("UPDATE 5\n\n   \n"));
    assert_eq!(cfg.update_s, Some(1));
    assert_eq!(cfg.warnings, vec!["line 6, column 1: no `=` on this line, so it is ignored".to_string()]);
}

#[test]
fn unary_readings_that_differ_from_upstream_are_warned() {
    let cfg = ok(&cpu("HOTPLUG=\"-idle + 5 > 1\"\nv=\"(!idle & user)\"\nHOTUNPLUG=\"v\""));
    assert_eq!(cfg.hotplug.as_ref().unwrap().expr.parenthesised(), "(((-idle) + 5) > 1)");
    let unary: Vec<&String> = cfg.warnings.iter().filter(|w| w.contains("binds tightly")).collect();
    assert_eq!(unary.len(), 2, "{:?}", cfg.warnings);
    assert!(unary[0].starts_with("line 6, column 10: unary `-`"), "{}", unary[0]);
    assert!(unary[1].starts_with("line 7, column 5: unary `!`"), "{}", unary[1]);
}

#[test]
fn reload_keeps_keys_the_new_text_omits() {
    let base = ok(&cpu("v=\"1\""));
    let cfg = parse_config_over(&base, "UPDATE=\"7\"").unwrap();
    assert_eq!((cfg.update_s, &cfg.hotplug), (Some(7), &base.hotplug));
    assert!(cfg.vars.is_empty());
    let e = parse_config_over(&base, "CPU_MAX=\"0\"\nCPU_MIN=\"0\"").unwrap_err();
    assert_eq!((e.line, e.message.as_str()), (2, "CPU_MIN must be at least 1"));
}

#[test]
fn a_variable_parses_the_same_wherever_it_is_first_used() {
    // Nesting counts per text, so the deeply nested rule may use the deeply nested variable,
    // and `parse_expr` on a loaded rule gives the same tree as the config did.
    let deep = |inner: &str| format!("{}{inner}{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
    for order in [0, 1] {
        let (rule, var) = (format!("HOTPLUG=\"{}\"", deep("v")), format!("v=\"{}\"", deep("idle")));
        let extra = if order == 0 { format!("{rule}\n{var}") } else { format!("{var}\n{rule}") };
        let cfg = ok(&cpu(&extra));
        let hotplug = cfg.hotplug.as_ref().unwrap();
        assert_eq!(hotplug.expr.parenthesised(), "idle");
        assert_eq!(parse_expr(&hotplug.text, &cfg.vars).unwrap(), hotplug.expr);
    }
}

#[test]
fn name_sites_give_the_line_and_column_as_written() {
    let text = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG = \"idle <  meminfo.MemFre\"\n\
                HOTUNPLUG=\"low | low\"\nlow = \" vmstat.pgpgin[2] > 1\"";
    let sites = ok(text).name_sites();
    let at = |line, column| crate::Site { line, column };
    assert_eq!(
        sites,
        vec![
            (Name::Scalar("idle".into()), at(4, 12)),
            (Name::Meminfo("MemFre".into()), at(4, 20)),
            (Name::Vmstat("pgpgin".into()), at(6, 9)),
        ],
        "a name inside a variable is at the variable's line, and listed once"
    );
}
