//! A small backtracking regular-expression matcher for pulling a figure out of a program's output.
//!
//! `regex-syntax` parses the pattern into its HIR (folding case, expanding Perl classes and
//! resolving flags); this module compiles the HIR into a short program for a backtracking VM.
//! The VM keeps its choice points on an explicit heap stack, so long inputs never deepen the call
//! stack, and counts its steps, so catastrophic backtracking becomes an error instead of a hang.
//! Results follow Perl's leftmost-first rules: alternation prefers its left branch, greedy
//! repetition prefers more, lazy repetition prefers less.

use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Class, Hir, HirKind, Look, Repetition};
use regex_syntax::{is_word_byte, is_word_character, ParserBuilder};
use std::collections::HashMap;

/// Steps one search may take before it gives up.
pub const STEP_LIMIT: usize = 10_000_000;
/// Extra steps a whole-text scan ([`Pattern::last_value`]) gets per byte of text.
const STEPS_PER_BYTE: usize = 64;
/// Most choice points a search may hold at once (24 bytes each).
const MAX_FRAMES: usize = 1 << 23;
/// Deepest nesting of groups, classes and repetitions a pattern may have.
const NEST_LIMIT: u32 = 64;
/// Most instructions a compiled pattern may have (counted repetitions are unrolled).
const MAX_INSTS: usize = 100_000;
/// Most literals worth scanning for when picking start positions.
const MAX_LITERALS: usize = 16;
/// An unset slot.
const UNSET: usize = usize::MAX;

/// Byte spans of a match: group 0 (the whole match), then each group (None if it took no part).
pub type Captures = Vec<Option<(usize, usize)>>;

/// One instruction of the backtracking VM.
#[derive(Debug, Clone)]
enum Inst {
    /// The whole pattern matched.
    Match,
    /// These bytes, exactly.
    Lit(Box<[u8]>),
    /// One char in the class with this id.
    Class(usize),
    /// A zero-width assertion.
    Look(Look),
    /// Record the position in a slot (capture bound or loop mark).
    Save(usize),
    /// Fail unless the position moved since the slot was saved: stops empty loop iterations.
    Progress(usize),
    /// Try the first target; on failure, the second.
    Split(usize, usize),
    Jmp(usize),
}

/// A compiled pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    src: String,
    prog: Vec<Inst>,
    /// Sorted, disjoint, inclusive char ranges of each class.
    classes: Vec<Box<[(char, char)]>>,
    groups: usize,
    slots: usize,
    /// The pattern can only match at the start of the text.
    anchored: bool,
    /// Every match starts with one of these (None: no useful set).
    prefixes: Option<Vec<Box<[u8]>>>,
    /// Every match ends with one of these (None: no useful set).
    suffixes: Option<Vec<Box<[u8]>>>,
}

impl Pattern {
    /// Compiles `src`; the error text says what is wrong and where (regex-syntax's message is fine).
    pub fn new(src: &str) -> Result<Pattern, String> {
        let hir =
            ParserBuilder::new().nest_limit(NEST_LIMIT).build().parse(src).map_err(|e| e.to_string())?;
        let props = hir.properties();
        let groups = props.explicit_captures_len();
        let mut c = Compiler {
            prog: Vec::new(),
            classes: Vec::new(),
            class_ids: HashMap::new(),
            slots: 2 * (groups + 1),
        };
        c.emit(Inst::Save(0))?;
        c.hir(&hir)?;
        c.emit(Inst::Save(1))?;
        c.emit(Inst::Match)?;
        Ok(Pattern {
            src: src.to_string(),
            prog: c.prog,
            classes: c.classes,
            groups,
            slots: c.slots,
            anchored: props.look_set_prefix().contains(Look::Start),
            prefixes: literals(&hir, ExtractKind::Prefix),
            suffixes: literals(&hir, ExtractKind::Suffix),
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.src
    }

    /// Number of capture groups (not counting the whole match).
    pub fn groups(&self) -> usize {
        self.groups
    }

    /// Leftmost match starting at or after byte `from` (rounded up to a char boundary): spans of
    /// group 0 (whole match) and each group (None if it did not take part). Errors when the
    /// search needs more than [`STEP_LIMIT`] steps.
    pub fn captures_at(&self, text: &str, from: usize) -> Result<Option<Captures>, String> {
        let mut search = Search::new(self, text, STEP_LIMIT);
        Ok(search.find(from)?.then(|| (0..=self.groups).map(|g| search.span(g)).collect()))
    }

    /// The text of group 1 (or of the whole match when the pattern has no group) of the last
    /// non-overlapping match in `text` in which that group took part. Matches are found left to
    /// right; after an empty match the scan moves on one char, and an empty match right where
    /// the previous match ended is skipped. Ok(None) when nothing matches. The whole scan shares
    /// one step budget: [`STEP_LIMIT`] plus 64 steps per byte of text.
    pub fn last_value<'t>(&self, text: &'t str) -> Result<Option<&'t str>, String> {
        let limit = STEP_LIMIT.saturating_add(STEPS_PER_BYTE.saturating_mul(text.len()));
        let mut search = Search::new(self, text, limit);
        let group = usize::from(self.groups > 0);
        let (mut at, mut last_end, mut value) = (0, None, None);
        while at <= text.len() && search.find(at)? {
            let (start, end) = search.span(0).unwrap_or((at, at));
            let skip = start == end && last_end == Some(end);
            if !skip {
                if let Some((s, e)) = search.span(group) {
                    value = Some(&text[s..e]);
                }
                last_end = Some(end);
            }
            at = if start == end { end + char_len(text, end) } else { end };
        }
        Ok(value)
    }

    fn budget_error(&self, limit: usize) -> String {
        format!(
            "pattern /{}/ gave up after {limit} matching steps; simplify it (nested repetition \
             such as (a*)* backtracks catastrophically)",
            self.src
        )
    }
}

/// Literals every match starts (or ends) with, when there are few enough to be worth a scan.
fn literals(hir: &Hir, kind: ExtractKind) -> Option<Vec<Box<[u8]>>> {
    let mut seq = Extractor::new().kind(kind).extract(hir);
    seq.dedup();
    let lits = seq.literals()?;
    if lits.len() > MAX_LITERALS || lits.iter().any(|l| l.is_empty()) {
        return None;
    }
    Some(lits.iter().map(|l| l.as_bytes().into()).collect())
}

/// Byte length of the char at `at` (1 at the end of text, so scans always move on).
fn char_len(text: &str, at: usize) -> usize {
    text.get(at..).and_then(|t| t.chars().next()).map_or(1, char::len_utf8)
}

/// A class as char ranges. Byte classes (`(?-u:…)`) are ASCII-only in a UTF-8 pattern (regex-syntax
/// rejects the others), so their bytes are the chars with the same code.
fn class_ranges(class: &Class) -> Box<[(char, char)]> {
    match class {
        Class::Unicode(u) => u.ranges().iter().map(|r| (r.start(), r.end())).collect(),
        Class::Bytes(b) => b
            .ranges()
            .iter()
            .filter(|r| r.start().is_ascii())
            .map(|r| (char::from(r.start()), char::from(r.end().min(0x7F))))
            .collect(),
    }
}

/// Translates the HIR into VM instructions.
struct Compiler {
    prog: Vec<Inst>,
    classes: Vec<Box<[(char, char)]>>,
    /// Class ids by HIR node address, so unrolled copies of a repetition share one table.
    class_ids: HashMap<*const Class, usize>,
    /// Slots in use: capture bounds first, then loop marks.
    slots: usize,
}

impl Compiler {
    fn emit(&mut self, inst: Inst) -> Result<usize, String> {
        if self.prog.len() >= MAX_INSTS {
            return Err(format!(
                "pattern is too large once its repetitions are expanded (more than {MAX_INSTS} instructions)"
            ));
        }
        self.prog.push(inst);
        Ok(self.prog.len() - 1)
    }

    /// A split that enters at `enter` or skips to `skip`, in the order `greedy` prefers.
    fn fork(greedy: bool, enter: usize, skip: usize) -> Inst {
        if greedy {
            Inst::Split(enter, skip)
        } else {
            Inst::Split(skip, enter)
        }
    }

    fn hir(&mut self, hir: &Hir) -> Result<(), String> {
        match hir.kind() {
            HirKind::Empty => {}
            HirKind::Literal(lit) => {
                self.emit(Inst::Lit(lit.0.clone()))?;
            }
            HirKind::Class(class) => {
                let classes = &mut self.classes;
                let id = *self.class_ids.entry(class).or_insert_with(|| {
                    classes.push(class_ranges(class));
                    classes.len() - 1
                });
                self.emit(Inst::Class(id))?;
            }
            HirKind::Look(look) => {
                self.emit(Inst::Look(*look))?;
            }
            HirKind::Capture(cap) => {
                let slot = 2 * cap.index as usize;
                self.emit(Inst::Save(slot))?;
                self.hir(&cap.sub)?;
                self.emit(Inst::Save(slot + 1))?;
            }
            HirKind::Concat(parts) => {
                for part in parts {
                    self.hir(part)?;
                }
            }
            HirKind::Alternation(alts) => self.alternation(alts)?,
            HirKind::Repetition(rep) => self.repetition(rep)?,
        }
        Ok(())
    }

    fn alternation(&mut self, alts: &[Hir]) -> Result<(), String> {
        let mut exits = Vec::new();
        for (i, alt) in alts.iter().enumerate() {
            if i + 1 == alts.len() {
                self.hir(alt)?;
                break;
            }
            let split = self.emit(Inst::Split(0, 0))?;
            self.hir(alt)?;
            exits.push(self.emit(Inst::Jmp(0))?);
            self.prog[split] = Inst::Split(split + 1, self.prog.len());
        }
        let end = self.prog.len();
        for exit in exits {
            self.prog[exit] = Inst::Jmp(end);
        }
        Ok(())
    }

    fn repetition(&mut self, rep: &Repetition) -> Result<(), String> {
        let sub = &rep.sub;
        match rep.max {
            Some(max) => {
                for _ in 0..rep.min {
                    self.hir(sub)?;
                }
                let mut splits = Vec::new();
                for _ in rep.min..max {
                    splits.push(self.emit(Inst::Split(0, 0))?);
                    self.hir(sub)?;
                }
                let end = self.prog.len();
                for split in splits {
                    self.prog[split] = Self::fork(rep.greedy, split + 1, end);
                }
            }
            // `x*` as `(?:x+)?`, which keeps Perl's preference order when x can match empty.
            None if rep.min == 0 => {
                let split = self.emit(Inst::Split(0, 0))?;
                self.plus(sub, rep.greedy)?;
                self.prog[split] = Self::fork(rep.greedy, split + 1, self.prog.len());
            }
            None => {
                for _ in 1..rep.min {
                    self.hir(sub)?;
                }
                self.plus(sub, rep.greedy)?;
            }
        }
        Ok(())
    }

    /// `x+`; when x can match empty, an iteration that consumed nothing ends the loop.
    fn plus(&mut self, sub: &Hir, greedy: bool) -> Result<(), String> {
        let top = self.prog.len();
        if sub.properties().minimum_len() != Some(0) {
            self.hir(sub)?;
            let at = self.prog.len();
            self.emit(Self::fork(greedy, top, at + 1))?;
            return Ok(());
        }
        let mark = self.slots;
        self.slots += 1;
        self.emit(Inst::Save(mark))?;
        self.hir(sub)?;
        let split = self.emit(Inst::Split(0, 0))?;
        self.emit(Inst::Progress(mark))?;
        self.emit(Inst::Jmp(top))?;
        self.prog[split] = Self::fork(greedy, split + 1, self.prog.len());
        Ok(())
    }
}

/// A choice point on the backtrack stack: resume at (instruction, position), or put a slot's
/// old value back.
#[derive(Debug, Clone, Copy)]
enum Frame {
    Try(usize, usize),
    Restore(usize, usize),
}

/// One scan of one text: the VM's state, the step budget and, per prefix or suffix literal, where
/// it next occurs (None: not looked yet; UNSET: nowhere). Calls to `find` must not go backwards.
struct Search<'p, 't> {
    pat: &'p Pattern,
    text: &'t str,
    slots: Vec<usize>,
    stack: Vec<Frame>,
    steps: usize,
    limit: usize,
    next_prefix: Vec<Option<usize>>,
    next_suffix: Vec<Option<usize>>,
}

impl<'p, 't> Search<'p, 't> {
    fn new(pat: &'p Pattern, text: &'t str, limit: usize) -> Self {
        let unknown = |lits: &Option<Vec<Box<[u8]>>>| vec![None; lits.as_ref().map_or(0, Vec::len)];
        Search {
            pat,
            text,
            slots: vec![UNSET; pat.slots],
            stack: Vec::new(),
            steps: 0,
            limit,
            next_prefix: unknown(&pat.prefixes),
            next_suffix: unknown(&pat.suffixes),
        }
    }

    fn span(&self, group: usize) -> Option<(usize, usize)> {
        let (start, end) = (*self.slots.get(2 * group)?, *self.slots.get(2 * group + 1)?);
        (start != UNSET && end != UNSET).then_some((start, end))
    }

    /// Looks for the leftmost match starting at or after `from`; on success the slots hold it.
    fn find(&mut self, from: usize) -> Result<bool, String> {
        let (text, len) = (self.text.as_bytes(), self.text.len());
        let mut start = from;
        while start < len && !self.text.is_char_boundary(start) {
            start += 1;
        }
        if start > len || (self.pat.anchored && start > 0) {
            return Ok(false);
        }
        if let Some(lits) = &self.pat.suffixes {
            if next_occurrence(text, lits, &mut self.next_suffix, start).is_none() {
                return Ok(false);
            }
        }
        loop {
            if let Some(lits) = &self.pat.prefixes {
                match next_occurrence(text, lits, &mut self.next_prefix, start) {
                    Some(at) if self.text.is_char_boundary(at) => start = at,
                    Some(at) => {
                        start = at + 1;
                        continue;
                    }
                    None => return Ok(false),
                }
            }
            if self.run(start)? {
                return Ok(true);
            }
            if start >= len || self.pat.anchored {
                return Ok(false);
            }
            start += char_len(self.text, start);
        }
    }

    /// Runs the VM anchored at `start`.
    fn run(&mut self, start: usize) -> Result<bool, String> {
        self.slots.fill(UNSET);
        self.stack.clear();
        self.stack.push(Frame::Try(0, start));
        while let Some(frame) = self.stack.pop() {
            match frame {
                Frame::Restore(slot, old) => self.slots[slot] = old,
                Frame::Try(pc, pos) => {
                    if self.thread(pc, pos)? {
                        return Ok(true);
                    }
                }
            }
        }
        Ok(false)
    }

    fn push(&mut self, frame: Frame) -> Result<(), String> {
        if self.stack.len() >= MAX_FRAMES {
            return Err(format!(
                "pattern /{}/ needs too much memory to backtrack over this text",
                self.pat.src
            ));
        }
        self.stack.push(frame);
        Ok(())
    }

    /// Follows one path until it matches or fails, pushing choice points on the way.
    fn thread(&mut self, mut pc: usize, mut pos: usize) -> Result<bool, String> {
        let (pat, text) = (self.pat, self.text);
        let bytes = text.as_bytes();
        loop {
            self.steps += 1;
            if self.steps > self.limit {
                return Err(pat.budget_error(self.limit));
            }
            match &pat.prog[pc] {
                Inst::Match => return Ok(true),
                Inst::Lit(lit) => {
                    if !bytes[pos..].starts_with(lit) {
                        return Ok(false);
                    }
                    pos += lit.len();
                }
                Inst::Class(id) => match text.get(pos..).and_then(|t| t.chars().next()) {
                    Some(c) if in_ranges(&pat.classes[*id], c) => pos += c.len_utf8(),
                    _ => return Ok(false),
                },
                Inst::Look(look) => {
                    if !look_holds(*look, text, pos) {
                        return Ok(false);
                    }
                }
                Inst::Save(slot) => {
                    self.push(Frame::Restore(*slot, self.slots[*slot]))?;
                    self.slots[*slot] = pos;
                }
                Inst::Progress(slot) => {
                    if self.slots[*slot] == pos {
                        return Ok(false);
                    }
                }
                Inst::Split(first, second) => {
                    self.push(Frame::Try(*second, pos))?;
                    pc = *first;
                    continue;
                }
                Inst::Jmp(to) => {
                    pc = *to;
                    continue;
                }
            }
            pc += 1;
        }
    }
}

/// The first position at or after `at` where one of `lits` starts; `cache` remembers each
/// literal's next occurrence so a scan with growing `at` stays linear.
fn next_occurrence(hay: &[u8], lits: &[Box<[u8]>], cache: &mut [Option<usize>], at: usize) -> Option<usize> {
    let mut best = UNSET;
    for (lit, next) in lits.iter().zip(cache.iter_mut()) {
        let found = match *next {
            Some(p) if p >= at => p,
            _ => find_bytes(hay, lit, at).unwrap_or(UNSET),
        };
        *next = Some(found);
        best = best.min(found);
    }
    (best != UNSET).then_some(best)
}

/// The first position at or after `at` where `needle` (non-empty) occurs in `hay`.
fn find_bytes(hay: &[u8], needle: &[u8], at: usize) -> Option<usize> {
    let (&first, _) = needle.split_first()?;
    let mut i = at;
    while i + needle.len() <= hay.len() {
        i += hay[i..].iter().position(|&b| b == first)?;
        if hay[i..].starts_with(needle) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Whether `x` lies in one of the sorted, disjoint inclusive `ranges`.
fn in_ranges(ranges: &[(char, char)], x: char) -> bool {
    ranges.get(ranges.partition_point(|&(_, hi)| hi < x)).is_some_and(|&(lo, _)| lo <= x)
}

/// Whether a zero-width assertion holds at `pos`.
fn look_holds(look: Look, text: &str, pos: usize) -> bool {
    let bytes = text.as_bytes();
    let prev = pos.checked_sub(1).and_then(|i| bytes.get(i)).copied();
    let next = bytes.get(pos).copied();
    let ascii = |b: Option<u8>| b.is_some_and(is_word_byte);
    let word_before = || text.get(..pos).and_then(|t| t.chars().next_back()).is_some_and(is_word_character);
    let word_after = || text.get(pos..).and_then(|t| t.chars().next()).is_some_and(is_word_character);
    match look {
        Look::Start => pos == 0,
        Look::End => pos == bytes.len(),
        Look::StartLF => matches!(prev, None | Some(b'\n')),
        Look::EndLF => matches!(next, None | Some(b'\n')),
        Look::StartCRLF => match prev {
            None | Some(b'\n') => true,
            Some(b'\r') => next != Some(b'\n'),
            _ => false,
        },
        Look::EndCRLF => match next {
            None | Some(b'\r') => true,
            Some(b'\n') => prev != Some(b'\r'),
            _ => false,
        },
        Look::WordAscii => ascii(prev) != ascii(next),
        Look::WordAsciiNegate => ascii(prev) == ascii(next),
        Look::WordUnicode => word_before() != word_after(),
        Look::WordUnicodeNegate => word_before() == word_after(),
        Look::WordStartAscii => !ascii(prev) && ascii(next),
        Look::WordEndAscii => ascii(prev) && !ascii(next),
        Look::WordStartUnicode => !word_before() && word_after(),
        Look::WordEndUnicode => word_before() && !word_after(),
        Look::WordStartHalfAscii => !ascii(prev),
        Look::WordEndHalfAscii => !ascii(next),
        Look::WordStartHalfUnicode => !word_before(),
        Look::WordEndHalfUnicode => !word_after(),
    }
}

#[cfg(test)]
#[path = "pattern_tests.rs"]
mod tests;
