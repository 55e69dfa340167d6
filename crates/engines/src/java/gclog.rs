//! The JVM's unified GC log (`-Xlog:gc,gc+phases:file=…:uptimemillis,tags`), parsed: the
//! collector it used (`Using G1`), and each pause (`GC(3) Pause Young (Normal) (G1 Evacuation
//! Pause) 24M->3M(256M) 2.345ms`, ZGC's `GC(0) Pause Mark Start 0.012ms`) and heap change
//! (`26M(10%)->14M(6%)`) with its time on the JVM's uptime clock, then summed over the
//! measured window: pauses, their total and the longest, the mean heap after a collection.

/// One line of the log that says something about a collection.
#[derive(Debug, Clone, PartialEq)]
pub struct GcEvent {
    /// When it was logged, in ms of the JVM's uptime.
    pub at_ms: f64,
    /// The pause's length, for a pause.
    pub pause_ms: Option<f64>,
    /// The heap after the collection, when the line gives it.
    pub heap_after_bytes: Option<u64>,
}

/// The parsed log.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GcLog {
    /// `Using X`: the collector the JVM chose (e.g. `G1`, `Serial`, `The Z Garbage Collector`).
    pub collector: Option<String>,
    pub events: Vec<GcEvent>,
}

/// What the window's collections add up to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GcSummary {
    pub pauses: u64,
    pub pause_ms: f64,
    pub longest_pause_ms: f64,
    /// Mean heap after the window's collections; None when none reported it.
    pub heap_after_mib: Option<f64>,
}

/// A size such as `24M`, `512K`, `2G`, `100B` in bytes.
fn size_bytes(text: &str) -> Option<u64> {
    let unit = text.chars().last()?;
    let mult: u64 = match unit {
        'B' => 1,
        'K' => 1 << 10,
        'M' => 1 << 20,
        'G' => 1 << 30,
        'T' => 1 << 40,
        _ => return None,
    };
    let n: f64 = text[..text.len() - 1].parse().ok()?;
    Some((n * mult as f64) as u64)
}

/// The heap after a collection from a `BEFORE->AFTER(CAPACITY)` token.
fn heap_after(message: &str) -> Option<u64> {
    let token = message.split_whitespace().find(|w| w.contains("->"))?;
    let after = token.split("->").nth(1)?;
    size_bytes(after.split('(').next()?)
}

/// A duration at the end of the message: `2.345ms` (or `1.2s`).
fn trailing_ms(message: &str) -> Option<f64> {
    let last = message.split_whitespace().last()?;
    if let Some(ms) = last.strip_suffix("ms") {
        return ms.parse().ok();
    }
    last.strip_suffix('s')?.parse::<f64>().ok().map(|s| s * 1e3)
}

/// The uptime of a decoration: `[6912ms]` or `[6.912s]`.
fn uptime_ms(deco: &str) -> Option<f64> {
    if let Some(ms) = deco.strip_suffix("ms") {
        return ms.parse().ok();
    }
    deco.strip_suffix('s')?.parse::<f64>().ok().map(|s| s * 1e3)
}

/// Splits `[a][b] message` into the decorations (trimmed) and the message.
fn decorations(line: &str) -> (Vec<&str>, &str) {
    let mut rest = line.trim_start();
    let mut decos = Vec::new();
    while let Some(inner) = rest.strip_prefix('[') {
        let Some(end) = inner.find(']') else { break };
        decos.push(inner[..end].trim());
        rest = &inner[end + 1..];
    }
    (decos, rest.trim())
}

/// Parses the log text; lines it does not know are skipped.
pub fn parse(text: &str) -> GcLog {
    let mut log = GcLog::default();
    for line in text.lines() {
        let (decos, message) = decorations(line);
        let Some(at_ms) = decos.iter().find_map(|d| uptime_ms(d)) else { continue };
        if let Some(name) = message.strip_prefix("Using ") {
            log.collector.get_or_insert_with(|| name.trim().to_string());
            continue;
        }
        // `GC(12) body`; a generational collector may prefix its young or old side (`y: `).
        let Some(body) = message.strip_prefix("GC(").and_then(|r| Some(r[r.find(')')? + 1..].trim())) else {
            continue;
        };
        let body = match body.split_once(": ") {
            Some((side, rest)) if side.len() <= 2 && side.chars().all(|c| c.is_ascii_alphabetic()) => rest,
            _ => body,
        };
        let pause_ms = if body.starts_with("Pause") { trailing_ms(body) } else { None };
        let heap_after_bytes = heap_after(body);
        if pause_ms.is_some() || heap_after_bytes.is_some() {
            log.events.push(GcEvent { at_ms, pause_ms, heap_after_bytes });
        }
    }
    log
}

impl GcLog {
    /// The events logged after `from_ms` and up to `to_ms` of uptime, summed.
    pub fn window(&self, from_ms: f64, to_ms: f64) -> GcSummary {
        let mut s = GcSummary::default();
        let (mut heap_sum, mut heaps) = (0.0, 0u32);
        for e in self.events.iter().filter(|e| e.at_ms > from_ms && e.at_ms <= to_ms) {
            if let Some(p) = e.pause_ms {
                s.pauses += 1;
                s.pause_ms += p;
                s.longest_pause_ms = s.longest_pause_ms.max(p);
            }
            if let Some(b) = e.heap_after_bytes {
                heap_sum += b as f64 / (1u64 << 20) as f64;
                heaps += 1;
            }
        }
        s.heap_after_mib = (heaps > 0).then(|| heap_sum / f64::from(heaps));
        s
    }
}

#[cfg(test)]
#[path = "gclog_tests.rs"]
mod tests;
