//! Copying central runs into a SQLite store through the import path, so that `show`,
//! `compare`, `report`, `export` and `history` render them with their usual code. Each table
//! is read once for all the runs asked for (their rows, their cells, their tags), not once a
//! run: the history of one point over 1,000 runs is four queries, not four thousand.

use crate::error::{sql, CentralError};
use crate::read::CentralRun;
use postgres::Client;
use racehorse_store::export::FORMAT_NAME;
use racehorse_store::{parse_export_value, Imported, Store, FORMAT_VERSION};
use serde_json::{json, Map, Value as Json};
use std::collections::HashMap;

/// What a run's row holds beyond [`CentralRun`]: command, CPU method, suite, env, exclusivity.
type Head = (String, String, Option<Json>, Option<Json>, Option<Json>);

/// Copies `runs` into `store` in the order given with the cells of the points `keys` (every
/// cell when None), their tags, and with `with_points` their change points; returns each
/// run's id in `store`.
pub(crate) fn copy_runs(
    client: &mut Client,
    runs: &[CentralRun],
    keys: Option<&[String]>,
    with_points: bool,
    store: &Store,
) -> Result<Vec<i64>, CentralError> {
    let doing = match runs {
        [one] => format!("reading run {}", one.uuid),
        _ => format!("reading {} runs", runs.len()),
    };
    let uuids: Vec<&str> = runs.iter().map(|r| r.uuid.as_str()).collect();
    let mut heads = heads(client, &uuids, &doing)?;
    let mut cells = cells(client, &uuids, keys, &doing)?;
    let mut tags = tags(client, &uuids, &doing)?;
    let mut ids = Vec::with_capacity(runs.len());
    for run in runs {
        let Some((command, cpu_method, suite, env, excl)) = heads.remove(&run.uuid) else {
            return Err(CentralError::UnknownRun(format!(
                "run {} is no longer in the central database",
                run.uuid
            )));
        };
        let points = match with_points {
            true => {
                serde_json::to_value(crate::ledger::points(client, Some(&run.uuid))?).unwrap_or(Json::Null)
            }
            false => Json::Array(Vec::new()),
        };
        let doc = json!({
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "run": {
                "id": run.source_id, "label": run.label, "started_at_unix_s": run.started_at_unix_s,
                "finished_at_unix_s": run.finished_at_unix_s, "status": run.status, "host": run.host,
                "command": command, "cpu_method": cpu_method, "suite": suite, "env": env,
                "exclusivity": excl, "racehorse_version": run.racehorse_version,
                "uuid": run.uuid, "inventory_name": run.inventory_name, "campaign": run.campaign,
                "tags": tags.remove(&run.uuid).unwrap_or_default(),
            },
            "cells": cells.remove(&run.uuid).unwrap_or_default(),
            "change_points": points,
        });
        let exported = parse_export_value(&doc).map_err(|e| CentralError::Sql {
            doing: doing.clone(),
            why: format!("the stored run is unreadable: {e}"),
        })?;
        ids.push(match store.import_run(&exported)? {
            Imported::New(id) | Imported::AlreadyPresent(id) | Imported::Updated { id, .. } => id,
        });
    }
    Ok(ids)
}

fn heads(client: &mut Client, uuids: &[&str], doing: &str) -> Result<HashMap<String, Head>, CentralError> {
    let rows = client
        .query(
            "SELECT uuid::text, command, cpu_method, suite, env, exclusivity FROM racehorse.runs \
             WHERE uuid = ANY($1::text[]::uuid[])",
            &[&uuids],
        )
        .map_err(sql(doing.to_string()))?;
    Ok(rows.iter().map(|r| (r.get(0), (r.get(1), r.get(2), r.get(3), r.get(4), r.get(5)))).collect())
}

/// Each run's cells in export order, their histograms' buckets put back.
fn cells(
    client: &mut Client,
    uuids: &[&str],
    keys: Option<&[String]>,
    doing: &str,
) -> Result<HashMap<String, Vec<Json>>, CentralError> {
    let rows = client
        .query(
            "SELECT run_uuid::text, cell, latency_buckets FROM racehorse.cells \
             WHERE run_uuid = ANY($1::text[]::uuid[]) AND ($2::text[] IS NULL OR match_key = ANY($2)) \
             ORDER BY run_uuid, idx, match_key, rep, dup",
            &[&uuids, &keys],
        )
        .map_err(sql(doing.to_string()))?;
    let mut out: HashMap<String, Vec<Json>> = HashMap::new();
    for row in rows {
        let mut cell: Json = row.get(1);
        if let Some(bytes) = row.get::<_, Option<Vec<u8>>>(2) {
            crate::buckets::restore(&mut cell, &bytes).map_err(|why| CentralError::Sql {
                doing: doing.to_string(),
                why: format!("the stored run is unreadable: {why}"),
            })?;
        }
        out.entry(row.get(0)).or_default().push(cell);
    }
    Ok(out)
}

fn tags(
    client: &mut Client,
    uuids: &[&str],
    doing: &str,
) -> Result<HashMap<String, Map<String, Json>>, CentralError> {
    let rows = client
        .query(
            "SELECT run_uuid::text, key, value FROM racehorse.run_tags WHERE run_uuid = ANY($1::text[]::uuid[]) \
             ORDER BY run_uuid, key",
            &[&uuids],
        )
        .map_err(sql(doing.to_string()))?;
    let mut out: HashMap<String, Map<String, Json>> = HashMap::new();
    for row in rows {
        out.entry(row.get(0)).or_default().insert(row.get(1), Json::String(row.get(2)));
    }
    Ok(out)
}
