//! Property tests: arbitrary text never panics and errors point into the text; generated
//! expressions parse to the intended tree; the parenthesised form re-parses to the same tree and
//! evaluates the same; generated configs read back their values.

use crate::expr::{BinOp, Expr, Node, Site, Ty};
use crate::names::Name;
use crate::source::is_space;
use crate::{parse_config, parse_expr, ConfigError, Values};
use proptest::prelude::*;

/// A generated expression; `Paren` adds redundant parentheses.
#[derive(Debug, Clone)]
enum G {
    Num(f64),
    Get(Name, usize),
    Neg(Box<G>),
    Not(Box<G>),
    Bin(BinOp, Box<G>, Box<G>),
    Paren(Box<G>),
}

const OPS: [BinOp; 8] =
    [BinOp::Or, BinOp::And, BinOp::Lt, BinOp::Gt, BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div];

fn leaf() -> impl Strategy<Value = G> {
    let nums = prop_oneof![
        (0u32..200).prop_map(|n| G::Num(f64::from(n))),
        (0u32..400).prop_map(|n| G::Num(f64::from(n) / 4.0)),
        Just(G::Num(1e3)),
        Just(G::Num(0.75)),
    ];
    let scalars = prop::sample::select(vec!["idle", "user", "loadavg", "onumcpus", "freemem"]);
    let names = prop_oneof![
        scalars.prop_map(|s| G::Get(Name::Scalar(s.into()), 0)),
        (0usize..4).prop_map(|b| G::Get(Name::Scalar("time".into()), b)),
        (0usize..3).prop_map(|b| G::Get(Name::Meminfo("MemFree".into()), b)),
        (0usize..101).prop_map(|b| G::Get(Name::Cpustat("total_ticks".into()), b)),
        Just(G::Get(Name::Vmstat("pgalloc_dma32".into()), 0)),
    ];
    prop_oneof![nums, names]
}

fn tree() -> impl Strategy<Value = G> {
    leaf().prop_recursive(6, 48, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|g| G::Neg(Box::new(g))),
            inner.clone().prop_map(|g| G::Not(Box::new(g))),
            inner.clone().prop_map(|g| G::Paren(Box::new(g))),
            (prop::sample::select(OPS.to_vec()), inner.clone(), inner).prop_map(|(op, l, r)| G::Bin(
                op,
                Box::new(l),
                Box::new(r)
            )),
        ]
    })
}

/// The type `g` has after `fix`.
fn ty(g: &G) -> Ty {
    match g {
        G::Num(_) | G::Get(..) | G::Neg(_) => Ty::Num,
        G::Not(_) => Ty::Bool,
        G::Bin(op, ..) => op.result(),
        G::Paren(g) => ty(g),
    }
}

/// Makes a tree well-typed: a boolean where a number is needed becomes `idle`; `-bool` becomes `!bool`.
fn fix(g: G) -> G {
    let num = |g: G| if ty(&g) == Ty::Bool { G::Get(Name::Scalar("idle".into()), 0) } else { g };
    match g {
        G::Neg(e) => {
            let e = fix(*e);
            if ty(&e) == Ty::Bool {
                G::Not(Box::new(e))
            } else {
                G::Neg(Box::new(e))
            }
        }
        G::Not(e) => G::Not(Box::new(fix(*e))),
        G::Paren(e) => G::Paren(Box::new(fix(*e))),
        G::Bin(op, l, r) if op.needs_numbers() => G::Bin(op, Box::new(num(fix(*l))), Box::new(num(fix(*r)))),
        G::Bin(op, l, r) => G::Bin(op, Box::new(fix(*l)), Box::new(fix(*r))),
        leaf => leaf,
    }
}

/// The tree the parser should build (constant negation folded, parentheses dropped).
fn expected(g: &G) -> Expr {
    let node = match g {
        G::Num(x) => Node::Num(*x),
        G::Get(n, b) => Node::Get(n.clone(), *b, Site::default()),
        G::Neg(e) => match expected(e).node {
            Node::Num(x) => Node::Num(-x),
            other => Node::Neg(Box::new(Expr::new(other))),
        },
        G::Not(e) => Node::Not(Box::new(expected(e))),
        G::Bin(op, l, r) => Node::Bin(*op, Box::new(expected(l)), Box::new(expected(r))),
        G::Paren(e) => return expected(e),
    };
    Expr::new(node)
}

/// The documented precedence, written out independently of the parser's table.
fn prec(op: BinOp) -> u8 {
    match op.symbol() {
        "|" => 1,
        "&" => 2,
        "<" | ">" => 3,
        "+" | "-" => 4,
        _ => 5,
    }
}

/// Tokens with the fewest parentheses precedence and left-associativity allow.
fn render(g: &G, out: &mut Vec<String>) {
    match g {
        G::Num(x) => out.push(x.to_string()),
        G::Get(n, 0) => out.push(n.to_string()),
        G::Get(n, b) => out.push(format!("{n}[{b}]")),
        G::Neg(e) | G::Not(e) => {
            out.push(if matches!(g, G::Neg(_)) { "-" } else { "!" }.into());
            child(e, 6, false, out);
        }
        G::Bin(op, l, r) => {
            child(l, prec(*op), false, out);
            out.push(op.symbol().into());
            child(r, prec(*op), true, out);
        }
        G::Paren(e) => {
            out.push("(".into());
            render(e, out);
            out.push(")".into());
        }
    }
}

fn child(g: &G, level: u8, right: bool, out: &mut Vec<String>) {
    let needs = matches!(g, G::Bin(op, ..) if prec(*op) < level || (right && prec(*op) == level));
    if needs {
        out.push("(".into());
    }
    render(g, out);
    if needs {
        out.push(")".into());
    }
}

/// Joins tokens with generated whitespace.
fn join(tokens: &[String], gaps: &[u8]) -> String {
    let mut text = String::new();
    for (i, t) in tokens.iter().enumerate() {
        text.push_str(match gaps.get(i).copied().unwrap_or(0) % 4 {
            0 | 1 => "",
            2 => " ",
            _ => "\t ",
        });
        text.push_str(t);
    }
    text
}

/// Deterministic values, including zeros and negatives (so division by zero happens).
struct Fake;
impl Values for Fake {
    fn value(&self, name: &Name, back: usize) -> Option<f64> {
        Some(((name.field().len() * 7 + back * 3) % 11) as f64 - 3.0)
    }
}

/// An error's column is inside `line` (or one past it) and never on deleted whitespace.
fn points_into(line: &str, column: usize) -> bool {
    let chars: Vec<char> = line.chars().collect();
    column >= 1 && (column == chars.len() + 1 || (column <= chars.len() && !is_space(chars[column - 1])))
}

fn config_error_points_into(text: &str, e: &ConfigError) -> bool {
    let lines: Vec<&str> = text.split('\n').collect();
    e.line >= 1 && e.line <= lines.len() && points_into(lines[e.line - 1].trim_end_matches('\r'), e.column)
}

const EXPR_BITS: &[&str] = &[
    "idle", "time", "[", "]", "1", "0.5", "2e3", "(", ")", "+", "-", "*", "/", "<", ">", "&", "|", "!", "=",
    " ", "meminfo.", "MemFree", "cpustat.", "loadavg", "v", ".", "#", "\t", "9999",
];
const CONFIG_BITS: &[&str] = &[
    "UPDATE",
    "CPU_MIN",
    "cpu_max",
    "HOTPLUG",
    "HOTUNPLUG",
    "CMM_INC",
    "MEMPLUG",
    "update_rate",
    "v",
    "=",
    "\"",
    "\n",
    "#",
    " ",
    "1",
    "0",
    "idle",
    ">",
    "(",
    ")",
    "-",
    "!",
    "time[2]",
    "v+1",
];

fn soup(bits: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(bits), 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        if let Err(e) = parse_expr(&text, &[]) {
            prop_assert_eq!(e.line, 1);
            prop_assert!(points_into(&text, e.column), "{}: {}", text, e);
        }
        if let Err(e) = parse_config(&text) {
            prop_assert!(config_error_points_into(&text, &e), "{:?}: {}", text, e);
        }
    }

    #[test]
    fn token_soup_errors_point_into_the_text(text in soup(EXPR_BITS)) {
        match parse_expr(&text, &[]) {
            Ok(e) => prop_assert_eq!(parse_expr(&e.parenthesised(), &[]).unwrap(), e),
            Err(e) => prop_assert!(points_into(&text, e.column), "{:?}: {}", text, e),
        }
    }

    #[test]
    fn config_soup_errors_point_into_the_text(text in soup(CONFIG_BITS)) {
        if let Err(e) = parse_config(&text) {
            prop_assert!(config_error_points_into(&text, &e), "{:?}: {}", text, e);
        }
    }

    #[test]
    fn generated_expressions_parse_to_the_intended_tree(g in tree(), gaps in prop::collection::vec(any::<u8>(), 64)) {
        let g = fix(g);
        let mut tokens = Vec::new();
        render(&g, &mut tokens);
        let text = join(&tokens, &gaps);
        let parsed = parse_expr(&text, &[]).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        prop_assert_eq!(&parsed, &expected(&g), "{}", text);
        prop_assert_eq!(parsed.ty(), ty(&g));
    }

    #[test]
    fn parenthesised_form_round_trips(g in tree()) {
        let e = expected(&fix(g));
        let text = e.parenthesised();
        let again = parse_expr(&text, &[]).map_err(|err| TestCaseError::fail(format!("{text}: {err}")))?;
        prop_assert_eq!(&again, &e);
        prop_assert_eq!(again.eval_num(&Fake), e.eval_num(&Fake));
        prop_assert_eq!(again.eval_bool(&Fake), e.eval_bool(&Fake));
        prop_assert_eq!(again.names(), e.names());
    }

    #[test]
    fn variables_expand_like_parentheses(a in tree(), b in tree()) {
        let (a, b) = (expected(&fix(a)), expected(&fix(b)));
        let vars = vec![("va".to_string(), a.parenthesised()), ("vb".to_string(), b.parenthesised())];
        let direct = format!("({}) & ({})", a.parenthesised(), b.parenthesised());
        prop_assert_eq!(parse_expr("va & vb", &vars).unwrap(), parse_expr(&direct, &[]).unwrap());
    }

    #[test]
    fn generated_configs_read_back(
        update in 1u64..1_000_000,
        min in 1u32..64,
        max in 0u32..128,
        upper in any::<bool>(),
        pad in "[ \t]{0,3}",
        comment in any::<bool>(),
    ) {
        let key = |k: &str| if upper { k.to_string() } else { k.to_ascii_lowercase() };
        let tail = if comment { " # note" } else { "" };
        let text = format!(
            "{}{pad}={pad}\"{update}\"{tail}\n{}=\"{pad}{min}\"\n{}=\"{max}{pad}\"\nHOTPLUG=\"idle<1\"\nHOTUNPLUG=\"0\"\n",
            key("UPDATE"), key("CPU_MIN"), key("CPU_MAX"),
        );
        match parse_config(&text) {
            Ok(cfg) => {
                prop_assert!(max == 0 || max >= min);
                prop_assert_eq!((cfg.update_s, cfg.cpu_min, cfg.cpu_max), (Some(update), Some(min), Some(max)));
                prop_assert!(cfg.cpu_control());
            }
            Err(e) => {
                prop_assert!(max != 0 && max < min, "{}", e);
                prop_assert_eq!(e.line, 3);
            }
        }
    }
}
