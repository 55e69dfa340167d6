//! Recursive-descent parser with type checking and user-variable inlining.
//!
//! Binary operators are parsed by precedence climbing (all left-associative); prefix `!` and
//! `-` are collected in a loop and bind to the following primary only (C-like). A variable is
//! parsed once, after the variables it references (found by a cycle-checking depth-first walk
//! that needs no recursion), cached, and cloned into every use. So a variable's tree never
//! depends on where it is first used, and the stack holds at most two texts being parsed.

use crate::expr::{BinOp, Expr, Node, Site, Ty};
use crate::lexer::{lex, Spanned, Tok};
use crate::names::{close_matches, did_you_mean, Name, CPUSTAT_NAMES, FAMILIES, MAX_HISTORY, SCALARS};
use crate::source::Source;
use std::collections::HashMap;

/// Deepest tree, and deepest nesting of parentheses within one text.
pub const MAX_DEPTH: usize = 100;
/// Most nodes in one expression after expanding variables.
pub const MAX_NODES: usize = 10_000;

/// A parsed sub-expression with its tree depth and node count.
#[derive(Debug, Clone)]
pub(crate) struct Parsed {
    pub expr: Expr,
    pub depth: usize,
    pub size: usize,
}

/// A parse or type error at byte `pos` of the stripped text of variable `var` (None: the text
/// being parsed). `outer` is the position, in the top-level text, of the variable use that led there.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ExprError {
    pub var: Option<String>,
    pub pos: usize,
    pub outer: Option<usize>,
    pub message: String,
}

/// Something upstream cpuplugd reads differently, at byte `pos` of `var` (or the top-level text).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Note {
    pub var: Option<String>,
    pub pos: usize,
    pub message: String,
}

/// The user variables available to expressions, parsed on first use.
#[derive(Debug, Default)]
pub(crate) struct Env {
    sources: HashMap<String, Source>,
    cache: HashMap<String, Parsed>,
    pub notes: Vec<Note>,
}

fn error(pos: usize, message: impl Into<String>) -> ExprError {
    ExprError { var: None, pos, outer: None, message: message.into() }
}

impl Env {
    /// Variables by name (a later definition replaces an earlier one).
    pub fn new(vars: impl IntoIterator<Item = (String, Source)>) -> Env {
        Env { sources: vars.into_iter().collect(), ..Env::default() }
    }

    pub fn source(&self, name: &str) -> Option<&Source> {
        self.sources.get(name)
    }

    /// Parses a top-level text (a rule, or `parse_expr`'s argument).
    pub fn parse_top(&mut self, src: &Source) -> Result<Parsed, ExprError> {
        self.parse_source(src, None)
    }

    /// Parses (or fetches the cached) variable `name`, after every variable it references;
    /// errors inside a variable carry its name in `var`.
    pub fn parse_var(&mut self, name: &str) -> Result<Parsed, ExprError> {
        if let Some(p) = self.cache.get(name) {
            return Ok(p.clone());
        }
        if !self.sources.contains_key(name) {
            return Err(error(0, format!("unknown variable `{name}`")));
        }
        // Depth-first, iteratively: (variable, its references, next reference to visit).
        let mut path = vec![(name.to_string(), self.references(name), 0)];
        while let Some((var, refs, next)) = path.last_mut() {
            let Some((dep, pos)) = refs.get(*next).cloned() else {
                let var = std::mem::take(var);
                path.pop();
                let parsed = self.parse_uncached(&var)?;
                self.cache.insert(var, parsed);
                continue;
            };
            *next += 1;
            if self.cache.contains_key(&dep) {
                continue;
            }
            if let Some(k) = path.iter().position(|(v, ..)| *v == dep) {
                let mut cycle: Vec<&str> = path[k..].iter().map(|(v, ..)| v.as_str()).collect();
                cycle.push(&dep);
                let message = format!("variable cycle: {}", cycle.join(" -> "));
                let var = path.last().map(|(v, ..)| v.clone());
                return Err(ExprError { var, pos, outer: None, message });
            }
            let refs = self.references(&dep);
            path.push((dep, refs, 0));
        }
        Ok(self.cache[name].clone())
    }

    /// The variables a variable's text names, with their positions (none if it does not lex).
    fn references(&self, name: &str) -> Vec<(String, usize)> {
        let Some(toks) = self.sources.get(name).and_then(|src| lex(&src.text).ok()) else {
            return Vec::new();
        };
        toks.into_iter()
            .filter_map(|t| match t.tok {
                Tok::Word { text, .. } if self.sources.contains_key(&text) => Some((text, t.pos)),
                _ => None,
            })
            .collect()
    }

    fn parse_uncached(&mut self, name: &str) -> Result<Parsed, ExprError> {
        let src = self.sources[name].clone();
        self.parse_source(&src, Some(name)).map_err(|mut e| {
            e.var.get_or_insert_with(|| name.to_string());
            e
        })
    }

    fn parse_source(&mut self, src: &Source, var: Option<&str>) -> Result<Parsed, ExprError> {
        let toks = lex(&src.text).map_err(|(pos, message)| error(pos, message))?;
        if toks.is_empty() {
            return Err(error(0, "empty expression"));
        }
        let mut p = Parser { env: self, toks, i: 0, src, var: var.map(str::to_string), nesting: 0 };
        let parsed = p.expr(0)?;
        match p.toks.get(p.i) {
            None => Ok(parsed),
            Some(Spanned { tok: Tok::RParen, pos }) => Err(error(*pos, "unmatched `)`")),
            Some(Spanned { tok, pos }) => {
                Err(error(*pos, format!("expected an operator before {}", describe(tok))))
            }
        }
    }
}

struct Parser<'a> {
    env: &'a mut Env,
    toks: Vec<Spanned>,
    i: usize,
    src: &'a Source,
    var: Option<String>,
    /// Open parentheses.
    nesting: usize,
}

#[cold]
#[inline(never)]
fn too_deep(pos: usize) -> ExprError {
    error(pos, format!("expression nested too deeply (more than {MAX_DEPTH} levels)"))
}

/// A token as named in messages.
fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Num(x) => format!("number `{x}`"),
        Tok::Word { text, .. } => format!("`{text}`"),
        Tok::Bin(op) => format!("`{}`", op.symbol()),
        Tok::Minus => "`-`".into(),
        Tok::Bang => "`!`".into(),
        Tok::LParen => "`(`".into(),
        Tok::RParen => "`)`".into(),
    }
}

/// An expression's text for messages, shortened.
fn snippet(e: &Expr) -> String {
    let text = e.parenthesised();
    if text.chars().count() <= 60 {
        return text;
    }
    let short: String = text.chars().take(57).collect();
    format!("{short}...")
}

impl Parser<'_> {
    fn tok(&self, i: usize) -> Option<&Tok> {
        self.toks.get(i).map(|s| &s.tok)
    }

    fn pos(&self) -> usize {
        self.toks.get(self.i).map_or(self.src.text.len(), |s| s.pos)
    }

    /// Where stripped byte `pos` of the text being parsed is written.
    fn site(&self, pos: usize) -> Site {
        Site { line: self.src.line, column: self.src.col(pos) }
    }

    fn leaf(&self, node: Node) -> Parsed {
        Parsed { expr: Expr::new(node), depth: 1, size: 1 }
    }

    /// Wraps children into a node, enforcing the depth and size limits.
    /// `kids` are the children's (depth, size).
    fn node(&self, pos: usize, node: Node, kids: &[(usize, usize)]) -> Result<Parsed, ExprError> {
        let depth = 1 + kids.iter().map(|k| k.0).max().unwrap_or(0);
        let size = 1 + kids.iter().map(|k| k.1).sum::<usize>();
        if depth > MAX_DEPTH {
            return Err(too_deep(pos));
        }
        if size > MAX_NODES {
            let msg = format!("expression too large (more than {MAX_NODES} nodes after expanding variables)");
            return Err(error(pos, msg));
        }
        Ok(Parsed { expr: Expr::new(node), depth, size })
    }

    /// Binary operators of precedence >= `min`, left-associative.
    fn expr(&mut self, min: u8) -> Result<Parsed, ExprError> {
        let mut lhs = self.operand(min)?;
        loop {
            let op = match self.tok(self.i) {
                Some(Tok::Bin(op)) => *op,
                Some(Tok::Minus) => BinOp::Sub,
                _ => break,
            };
            if op.prec() < min {
                break;
            }
            let pos = self.pos();
            self.i += 1;
            let rhs = self.expr(op.prec() + 1)?;
            lhs = self.binary(op, pos, lhs, rhs)?;
        }
        Ok(lhs)
    }

    fn binary(&self, op: BinOp, pos: usize, l: Parsed, r: Parsed) -> Result<Parsed, ExprError> {
        if op.needs_numbers() {
            for (side, e) in [("left", &l), ("right", &r)] {
                if e.expr.ty() == Ty::Bool {
                    let chained = op.result() == Ty::Bool && side == "left";
                    let hint = if chained {
                        "; comparisons cannot be chained: write `(a < b) & (b < c)`"
                    } else {
                        ""
                    };
                    let (sym, text) = (op.symbol(), snippet(&e.expr));
                    return Err(error(
                        pos,
                        format!("`{sym}` needs numbers, but its {side} side `{text}` is a boolean{hint}"),
                    ));
                }
            }
        }
        let kids = [(l.depth, l.size), (r.depth, r.size)];
        self.node(pos, Node::Bin(op, Box::new(l.expr), Box::new(r.expr)), &kids)
    }

    /// Prefix `!`/`-` (tight) then a primary; `ctx` is the precedence the operand stops at.
    fn operand(&mut self, ctx: u8) -> Result<Parsed, ExprError> {
        let mut chain = Vec::new();
        loop {
            let neg = match self.tok(self.i) {
                Some(Tok::Bang) => false,
                Some(Tok::Minus) if !matches!(self.tok(self.i + 1), Some(Tok::Num(_))) => true,
                _ => break,
            };
            chain.push((neg, self.pos()));
            self.i += 1;
        }
        let mut e = self.primary()?;
        if let Some(&(neg, first)) = chain.first() {
            let any_not = chain.iter().any(|(neg, _)| !neg);
            if let Some(op) = upstream_differs(&self.toks, self.i, ctx, any_not) {
                self.note(first, neg, op);
            }
        }
        for (neg, pos) in chain.into_iter().rev() {
            e = self.unary(neg, pos, e)?;
        }
        Ok(e)
    }

    fn note(&mut self, pos: usize, neg: bool, op: BinOp) {
        let (u, o) = (if neg { "-" } else { "!" }, op.symbol());
        let message = format!(
            "unary `{u}` binds tightly here, but upstream cpuplugd applies it to the rest of the operand \
             (it reads `{u}a{o}b` as `{u}(a{o}b)`); add parentheses to make the meaning explicit"
        );
        self.env.notes.push(Note { var: self.var.clone(), pos, message });
    }

    fn unary(&self, neg: bool, pos: usize, e: Parsed) -> Result<Parsed, ExprError> {
        let kid = [(e.depth, e.size)];
        if !neg {
            return self.node(pos, Node::Not(Box::new(e.expr)), &kid);
        }
        if e.expr.ty() == Ty::Bool {
            let text = snippet(&e.expr);
            return Err(error(pos, format!("unary `-` needs a number, but `{text}` is a boolean")));
        }
        if let Node::Num(x) = e.expr.node {
            return Ok(self.leaf(Node::Num(-x)));
        }
        self.node(pos, Node::Neg(Box::new(e.expr)), &kid)
    }

    /// A number (possibly a negative literal), a name, or a parenthesised expression. This and
    /// [`Parser::group`] recurse once per `(`: errors are built in cold functions to keep the
    /// frames small.
    fn primary(&mut self) -> Result<Parsed, ExprError> {
        let pos = self.pos();
        match self.tok(self.i) {
            Some(Tok::Num(x)) => {
                let x = *x;
                self.i += 1;
                Ok(self.leaf(Node::Num(x)))
            }
            Some(Tok::Minus) => match self.tok(self.i + 1) {
                Some(Tok::Num(x)) => {
                    let x = -*x;
                    self.i += 2;
                    Ok(self.leaf(Node::Num(x)))
                }
                _ => Err(self.not_an_operand(pos)),
            },
            Some(Tok::Word { .. }) => self.word_at(pos),
            Some(Tok::LParen) => self.group(pos),
            _ => Err(self.not_an_operand(pos)),
        }
    }

    #[cold]
    #[inline(never)]
    fn not_an_operand(&self, pos: usize) -> ExprError {
        match self.tok(self.i) {
            None => error(pos, "unexpected end of expression"),
            Some(Tok::RParen) if self.i > 0 && self.tok(self.i - 1) == Some(&Tok::LParen) => {
                error(pos, "empty parentheses")
            }
            Some(tok) => {
                error(pos, format!("expected a number, name, `(`, `!` or `-` before {}", describe(tok)))
            }
        }
    }

    fn word_at(&mut self, pos: usize) -> Result<Parsed, ExprError> {
        let Some(Tok::Word { text, index }) = self.tok(self.i).cloned() else {
            return Err(self.not_an_operand(pos));
        };
        self.i += 1;
        self.word(&text, index, pos)
    }

    fn group(&mut self, open: usize) -> Result<Parsed, ExprError> {
        self.i += 1;
        self.nesting += 1;
        if self.nesting > MAX_DEPTH {
            return Err(too_deep(open));
        }
        let inner = self.expr(0)?;
        self.nesting -= 1;
        if self.tok(self.i) != Some(&Tok::RParen) {
            return Err(self.unclosed(open));
        }
        self.i += 1;
        Ok(inner)
    }

    #[cold]
    #[inline(never)]
    fn unclosed(&self, open: usize) -> ExprError {
        match self.tok(self.i) {
            None => {
                let col = self.src.col(open);
                error(self.pos(), format!("missing `)` to close the `(` at column {col}"))
            }
            Some(tok) => error(self.pos(), format!("expected an operator or `)` before {}", describe(tok))),
        }
    }

    /// A history index: `[N]` with N <= MAX_HISTORY, or 0 without one.
    fn back(&self, index: Option<(usize, usize)>) -> Result<usize, ExprError> {
        match index {
            None => Ok(0),
            Some((n, _)) if n <= MAX_HISTORY => Ok(n),
            Some((n, pos)) => {
                let shown = if n == usize::MAX { "too large".to_string() } else { n.to_string() };
                Err(error(pos, format!("history index {shown}: at most [{MAX_HISTORY}] is kept")))
            }
        }
    }

    fn word(&mut self, text: &str, index: Option<(usize, usize)>, pos: usize) -> Result<Parsed, ExprError> {
        if let Some((family, field)) = text.split_once('.') {
            return self.family(family, field, index, pos);
        }
        if self.env.sources.contains_key(text) {
            if let Some((_, ipos)) = index {
                return Err(error(ipos, format!("variable `{text}` takes no `[N]`")));
            }
            return self.variable(text, pos);
        }
        if SCALARS.contains(&text) {
            if let (Some((_, ipos)), false) = (index, text == "time") {
                let hint = if CPUSTAT_NAMES.contains(&text) {
                    format!("; `cpustat.{text}[N]` has history")
                } else {
                    String::new()
                };
                return Err(error(
                    ipos,
                    format!("`{text}` takes no `[N]` (only `time` and the families do){hint}"),
                ));
            }
            let back = self.back(index)?;
            return Ok(self.leaf(Node::Get(Name::Scalar(text.to_string()), back, self.site(pos))));
        }
        if FAMILIES.contains(&text) {
            return Err(error(pos, format!("`{text}` needs a field, as in `{text}.NAME`")));
        }
        let mut words: Vec<&str> = SCALARS.to_vec();
        words.extend(self.env.sources.keys().map(String::as_str));
        let mut message = format!("unknown name `{text}`{}", did_you_mean(&close_matches(text, words)));
        if self.tok(self.i) == Some(&Tok::LParen) {
            message.push_str("; there are no functions");
        }
        Err(error(pos, message))
    }

    fn family(
        &self,
        family: &str,
        field: &str,
        index: Option<(usize, usize)>,
        pos: usize,
    ) -> Result<Parsed, ExprError> {
        let Some(name) = Name::in_family(family, field) else {
            let hint = did_you_mean(&close_matches(family, FAMILIES.iter().copied()));
            let msg =
                format!("unknown family `{family}`{hint}: the families are meminfo, vmstat and cpustat");
            return Err(error(pos, msg));
        };
        let field_pos = pos + family.len() + 1;
        if field.is_empty() {
            return Err(error(field_pos, format!("missing name after `{family}.`")));
        }
        if family == "cpustat" && !CPUSTAT_NAMES.contains(&field) {
            let hint = did_you_mean(&close_matches(field, CPUSTAT_NAMES.iter().copied()));
            let valid = CPUSTAT_NAMES.join(", ");
            return Err(error(field_pos, format!("unknown `cpustat.{field}`{hint}; valid names: {valid}")));
        }
        let back = self.back(index)?;
        Ok(self.leaf(Node::Get(name, back, self.site(pos))))
    }

    /// Inlines variable `name`; an error inside it is tagged with this use's position.
    fn variable(&mut self, name: &str, pos: usize) -> Result<Parsed, ExprError> {
        self.env.parse_var(name).map_err(|mut e| {
            e.outer = Some(pos);
            e
        })
    }
}

/// If upstream's unary rule (the operand extends over every following binary operator of
/// precedence >= `ctx`) gives a different meaning, the first operator that makes it differ.
/// `-` distributes over `*` and `/`, so those alone do not change a `-`-only chain.
fn upstream_differs(toks: &[Spanned], mut i: usize, ctx: u8, any_not: bool) -> Option<BinOp> {
    loop {
        let op = match toks.get(i).map(|s| &s.tok) {
            Some(Tok::Bin(op)) => *op,
            Some(Tok::Minus) => BinOp::Sub,
            _ => return None,
        };
        if op.prec() < ctx {
            return None;
        }
        if any_not || !matches!(op, BinOp::Mul | BinOp::Div) {
            return Some(op);
        }
        i = skip_operand(toks, i + 1)?;
    }
}

/// The index after the operand starting at `i` (prefix operators, then a primary).
fn skip_operand(toks: &[Spanned], mut i: usize) -> Option<usize> {
    while matches!(toks.get(i).map(|s| &s.tok), Some(Tok::Bang | Tok::Minus)) {
        i += 1;
    }
    match &toks.get(i)?.tok {
        Tok::Num(_) | Tok::Word { .. } => Some(i + 1),
        Tok::LParen => {
            let mut depth = 0usize;
            for (j, s) in toks.iter().enumerate().skip(i) {
                match s.tok {
                    Tok::LParen => depth += 1,
                    Tok::RParen if depth == 1 => return Some(j + 1),
                    Tok::RParen => depth -= 1,
                    _ => {}
                }
            }
            None
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
