//! The expression tree: types, evaluation, the fully parenthesised form and the names it reads.

use crate::names::{Name, Values};
use std::collections::BTreeMap;
use std::fmt;

/// The type of an expression: a comparison/logic result or a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Bool,
    Num,
}

/// A binary operator, from lowest to highest precedence: `|`, `&`, `< >`, `+ -`, `* /`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Or,
    And,
    Lt,
    Gt,
    Add,
    Sub,
    Mul,
    Div,
}

impl BinOp {
    /// Binding strength, 1 (`|`) to 5 (`*` `/`); all are left-associative.
    pub fn prec(self) -> u8 {
        match self {
            BinOp::Or => 1,
            BinOp::And => 2,
            BinOp::Lt | BinOp::Gt => 3,
            BinOp::Add | BinOp::Sub => 4,
            BinOp::Mul | BinOp::Div => 5,
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Or => "|",
            BinOp::And => "&",
            BinOp::Lt => "<",
            BinOp::Gt => ">",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
        }
    }

    /// The result type.
    pub fn result(self) -> Ty {
        match self {
            BinOp::Or | BinOp::And | BinOp::Lt | BinOp::Gt => Ty::Bool,
            _ => Ty::Num,
        }
    }

    /// Whether the operands must be numbers (`&` and `|` also take booleans).
    pub fn needs_numbers(self) -> bool {
        !matches!(self, BinOp::Or | BinOp::And)
    }
}

/// Where a name is written: the 1-based line and column (in the line as written) of its first
/// character. A name inside a user variable is at its place in the variable's definition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Site {
    pub line: usize,
    pub column: usize,
}

/// A node of the tree. Equality ignores [`Site`]s: two trees are equal when they mean the same,
/// wherever their names are written.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    Num(f64),
    /// A name, its history index `[N]` and where it is written.
    Get(Name, usize, Site),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
}

impl PartialEq for Node {
    fn eq(&self, other: &Node) -> bool {
        match (self, other) {
            (Node::Num(a), Node::Num(b)) => a == b,
            (Node::Get(a, i, _), Node::Get(b, j, _)) => a == b && i == j,
            (Node::Neg(a), Node::Neg(b)) | (Node::Not(a), Node::Not(b)) => a == b,
            (Node::Bin(o, l, r), Node::Bin(p, m, s)) => o == p && l == m && r == s,
            _ => false,
        }
    }
}

/// A parsed, type-checked expression with user variables already inlined.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub(crate) node: Node,
}

/// Why an evaluation produced no value; the daemon skips that interval's step.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    /// The provider has no value for this name at this history index.
    #[error("no value for `{0}` {1} sample(s) back")]
    Missing(Name, usize),
    /// An intermediate or final result is infinite or NaN (division by zero, overflow).
    #[error("result is not a finite number (division by zero or overflow)")]
    NotFinite,
}

impl Expr {
    pub(crate) fn new(node: Node) -> Expr {
        Expr { node }
    }

    /// The type: Bool for `< > & | !`, Num otherwise.
    pub fn ty(&self) -> Ty {
        match &self.node {
            Node::Num(_) | Node::Get(..) | Node::Neg(_) => Ty::Num,
            Node::Not(_) => Ty::Bool,
            Node::Bin(op, ..) => op.result(),
        }
    }

    /// Fully parenthesised, variables expanded, e.g. `((loadavg > (onumcpus + 0.75)) & (idle < 10))`.
    pub fn parenthesised(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match &self.node {
            Node::Num(x) => out.push_str(&x.to_string()),
            Node::Get(name, 0, _) => out.push_str(&name.to_string()),
            Node::Get(name, back, _) => out.push_str(&format!("{name}[{back}]")),
            Node::Neg(e) | Node::Not(e) => {
                out.push_str(if matches!(self.node, Node::Neg(_)) { "(-" } else { "(!" });
                e.write(out);
                out.push(')');
            }
            Node::Bin(op, l, r) => {
                out.push('(');
                l.write(out);
                out.push_str(&format!(" {} ", op.symbol()));
                r.write(out);
                out.push(')');
            }
        }
    }

    /// Every name it reads with the deepest history index used for it.
    pub fn names(&self) -> BTreeMap<Name, usize> {
        let mut map = BTreeMap::new();
        self.collect_names(&mut map);
        map
    }

    pub(crate) fn collect_names(&self, map: &mut BTreeMap<Name, usize>) {
        match &self.node {
            Node::Num(_) => {}
            Node::Get(name, back, _) => {
                let deepest = map.entry(name.clone()).or_insert(*back);
                *deepest = (*deepest).max(*back);
            }
            Node::Neg(e) | Node::Not(e) => e.collect_names(map),
            Node::Bin(_, l, r) => {
                l.collect_names(map);
                r.collect_names(map);
            }
        }
    }

    /// Every name it reads with where it is written, left to right (a name used twice, or
    /// through a variable used twice, appears each time).
    pub fn sites(&self) -> Vec<(Name, Site)> {
        let mut out = Vec::new();
        self.collect_sites(&mut out);
        out
    }

    fn collect_sites(&self, out: &mut Vec<(Name, Site)>) {
        match &self.node {
            Node::Num(_) => {}
            Node::Get(name, _, site) => out.push((name.clone(), *site)),
            Node::Neg(e) | Node::Not(e) => e.collect_sites(out),
            Node::Bin(_, l, r) => {
                l.collect_sites(out);
                r.collect_sites(out);
            }
        }
    }

    /// Evaluates as a condition: a number is true when != 0.
    pub fn eval_bool(&self, v: &dyn Values) -> Result<bool, EvalError> {
        Ok(self.eval(v)? != 0.0)
    }

    /// Evaluates as a number: a boolean is 1 or 0.
    pub fn eval_num(&self, v: &dyn Values) -> Result<f64, EvalError> {
        self.eval(v)
    }

    /// Booleans are 1.0/0.0; every intermediate result is checked to be finite.
    fn eval(&self, v: &dyn Values) -> Result<f64, EvalError> {
        let x = match &self.node {
            Node::Num(x) => *x,
            Node::Get(name, back, _) => {
                v.value(name, *back).ok_or_else(|| EvalError::Missing(name.clone(), *back))?
            }
            Node::Neg(e) => -e.eval(v)?,
            Node::Not(e) => truth(e.eval(v)? == 0.0),
            Node::Bin(BinOp::And, l, r) => truth(l.eval(v)? != 0.0 && r.eval(v)? != 0.0),
            Node::Bin(BinOp::Or, l, r) => truth(l.eval(v)? != 0.0 || r.eval(v)? != 0.0),
            Node::Bin(op, l, r) => {
                let (a, b) = (l.eval(v)?, r.eval(v)?);
                match op {
                    BinOp::Lt => truth(a < b),
                    BinOp::Gt => truth(a > b),
                    BinOp::Add => a + b,
                    BinOp::Sub => a - b,
                    BinOp::Mul => a * b,
                    _ => a / b,
                }
            }
        };
        if x.is_finite() {
            Ok(x)
        } else {
            Err(EvalError::NotFinite)
        }
    }

    /// Tree depth (a leaf is 1).
    #[cfg(test)]
    pub(crate) fn depth(&self) -> usize {
        match &self.node {
            Node::Num(_) | Node::Get(..) => 1,
            Node::Neg(e) | Node::Not(e) => 1 + e.depth(),
            Node::Bin(_, l, r) => 1 + l.depth().max(r.depth()),
        }
    }
}

fn truth(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.parenthesised())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(x: f64) -> Expr {
        Expr::new(Node::Num(x))
    }
    fn get(s: &str, back: usize) -> Expr {
        get_at(s, back, Site::default())
    }
    fn get_at(s: &str, back: usize, site: Site) -> Expr {
        Expr::new(Node::Get(Name::Scalar(s.into()), back, site))
    }
    fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
        Expr::new(Node::Bin(op, Box::new(l), Box::new(r)))
    }

    struct Vals;
    impl Values for Vals {
        fn value(&self, name: &Name, back: usize) -> Option<f64> {
            match (name.field(), back) {
                ("idle", 0) => Some(5.0),
                ("time", b) => Some(100.0 - b as f64),
                ("nan", _) => Some(f64::NAN),
                _ => None,
            }
        }
    }

    #[test]
    fn types() {
        assert_eq!(num(1.0).ty(), Ty::Num);
        assert_eq!(bin(BinOp::Lt, num(1.0), num(2.0)).ty(), Ty::Bool);
        assert_eq!(Expr::new(Node::Not(Box::new(num(1.0)))).ty(), Ty::Bool);
        assert_eq!(Expr::new(Node::Neg(Box::new(get("idle", 0)))).ty(), Ty::Num);
    }

    #[test]
    fn parenthesised_form() {
        let e = bin(
            BinOp::And,
            bin(BinOp::Gt, get("idle", 0), num(0.75)),
            Expr::new(Node::Not(Box::new(get("time", 3)))),
        );
        assert_eq!(e.parenthesised(), "((idle > 0.75) & (!time[3]))");
        assert_eq!(Expr::new(Node::Neg(Box::new(get("idle", 0)))).to_string(), "(-idle)");
        assert_eq!(num(-2.5).parenthesised(), "-2.5");
    }

    #[test]
    fn names_keep_the_deepest_index() {
        let e = bin(BinOp::Sub, get("time", 0), bin(BinOp::Add, get("time", 4), get("time", 2)));
        let names = e.names();
        assert_eq!(names.len(), 1);
        assert_eq!(names[&Name::Scalar("time".into())], 4);
    }

    #[test]
    fn sites_are_listed_left_to_right_and_ignored_by_equality() {
        let at = |line, column| Site { line, column };
        let e = bin(BinOp::Add, get_at("idle", 0, at(2, 9)), get_at("time", 1, at(1, 4)));
        let idle = Name::Scalar("idle".into());
        assert_eq!(e.sites(), vec![(idle, at(2, 9)), (Name::Scalar("time".into()), at(1, 4))]);
        assert_eq!(get_at("idle", 0, at(2, 9)), get("idle", 0));
        assert_ne!(get_at("idle", 1, at(2, 9)), get("idle", 0));
        assert_ne!(num(1.0), Expr::new(Node::Neg(Box::new(num(1.0)))));
    }

    #[test]
    fn evaluation() {
        let e = bin(BinOp::Sub, get("time", 0), get("time", 2));
        assert_eq!(e.eval_num(&Vals), Ok(2.0));
        assert_eq!(bin(BinOp::Lt, get("idle", 0), num(10.0)).eval_bool(&Vals), Ok(true));
        assert_eq!(bin(BinOp::Lt, get("idle", 0), num(10.0)).eval_num(&Vals), Ok(1.0));
        assert_eq!(num(0.0).eval_bool(&Vals), Ok(false));
        assert_eq!(num(-3.0).eval_bool(&Vals), Ok(true));
    }

    #[test]
    fn errors() {
        assert_eq!(get("steal", 0).eval_num(&Vals), Err(EvalError::Missing(Name::Scalar("steal".into()), 0)));
        assert_eq!(bin(BinOp::Div, num(1.0), num(0.0)).eval_num(&Vals), Err(EvalError::NotFinite));
        assert_eq!(bin(BinOp::Mul, num(1e300), num(1e300)).eval_num(&Vals), Err(EvalError::NotFinite));
        assert_eq!(get("nan", 0).eval_bool(&Vals), Err(EvalError::NotFinite));
        // A non-finite intermediate fails even when the final comparison would not be.
        let inner = bin(BinOp::Lt, bin(BinOp::Div, num(1.0), num(0.0)), num(1.0));
        assert_eq!(inner.eval_bool(&Vals), Err(EvalError::NotFinite));
        assert_eq!(
            EvalError::NotFinite.to_string(),
            "result is not a finite number (division by zero or overflow)"
        );
    }

    #[test]
    fn logic_short_circuits() {
        let missing = get("steal", 0);
        assert_eq!(bin(BinOp::And, num(0.0), missing.clone()).eval_bool(&Vals), Ok(false));
        assert_eq!(bin(BinOp::Or, num(2.0), missing.clone()).eval_bool(&Vals), Ok(true));
        assert!(bin(BinOp::Or, num(0.0), missing).eval_bool(&Vals).is_err());
    }

    #[test]
    fn depth_counts_levels() {
        assert_eq!(num(1.0).depth(), 1);
        assert_eq!(bin(BinOp::Add, num(1.0), Expr::new(Node::Neg(Box::new(get("idle", 0))))).depth(), 3);
    }
}
