//! Parser tests: precedence, unary binding, types, names, variables, errors with columns, limits.

use super::*;
use crate::{parse_expr, ConfigError};

fn vars(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect()
}

fn p(text: &str) -> String {
    parse_expr(text, &[]).unwrap_or_else(|e| panic!("{text}: {e}")).parenthesised()
}

fn err(text: &str) -> ConfigError {
    parse_expr(text, &[]).expect_err(text)
}

fn value(text: &str) -> f64 {
    struct NoValues;
    impl crate::Values for NoValues {
        fn value(&self, _: &Name, _: usize) -> Option<f64> {
            None
        }
    }
    parse_expr(text, &[]).unwrap().eval_num(&NoValues).unwrap()
}

/// Notes (upstream-differs warnings) for a text: positions in the stripped text.
fn notes(text: &str) -> Vec<usize> {
    let mut env = Env::new(Vec::new());
    env.parse_top(&Source::strip(1, text)).unwrap();
    env.notes.iter().map(|n| n.pos).collect()
}

#[test]
fn precedence_and_associativity() {
    assert_eq!(p("1+2*3"), "(1 + (2 * 3))");
    assert_eq!(p("idle|user&nice"), "(idle | (user & nice))");
    assert_eq!(p("1<2&3>2|0"), "(((1 < 2) & (3 > 2)) | 0)");
    assert_eq!(p("10-2-3"), "((10 - 2) - 3)");
    assert_eq!(value("10-2-3"), 5.0);
    assert_eq!(value("64/4/2"), 8.0);
    assert_eq!(value("2*(3+4)"), 14.0);
    assert_eq!(p("idle+user<nice*2"), "((idle + user) < (nice * 2))");
}

#[test]
fn unary_binds_tightly() {
    assert_eq!(p("-idle+user"), "((-idle) + user)");
    assert_eq!(p("user*-idle+nice"), "((user * (-idle)) + nice)");
    assert_eq!(p("user&!idle|nice"), "((user & (!idle)) | nice)");
    assert_eq!(p("!(idle>1)|user"), "((!(idle > 1)) | user)");
    assert_eq!(p("!idle&user"), "((!idle) & user)");
    assert_eq!(p("--idle"), "(-(-idle))");
    assert_eq!(p("!!idle"), "(!(!idle))");
}

#[test]
fn bang_before_a_comparison_is_a_type_error() {
    // Upstream reads `!a>b|c` as `!(a>b|c)`; here `!a` is a boolean and cannot be compared.
    let e = err("!idle>1|user");
    assert_eq!(e.column, 6);
    assert!(e.message.contains("`>` needs numbers, but its left side `(!idle)` is a boolean"), "{e}");
}

#[test]
fn negative_literals_and_folding() {
    assert_eq!(p("-5*2"), "(-5 * 2)");
    assert_eq!(p("- 5"), "-5");
    assert_eq!(p("-(5)"), "-5");
    assert_eq!(p("--5"), "5");
    assert_eq!(p("2--3"), "(2 - -3)");
    assert_eq!(value("2--3"), 5.0);
    assert_eq!(value("-2*-3"), 6.0);
}

#[test]
fn whitespace_is_deleted_everywhere() {
    assert_eq!(p("(1 2)"), "12");
    assert_eq!(p(" load avg\t>\n1"), "(loadavg > 1)");
    assert_eq!(p("time [ 2 ]"), "time[2]");
}

#[test]
fn numbers() {
    assert_eq!(p("0.75"), "0.75");
    assert_eq!(p("1e3"), "1000");
    assert_eq!(p("10.0"), "10");
    let e = err("idle > .5");
    assert_eq!((e.column, e.message.contains("0.5")), (8, true));
}

#[test]
fn type_errors_have_columns() {
    let e = err("(idle>1)+1");
    assert_eq!(e.column, 9);
    assert!(e.message.contains("`+` needs numbers, but its left side `(idle > 1)` is a boolean"), "{e}");
    let e = err("idle<user<nice");
    assert_eq!(e.column, 10);
    assert!(e.message.contains("cannot be chained"), "{e}");
    let e = err("1 + (idle > 2)");
    assert_eq!(e.column, 3);
    assert!(e.message.contains("right side"), "{e}");
    let e = err("-(idle>1)");
    assert_eq!(e.column, 1);
    assert!(e.message.contains("unary `-` needs a number"), "{e}");
    // `& | !` take numbers; their results are booleans.
    assert_eq!(parse_expr("idle & 1 | !0", &[]).unwrap().ty(), Ty::Bool);
    assert_eq!(parse_expr("idle * 2", &[]).unwrap().ty(), Ty::Num);
}

#[test]
fn rejected_operators_have_hints_and_columns() {
    let e = err("  idle   >=  1");
    assert_eq!((e.line, e.column), (1, 10));
    assert_eq!(e.message, "`>=` is not in the language; write `!(a < b)`");
    assert!(err("idle == 1").message.contains("`==`"));
    assert!(err("idle && 1").message.contains("write `&`"));
    assert!(err("idle % 2").message.contains("`%`"));
}

#[test]
fn syntax_errors() {
    let cases: &[(&str, usize, &str)] = &[
        ("", 1, "empty expression"),
        ("   ", 4, "empty expression"),
        ("1+", 3, "unexpected end of expression"),
        ("(idle", 6, "missing `)` to close the `(` at column 1"),
        ("idle)", 5, "unmatched `)`"),
        ("()", 2, "empty parentheses"),
        ("(1)(2)", 4, "expected an operator before `(`"),
        ("(1 idle)", 4, "malformed number"),
        ("(idle 3)", 2, "unknown name `idle3`"),
        ("(idle!1)", 6, "expected an operator or `)` before `!`"),
        ("*2", 1, "expected a number, name, `(`, `!` or `-` before `*`"),
        ("idle+*2", 6, "before `*`"),
        ("idle $", 6, "unexpected character `$`"),
    ];
    for (text, column, message) in cases {
        let e = err(text);
        assert_eq!(e.column, *column, "{text}: {e}");
        assert!(e.message.contains(message), "{text}: {e}");
    }
}

#[test]
fn names_and_history() {
    let e = parse_expr("meminfo.MemFree[2] + meminfo.MemFree + time[5] - vmstat.pgalloc_dma32", &[]).unwrap();
    let names = e.names();
    assert_eq!(names[&Name::Meminfo("MemFree".into())], 2);
    assert_eq!(names[&Name::Scalar("time".into())], 5);
    assert_eq!(names[&Name::Vmstat("pgalloc_dma32".into())], 0);
    assert_eq!(p("cpustat.total_ticks[100]"), "cpustat.total_ticks[100]");
    assert_eq!(p("time[0]"), "time");
}

#[test]
fn name_errors() {
    let cases: &[(&str, usize, &str)] = &[
        ("loadavg[1]", 8, "`cpustat.loadavg[N]` has history"),
        ("freemem[1]", 8, "takes no `[N]`"),
        ("time[101]", 5, "history index 101"),
        ("time[99999999999999999999]", 5, "history index too large"),
        ("cpustat.bogus", 9, "unknown `cpustat.bogus`"),
        ("cpustat.idel", 9, "did you mean `idle`"),
        ("meminfo", 1, "`meminfo` needs a field"),
        ("1+meminfo.", 11, "missing name after `meminfo.`"),
        ("proc.x", 1, "unknown family `proc`"),
        ("runable_proc", 1, "did you mean `runnable_proc`"),
        ("abs(idle)", 1, "there are no functions"),
        ("foo", 1, "unknown name `foo`"),
    ];
    for (text, column, message) in cases {
        let e = err(text);
        assert_eq!(e.column, *column, "{text}: {e}");
        assert!(e.message.contains(message), "{text}: {e}");
    }
}

#[test]
fn variables_are_inlined() {
    let v = vars(&[("v", "1+2")]);
    let e = parse_expr("2*v", &v).unwrap();
    assert_eq!(e.parenthesised(), "(2 * (1 + 2))");
    assert_eq!(value_with(&e), 6.0);
    let v = vars(&[("a", "b * 2"), ("b", "idle")]);
    assert_eq!(parse_expr("a + b", &v).unwrap().parenthesised(), "((idle * 2) + idle)");
    let e = err_with("a[1]", &v);
    assert_eq!((e.column, e.message.as_str()), (2, "variable `a` takes no `[N]`"));
    let e = err_with("xa", &v);
    assert!(e.message.contains("did you mean `a`"), "{e}");
}

fn value_with(e: &Expr) -> f64 {
    e.eval_num(&std::collections::HashMap::new()).unwrap()
}

fn err_with(text: &str, v: &[(String, String)]) -> ConfigError {
    parse_expr(text, v).expect_err(text)
}

#[test]
fn variable_errors_point_at_the_use() {
    let v = vars(&[("v", "1 +"), ("w", "idle > 1"), ("u", "v")]);
    let e = err_with("2 * v", &v);
    assert_eq!(e.column, 5);
    assert_eq!(e.message, "in variable `v` (column 4 of its text): unexpected end of expression");
    let e = err_with("1+u", &v);
    assert_eq!(e.column, 3);
    assert!(e.message.starts_with("in variable `v`"), "{e}");
    let e = err_with("w + 1", &v);
    assert_eq!(e.column, 3);
    assert!(e.message.contains("`(idle > 1)` is a boolean"), "{e}");
}

#[test]
fn cycles_are_named() {
    let v = vars(&[("a", "b + 1"), ("b", "2 * a"), ("c", "c")]);
    let e = err_with("a", &v);
    assert!(e.message.ends_with("variable cycle: a -> b -> a"), "{e}");
    assert_eq!(e.column, 1);
    assert!(err_with("1+c", &v).message.ends_with("variable cycle: c -> c"));
}

#[test]
fn nesting_limit() {
    let ok = format!("{}1{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
    assert_eq!(p(&ok), "1");
    let deep = format!("{}1{}", "(".repeat(MAX_DEPTH + 1), ")".repeat(MAX_DEPTH + 1));
    assert!(err(&deep).message.contains("nested too deeply"));
    let long_sum = vec!["1"; MAX_DEPTH + 1].join("+");
    let e = err(&long_sum);
    assert!(e.message.contains("nested too deeply"), "{e}");
    assert_eq!(value(&vec!["1"; MAX_DEPTH].join("+")), MAX_DEPTH as f64);
    let bangs = format!("{}1", "!".repeat(MAX_DEPTH + 1));
    assert!(err(&bangs).message.contains("nested too deeply"));
}

#[test]
fn size_limit_stops_exponential_variables() {
    let mut v = vec![("v0".to_string(), "idle".to_string())];
    for i in 1..20 {
        v.push((format!("v{i}"), format!("v{} + v{}", i - 1, i - 1)));
    }
    let e = err_with("v19", &v);
    assert!(e.message.contains("expression too large"), "{e}");
    assert!(parse_expr("v8", &v).is_ok());
}

#[test]
fn upstream_unary_notes() {
    assert_eq!(notes("-idle+1"), vec![0]);
    assert_eq!(notes("(-idle+1)"), vec![1]);
    assert_eq!(notes("-idle*2"), Vec::<usize>::new());
    assert_eq!(notes("-idle*2+1"), vec![0]);
    assert_eq!(notes("-idle/(1+2)*3"), Vec::<usize>::new());
    assert_eq!(notes("user*-idle+nice"), Vec::<usize>::new());
    assert_eq!(notes("user+-idle*nice"), Vec::<usize>::new());
    assert_eq!(notes("user+-idle+nice"), Vec::<usize>::new());
    assert_eq!(notes("user<-idle+nice"), vec![5]);
    assert_eq!(notes("!idle&user"), vec![0]);
    assert_eq!(notes("user&!idle|nice"), Vec::<usize>::new());
    assert_eq!(notes("-5+idle"), Vec::<usize>::new());
    assert_eq!(notes("--5+idle"), vec![0]);
}

#[test]
fn long_variable_chains_need_no_deep_recursion() {
    let n = 5000;
    let mut v: Vec<(String, String)> = (0..n).map(|i| (format!("v{i}"), format!("((v{}))", i + 1))).collect();
    v.push((format!("v{n}"), "idle".to_string()));
    assert_eq!(parse_expr("v0 * 2", &v).unwrap().parenthesised(), "(idle * 2)");
    // A chain that builds depth hits the depth limit inside a variable, reported at the use.
    let mut v: Vec<(String, String)> =
        (0..300).map(|i| (format!("w{i}"), format!("w{} + 1", i + 1))).collect();
    v.push(("w300".to_string(), "idle".to_string()));
    let e = err_with("1 + w0", &v);
    assert_eq!(e.column, 5);
    assert!(e.message.contains("nested too deeply"), "{e}");
}
