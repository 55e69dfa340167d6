//! The latency histograms' buckets of a cell, kept compact in the central store (schema
//! version 5): `load` moves each `latencies[i].histogram.buckets` object out of the cell's
//! JSON into the column `cells.latency_buckets` (bytea), and reading a run back puts them
//! where they were. The bytes are, for each element of the cell's `latencies` in order, a
//! LEB128 number: 0 when that element's buckets stayed in the JSON (there were none, or they
//! were not the canonical `{"INDEX": COUNT}` of a histogram), else 1 + the number of buckets,
//! followed by that many pairs (index minus the previous index, count), buckets by index.
//! A histogram's hundreds of bucket keys are what made a fileserver cell ~16 KB of JSON;
//! here they take one to four bytes each.

use serde_json::{Map, Value as Json};

fn push_uleb(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn read_uleb(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// The buckets of one histogram as (index, count) pairs by index, when they are the
/// canonical object a histogram serializes to (decimal index keys, whole counts).
fn canonical(buckets: &Map<String, Json>) -> Option<Vec<(u32, u64)>> {
    let mut pairs = Vec::with_capacity(buckets.len());
    for (k, v) in buckets {
        let idx: u32 = k.parse().ok()?;
        if idx.to_string() != *k {
            return None;
        }
        pairs.push((idx, v.as_u64()?));
    }
    pairs.sort_unstable();
    Some(pairs)
}

/// Moves the buckets of every latency histogram of `cell` out of it; returns their bytes,
/// or None when no histogram had buckets to move (the cell is then unchanged).
pub(crate) fn take(cell: &mut Json) -> Option<Vec<u8>> {
    let latencies = cell.get_mut("latencies")?.as_array_mut()?;
    let mut out = Vec::new();
    let mut moved = false;
    for l in latencies {
        let histogram = l.get_mut("histogram").and_then(Json::as_object_mut);
        let Some(h) = histogram else {
            out.push(0);
            continue;
        };
        let pairs = h.get("buckets").and_then(Json::as_object).and_then(canonical);
        let Some(pairs) = pairs else {
            out.push(0);
            continue;
        };
        h.remove("buckets");
        moved = true;
        push_uleb(&mut out, pairs.len() as u64 + 1);
        let mut last = 0u32;
        for (idx, count) in pairs {
            push_uleb(&mut out, u64::from(idx - last));
            push_uleb(&mut out, count);
            last = idx;
        }
    }
    moved.then_some(out)
}

/// Puts the buckets `bytes` holds back into `cell`'s latency histograms.
pub(crate) fn restore(cell: &mut Json, bytes: &[u8]) -> Result<(), String> {
    let bad = || "its latency histograms' buckets (latency_buckets) are damaged".to_string();
    let mut at = 0;
    let latencies = cell.get_mut("latencies").and_then(Json::as_array_mut).ok_or_else(bad)?;
    for l in latencies {
        let n = read_uleb(bytes, &mut at).ok_or_else(bad)?;
        if n == 0 {
            continue;
        }
        let mut buckets = Map::new();
        let mut idx = 0u64;
        for _ in 1..n {
            idx += read_uleb(bytes, &mut at).ok_or_else(bad)?;
            let count = read_uleb(bytes, &mut at).ok_or_else(bad)?;
            buckets.insert(idx.to_string(), Json::from(count));
        }
        let h = l.get_mut("histogram").and_then(Json::as_object_mut).ok_or_else(bad)?;
        h.insert("buckets".into(), Json::Object(buckets));
    }
    if at == bytes.len() {
        Ok(())
    } else {
        Err(bad())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn buckets_go_out_and_come_back_exactly() {
        let mut h = racehorse_core::LatencyHistogram::new();
        for ns in [1, 7, 15, 16, 900, 901, 123_456, 5_000_000_000, 1 << 40] {
            h.record(ns);
        }
        let original = json!({"unit": "ops", "latencies": [
            {"op": "read", "count": 9, "histogram": h},
            {"op": "old", "p50_ns": 3},
            {"op": "empty", "histogram": {"buckets": {}, "count": 0}},
            {"op": "odd", "histogram": {"buckets": {"007": 1}, "count": 1}},
        ]});
        let mut cell = original.clone();
        let bytes = take(&mut cell).expect("buckets moved");
        assert!(cell["latencies"][0]["histogram"].get("buckets").is_none(), "{cell}");
        assert_eq!(cell["latencies"][0]["histogram"]["count"], 9);
        assert_eq!(cell["latencies"][3]["histogram"]["buckets"]["007"], 1, "not canonical: stays");
        assert!(bytes.len() < 40, "{} bytes", bytes.len());
        restore(&mut cell, &bytes).unwrap();
        assert_eq!(cell, original);
        let back: racehorse_core::LatencyHistogram =
            serde_json::from_value(cell["latencies"][0]["histogram"].clone()).unwrap();
        assert_eq!(back, h);
    }

    #[test]
    fn cells_without_histograms_keep_everything_and_damage_is_told() {
        let mut plain = json!({"latencies": [{"op": "x", "p50_ns": 1}]});
        assert_eq!(take(&mut plain), None);
        assert_eq!(take(&mut json!({"unit": "ops"})), None);
        let mut cell = json!({"latencies": [{"op": "r", "histogram": {"buckets": {"3": 2}}}]});
        let bytes = take(&mut cell).unwrap();
        assert!(restore(&mut cell.clone(), &bytes[..bytes.len() - 1]).is_err(), "cut short");
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(restore(&mut cell.clone(), &longer).is_err(), "bytes left over");
        assert!(restore(&mut json!({"latencies": [{"op": "r"}]}), &bytes).is_err(), "no histogram");
        assert_eq!(read_uleb(&[0xff; 11], &mut 0), None, "more than 64 bits");
    }
}
