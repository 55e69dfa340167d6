//! dbench loadfile parser: turns `client.txt` text into a compact, pre-resolved op list
//! (paths interned and pre-split around `client1`, handles mapped to dense slots) that all
//! clients share, so the replay loop does no parsing and no allocation.

use std::collections::HashMap;

/// The largest ReadX/WriteX size accepted (it sizes each client's buffers).
pub const MAX_IO_BYTES: u64 = 16 << 20;
/// Upper bound on ops after LOOP/REPEAT expansion, to keep memory bounded.
pub const MAX_OPS: usize = 20_000_000;

/// What the loadfile says an op should return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// `NT_STATUS_OK`, `0x0`, `SUCCESS`.
    Ok,
    /// Any other status: the op is expected to fail.
    Fail,
    /// `*`: either outcome is fine.
    Any,
}

/// One file-system operation; paths and handles are indices into [`Loadfile`] tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    NtCreateX { path: u32, options: u32, disposition: u32, handle: u32 },
    ReadX { handle: u32, offset: u64, size: u32, ret_size: u32 },
    WriteX { handle: u32, offset: u64, size: u32, ret_size: u32 },
    Close { handle: u32 },
    Flush { handle: u32 },
    Unlink { path: u32 },
    Rename { from: u32, to: u32 },
    Mkdir { path: u32 },
    Rmdir { path: u32 },
    Deltree { path: u32 },
    QueryPath { path: u32 },
    FindFirst { path: u32, maxcnt: u32, wildcard: bool },
    QueryFs,
    QueryFile { handle: u32 },
    SetFile { handle: u32 },
    LockX { handle: u32, offset: u64, size: u64 },
    UnlockX { handle: u32, offset: u64, size: u64 },
}

impl OpKind {
    /// The dbench name of the op (also the latency histogram's key).
    pub fn name(&self) -> &'static str {
        match self {
            OpKind::NtCreateX { .. } => "NTCreateX",
            OpKind::ReadX { .. } => "ReadX",
            OpKind::WriteX { .. } => "WriteX",
            OpKind::Close { .. } => "Close",
            OpKind::Flush { .. } => "Flush",
            OpKind::Unlink { .. } => "Unlink",
            OpKind::Rename { .. } => "Rename",
            OpKind::Mkdir { .. } => "Mkdir",
            OpKind::Rmdir { .. } => "Rmdir",
            OpKind::Deltree { .. } => "Deltree",
            OpKind::QueryPath { .. } => "QUERY_PATH_INFORMATION",
            OpKind::FindFirst { .. } => "FIND_FIRST",
            OpKind::QueryFs => "QUERY_FS_INFORMATION",
            OpKind::QueryFile { .. } => "QUERY_FILE_INFORMATION",
            OpKind::SetFile { .. } => "SET_FILE_INFORMATION",
            OpKind::LockX { .. } => "LockX",
            OpKind::UnlockX { .. } => "UnlockX",
        }
    }

    /// Payload bytes as dbench counts them: the requested size of ReadX/WriteX, else 0.
    pub fn payload(&self) -> u64 {
        match self {
            OpKind::ReadX { size, .. } | OpKind::WriteX { size, .. } => u64::from(*size),
            _ => 0,
        }
    }
}

/// One op with its expected outcome and its source line (for error messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    pub kind: OpKind,
    pub expect: Expect,
    pub line: u32,
}

/// A loadfile path, split at each `client1` so a client's own name can be put in between.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathTemplate {
    pieces: Box<[Box<[u8]>]>,
}

impl PathTemplate {
    fn new(path: &str) -> Self {
        PathTemplate { pieces: path.split("client1").map(|p| p.as_bytes().into()).collect() }
    }

    /// Writes `root` + this path (with `client1` replaced by `client`) + NUL into `out`.
    pub fn compose(&self, root: &[u8], client: &[u8], out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(root);
        for (i, piece) in self.pieces.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(client);
            }
            out.extend_from_slice(piece);
        }
        out.push(0);
    }
}

/// A parsed loadfile, shared read-only by every client.
#[derive(Debug, Clone, Default)]
pub struct Loadfile {
    pub ops: Vec<Op>,
    pub paths: Vec<PathTemplate>,
    /// Number of distinct handle numbers (size of each client's handle table).
    pub handles: usize,
    /// Largest ReadX/WriteX size: each client's buffers have this size.
    pub max_io: usize,
    /// Most handles expected open at once (sizes the fd limit).
    pub max_open: usize,
}

/// A loadfile error at a line; the engine turns it into "FILE:LINE: message".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl ParseError {
    pub fn render(&self, source: &str) -> String {
        format!("{source}:{}: {}", self.line, self.message)
    }
}

/// Splits a line into tokens at blanks; `"..."` is one token without its quotes.
fn tokenize(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line.trim_start();
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix('"') {
            let end = quoted.find('"').unwrap_or(quoted.len());
            out.push(&quoted[..end]);
            rest = quoted.get(end + 1..).unwrap_or("");
        } else {
            let end = rest.find([' ', '\t']).unwrap_or(rest.len());
            out.push(&rest[..end]);
            rest = &rest[end..];
        }
        rest = rest.trim_start();
    }
    out
}

/// Reads a number as C's strtoll(s, NULL, 0) does: 0x hex, leading-0 octal, else decimal.
fn parse_num(s: &str) -> Option<i64> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else if body.len() > 1 && body.starts_with('0') {
        i64::from_str_radix(&body[1..], 8).ok()?
    } else {
        body.parse().ok()?
    };
    Some(if neg { -v } else { v })
}

fn expect_of(status: &str) -> Option<Expect> {
    if status == "*" {
        return Some(Expect::Any);
    }
    if status == "NT_STATUS_OK" || status.starts_with("SUCCESS") {
        return Some(Expect::Ok);
    }
    if let Some(hex) = status.strip_prefix("0x") {
        return Some(if u64::from_str_radix(hex, 16) == Ok(0) { Expect::Ok } else { Expect::Fail });
    }
    if status.starts_with("NT_STATUS_") || status.starts_with("ERROR") {
        return Some(Expect::Fail);
    }
    None
}

/// Builds the op list; keeps interning tables and LOOP/REPEAT state.
#[derive(Default)]
struct Builder {
    lf: Loadfile,
    path_ids: HashMap<String, u32>,
    handle_ids: HashMap<i64, u32>,
    loops: Vec<(usize, u64, usize)>,
    repeat: Option<u64>,
    open_now: usize,
}

type LineResult<T> = Result<T, String>;

impl Builder {
    fn path(&mut self, raw: &str) -> LineResult<u32> {
        let mut p = raw.replace('\\', "/");
        if !p.starts_with('/') {
            p.insert(0, '/');
        }
        if p.contains('\0') || p.split('/').any(|c| c == "..") {
            return Err(format!("path '{raw}' may not contain '..' or NUL"));
        }
        if let Some(&id) = self.path_ids.get(&p) {
            return Ok(id);
        }
        let id = self.lf.paths.len() as u32;
        self.lf.paths.push(PathTemplate::new(&p));
        self.path_ids.insert(p, id);
        Ok(id)
    }

    fn handle(&mut self, raw: &str) -> LineResult<u32> {
        let n = num(raw)?;
        let next = self.handle_ids.len() as u32;
        Ok(*self.handle_ids.entry(n).or_insert(next))
    }

    fn push(&mut self, op: Op) -> LineResult<()> {
        let times = self.repeat.take().unwrap_or(1);
        for _ in 0..times {
            if self.lf.ops.len() >= MAX_OPS {
                return Err(format!("more than {MAX_OPS} ops after LOOP/REPEAT expansion"));
            }
            self.lf.ops.push(op);
        }
        Ok(())
    }

    /// `LOOP n` … `ENDLOOP` repeat the body n times in total.
    fn end_loop(&mut self, line: usize) -> LineResult<()> {
        let (start, count, _) = self.loops.pop().ok_or_else(|| "ENDLOOP without LOOP".to_string())?;
        let body = self.lf.ops.len() - start;
        if count == 0 {
            self.lf.ops.truncate(start);
            return Ok(());
        }
        if body == 0 {
            // Nothing to repeat: without this, `LOOP 99999999999` around an empty body spun
            // through 10^11 empty copies (found by the loadfile fuzz target).
            return Ok(());
        }
        let total = (body as u64).saturating_mul(count);
        if start as u64 + total > MAX_OPS as u64 {
            return Err(format!("LOOP {count} (line {line}) expands to more than {MAX_OPS} ops"));
        }
        for _ in 1..count {
            self.lf.ops.extend_from_within(start..start + body);
        }
        Ok(())
    }
}

fn num(raw: &str) -> LineResult<i64> {
    if raw.starts_with('*') || raw.starts_with('+') {
        return Err(format!("random/relative argument '{raw}' is not supported"));
    }
    parse_num(raw).ok_or_else(|| format!("'{raw}' is not a number"))
}

fn unum<T: TryFrom<i64>>(raw: &str) -> LineResult<T> {
    let n = num(raw)?;
    T::try_from(n).map_err(|_| format!("'{raw}' is out of range"))
}

fn io_size(raw: &str) -> LineResult<u32> {
    let n: u32 = unum(raw)?;
    if u64::from(n) > MAX_IO_BYTES {
        return Err(format!("I/O size {n} is larger than the maximum {MAX_IO_BYTES}"));
    }
    Ok(n)
}

/// Argument names per op, in loadfile order (between the op name and the status).
fn arity(op: &str) -> Option<(&'static str, &'static [&'static str])> {
    const OPS: &[(&str, &[&str])] = &[
        ("NTCreateX", &["path", "create_options", "disposition", "handle"]),
        ("ReadX", &["handle", "offset", "size", "ret_size"]),
        ("WriteX", &["handle", "offset", "size", "ret_size"]),
        ("Close", &["handle"]),
        ("Flush", &["handle"]),
        ("Unlink", &["path", "attr"]),
        ("Rename", &["old_path", "new_path"]),
        ("Mkdir", &["path"]),
        ("Rmdir", &["path"]),
        ("Deltree", &["path"]),
        ("QUERY_PATH_INFORMATION", &["path", "level"]),
        ("FIND_FIRST", &["pattern", "level", "maxcnt", "count"]),
        ("QUERY_FS_INFORMATION", &["level"]),
        ("QUERY_FILE_INFORMATION", &["handle", "level"]),
        ("SET_FILE_INFORMATION", &["handle", "level"]),
        ("LockX", &["handle", "offset", "size"]),
        ("UnlockX", &["handle", "offset", "size"]),
    ];
    OPS.iter().find(|(n, _)| n.eq_ignore_ascii_case(op)).map(|&(n, a)| (n, a))
}

fn build_kind(b: &mut Builder, name: &str, a: &[&str]) -> LineResult<OpKind> {
    Ok(match name {
        "NTCreateX" => OpKind::NtCreateX {
            path: b.path(a[0])?,
            options: unum::<i64>(a[1])? as u32,
            disposition: unum(a[2])?,
            handle: b.handle(a[3])?,
        },
        "ReadX" | "WriteX" => {
            let (handle, offset, size, ret_size) =
                (b.handle(a[0])?, unum(a[1])?, io_size(a[2])?, io_size(a[3])?);
            b.lf.max_io = b.lf.max_io.max(size as usize).max(ret_size as usize);
            if name == "ReadX" {
                OpKind::ReadX { handle, offset, size, ret_size }
            } else {
                OpKind::WriteX { handle, offset, size, ret_size }
            }
        }
        "Close" => OpKind::Close { handle: b.handle(a[0])? },
        "Flush" => OpKind::Flush { handle: b.handle(a[0])? },
        "Unlink" => OpKind::Unlink { path: b.path(a[0])? },
        "Rename" => OpKind::Rename { from: b.path(a[0])?, to: b.path(a[1])? },
        "Mkdir" => OpKind::Mkdir { path: b.path(a[0])? },
        "Rmdir" => OpKind::Rmdir { path: b.path(a[0])? },
        "Deltree" => OpKind::Deltree { path: b.path(a[0])? },
        "QUERY_PATH_INFORMATION" => OpKind::QueryPath { path: b.path(a[0])? },
        "FIND_FIRST" => OpKind::FindFirst {
            path: b.path(a[0])?,
            maxcnt: unum(a[2])?,
            wildcard: a[0].contains(['<', '>', '*', '?', '"']),
        },
        "QUERY_FS_INFORMATION" => OpKind::QueryFs,
        "QUERY_FILE_INFORMATION" => OpKind::QueryFile { handle: b.handle(a[0])? },
        "SET_FILE_INFORMATION" => OpKind::SetFile { handle: b.handle(a[0])? },
        "LockX" | "UnlockX" => {
            let (handle, offset, size) = (b.handle(a[0])?, unum(a[1])?, unum(a[2])?);
            if name == "LockX" {
                OpKind::LockX { handle, offset, size }
            } else {
                OpKind::UnlockX { handle, offset, size }
            }
        }
        other => return Err(format!("unknown operation '{other}'")),
    })
}

/// Handles control lines (LOOP, ENDLOOP, REPEAT, SLEEP); true if the line was one.
fn control_line(b: &mut Builder, toks: &[&str], line: usize) -> LineResult<bool> {
    let word = toks[0].to_ascii_uppercase();
    let count = || -> LineResult<u64> {
        toks.get(1).ok_or_else(|| format!("{} needs a count", toks[0])).and_then(|t| unum(t))
    };
    match word.as_str() {
        "LOOP" => {
            let n = count()?;
            b.loops.push((b.lf.ops.len(), n, line));
        }
        "ENDLOOP" => b.end_loop(line)?,
        "REPEAT" => b.repeat = Some(count()?),
        // Full-speed replay: sleeps (like timestamps) are ignored.
        "SLEEP" => {
            count()?;
        }
        "RANDOMSTRING" | "WRITEPATTERN" | "SETSP" | "WAITSP" => {
            return Err(format!("'{}' is not supported by the fileserver engine", toks[0]))
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn parse_line(b: &mut Builder, raw: &str, line: usize) -> LineResult<()> {
    let text = raw.replace('\\', "/");
    let mut toks = tokenize(&text);
    if toks.is_empty() || toks[0].starts_with('#') {
        return Ok(());
    }
    // An optional leading timestamp (seconds into the pass) is ignored: full-speed replay.
    if toks[0].starts_with(|c: char| c.is_ascii_digit()) {
        toks.remove(0);
        if toks.is_empty() {
            return Ok(());
        }
    }
    if control_line(b, &toks, line)? {
        return Ok(());
    }
    if toks[0].eq_ignore_ascii_case("Sleep") {
        return Ok(());
    }
    let (name, args) = arity(toks[0]).ok_or_else(|| format!("unknown operation '{}'", toks[0]))?;
    let status = toks[toks.len() - 1];
    let expect = (toks.len() >= 2)
        .then(|| expect_of(status))
        .flatten()
        .ok_or_else(|| format!("'{status}' is not a status (NT_STATUS_..., 0x..., SUCCESS, ERROR or *)"))?;
    let given = &toks[1..toks.len() - 1];
    if given.len() != args.len() {
        return Err(format!(
            "{name} takes {} arguments ({}) and a status, found {}",
            args.len(),
            args.join(" "),
            given.len()
        ));
    }
    let kind = build_kind(b, name, given)?;
    match kind {
        OpKind::NtCreateX { .. } if expect == Expect::Ok => {
            b.open_now += 1;
            b.lf.max_open = b.lf.max_open.max(b.open_now);
        }
        OpKind::Close { .. } => b.open_now = b.open_now.saturating_sub(1),
        _ => {}
    }
    b.push(Op { kind, expect, line: line as u32 })
}

/// Parses loadfile text. Errors carry the 1-based line number and quote the line.
pub fn parse(text: &str) -> Result<Loadfile, ParseError> {
    let mut b = Builder::default();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        parse_line(&mut b, raw, line)
            .map_err(|message| ParseError { line, message: format!("{message}: `{}`", raw.trim()) })?;
    }
    if let Some(&(_, _, line)) = b.loops.last() {
        return Err(ParseError { line, message: "LOOP without ENDLOOP".into() });
    }
    if b.lf.ops.is_empty() {
        return Err(ParseError {
            line: text.lines().count(),
            message: "the loadfile has no operations".into(),
        });
    }
    b.lf.handles = b.handle_ids.len();
    Ok(b.lf)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXCERPT: &str = include_str!("../../fixtures/fileserver/excerpt.txt");
    const TIMED_LOOP: &str = include_str!("../../fixtures/fileserver/timed-loop.txt");
    const BAD_OP: &str = include_str!("../../fixtures/fileserver/bad-op.txt");

    fn names(lf: &Loadfile) -> Vec<&'static str> {
        lf.ops.iter().map(|o| o.kind.name()).collect()
    }

    #[test]
    fn excerpt_parses_with_paths_handles_and_statuses() {
        let lf = parse(EXCERPT).unwrap();
        assert_eq!(lf.ops.len(), 36);
        assert_eq!(lf.ops[0].line, 2, "comment line is skipped but counted");
        assert_eq!(lf.max_io, 65536);
        let OpKind::NtCreateX { path, options, disposition, .. } = lf.ops[2].kind else { panic!() };
        assert_eq!((options, disposition), (1, 2));
        let mut out = Vec::new();
        lf.paths[path as usize].compose(b"/w", b"client7", &mut out);
        assert_eq!(out, b"/w/clients/client7\0");
        assert_eq!(lf.ops[3].kind, OpKind::Close { handle: 0 });
        assert_eq!(lf.ops[4].expect, Expect::Fail);
        let find = lf.ops.iter().find(|o| o.kind.name() == "FIND_FIRST").unwrap();
        assert!(matches!(find.kind, OpKind::FindFirst { maxcnt: 1366, wildcard: true, .. }));
        assert_eq!(lf.ops.last().unwrap().kind.name(), "Deltree");
        assert!(lf.max_open >= 1);
    }

    /// Regression (fuzz target `loadfile`, a 5 s timeout): nested loops with huge counts
    /// around nothing hung the parser.
    #[test]
    fn a_huge_loop_around_nothing_ends_at_once() {
        let t = std::time::Instant::now();
        let e = parse("LOOP 99999999999\nLOOP 999\nENDLOOP\nENDLOOP\nLOOP 0X77\nENDLOOP\n").unwrap_err();
        assert!(e.message.contains("no operations"), "{e:?}");
        assert!(t.elapsed() < std::time::Duration::from_secs(1), "{:?}", t.elapsed());
        let fuzzed = include_bytes!("../../fixtures/fileserver/fuzz-timeout-empty-loops.bin");
        let t = std::time::Instant::now();
        let _ = parse(&String::from_utf8_lossy(fuzzed));
        assert!(t.elapsed() < std::time::Duration::from_secs(1), "{:?}", t.elapsed());
    }

    #[test]
    fn timestamps_loops_repeat_and_sleep() {
        let lf = parse(TIMED_LOOP).unwrap();
        assert_eq!(
            names(&lf),
            [
                "NTCreateX",
                "WriteX",
                "ReadX",
                "WriteX",
                "ReadX",
                "WriteX",
                "ReadX",
                "WriteX",
                "WriteX",
                "Close",
                "Unlink"
            ]
        );
        assert_eq!(lf.ops[7].expect, Expect::Ok, "0x0 means success");
        assert_eq!(lf.ops[10].expect, Expect::Any);
        assert_eq!(lf.handles, 1);
    }

    #[test]
    fn unknown_op_reports_its_line() {
        let e = parse(BAD_OP).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("unknown operation 'Frobnicate'"), "{}", e.message);
        assert!(e.render("x.txt").starts_with("x.txt:3: "));
    }

    #[test]
    fn bad_lines_are_reported_with_numbers() {
        let cases = [
            ("Close 1 NT_STATUS_OK\nClose NT_STATUS_OK\n", 2, "takes 1 arguments"),
            ("ReadX 1 0 4096 4096 BOGUS\n", 1, "not a status"),
            ("ReadX 1 zero 4096 4096 NT_STATUS_OK\n", 1, "not a number"),
            ("ReadX 1 *%4096 4096 4096 NT_STATUS_OK\n", 1, "not supported"),
            ("\n\nLOOP 2\nClose 1 NT_STATUS_OK\n", 3, "LOOP without ENDLOOP"),
            ("ENDLOOP\n", 1, "ENDLOOP without LOOP"),
            ("Unlink \"\\clients\\..\\x\" 0 NT_STATUS_OK\n", 1, "'..'"),
            ("RANDOMSTRING 0 \"[abc]\"\n", 1, "not supported"),
            ("# only a comment\n", 1, "no operations"),
        ];
        for (text, line, msg) in cases {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e:?}");
            assert!(e.message.contains(msg), "{text:?}: {}", e.message);
        }
    }

    #[test]
    fn numbers_follow_strtoll_base_zero() {
        assert_eq!(parse_num("0x1f"), Some(31));
        assert_eq!(parse_num("010"), Some(8));
        assert_eq!(parse_num("0"), Some(0));
        assert_eq!(parse_num("-5"), Some(-5));
        assert_eq!(parse_num("x"), None);
    }

    #[test]
    fn quoted_tokens_keep_spaces() {
        assert_eq!(
            tokenize(r#"Unlink "/a b/c" 0x20 NT_STATUS_OK"#),
            ["Unlink", "/a b/c", "0x20", "NT_STATUS_OK"]
        );
    }

    #[test]
    fn every_client_txt_op_name_is_known() {
        for op in ["NTCreateX", "ReadX", "QUERY_PATH_INFORMATION", "FIND_FIRST", "LockX", "Deltree"] {
            assert!(arity(op).is_some());
        }
        assert_eq!(arity("ntcreatex").map(|a| a.0), Some("NTCreateX"));
    }
}

#[cfg(test)]
mod never_panics {
    use super::parse;

    proptest::proptest! {
        #[test]
        fn arbitrary_text(text in "\\PC{0,300}") {
            let _ = parse(&text);
        }

        #[test]
        fn op_like_lines(
            op in "(NTCreateX|ReadX|WriteX|Close|Rename|Unlink|Flush|LockX|LOOP|ENDLOOP|REPEAT|SLEEP|Deltree|FIND_FIRST)",
            args in "[ 0-9a-fx\\\\\"a-z*+.-]{0,40}",
        ) {
            let _ = parse(&format!("{op} {args} NT_STATUS_OK\n"));
        }
    }
}
