//! History in the central database: each run's tags and the ledger of change points, written
//! by `load` (from what exports carry) and by `history`/`alerts`/`ack`/`hide` run against it,
//! and read back into the in-memory store those commands analyse.

use crate::error::{sql, CentralError};
use postgres::{GenericClient, Row};
use racehorse_store::ledger::{ChangePointRecord, LedgerStatus};
use racehorse_store::RunFilter;

const UPSERT_TAG: &str =
    "INSERT INTO racehorse.run_tags (run_uuid, key, value) VALUES ($1::text::uuid, $2, $3) \
     ON CONFLICT (run_uuid, key) DO UPDATE SET value = EXCLUDED.value WHERE run_tags.value <> EXCLUDED.value";

/// A point of the ledger arriving from elsewhere is taken when it is new or updated later
/// than the stored one; its `id` is the central database's own.
const MERGE_POINT: &str = "INSERT INTO racehorse.change_points (uuid, series_key, host, workload, variant, params, \
     figure, unit, before_run_uuid, after_run_uuid, level_before, level_after, ratio, ratio_lo, ratio_hi, p_value, \
     direction, status, reason, link, detected_at_unix_s, updated_at_unix_s) VALUES ($1::text::uuid, $2, $3, $4, $5, \
     $6::text::jsonb, $7, $8, $9::text::uuid, $10::text::uuid, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22) \
     ON CONFLICT (uuid) DO UPDATE SET before_run_uuid = EXCLUDED.before_run_uuid, \
     after_run_uuid = EXCLUDED.after_run_uuid, level_before = EXCLUDED.level_before, \
     level_after = EXCLUDED.level_after, ratio = EXCLUDED.ratio, ratio_lo = EXCLUDED.ratio_lo, \
     ratio_hi = EXCLUDED.ratio_hi, p_value = EXCLUDED.p_value, direction = EXCLUDED.direction, \
     status = EXCLUDED.status, reason = EXCLUDED.reason, link = EXCLUDED.link, \
     updated_at_unix_s = EXCLUDED.updated_at_unix_s \
     WHERE change_points.updated_at_unix_s < EXCLUDED.updated_at_unix_s";

const POINT_COLUMNS: &str = "id, uuid::text, series_key, host, workload, variant, params::text, figure, unit, \
     before_run_uuid::text, after_run_uuid::text, level_before, level_after, ratio, ratio_lo, ratio_hi, p_value, \
     direction, status, reason, link, detected_at_unix_s, updated_at_unix_s";

/// Sets a run's tags.
pub(crate) fn save_tags(
    c: &mut impl GenericClient,
    run_uuid: &str,
    tags: &[(String, String)],
) -> Result<(), postgres::Error> {
    for (k, v) in tags {
        c.execute(UPSERT_TAG, &[&run_uuid, k, v])?;
    }
    Ok(())
}

/// Merges change points into the ledger; returns how many were added or updated.
pub(crate) fn merge_points(
    c: &mut impl GenericClient,
    points: &[ChangePointRecord],
) -> Result<u64, postgres::Error> {
    let mut changed = 0;
    for p in points {
        changed += c.execute(
            MERGE_POINT,
            &[
                &p.uuid,
                &p.series_key,
                &p.host,
                &p.workload,
                &p.variant,
                &p.params_json,
                &p.figure,
                &p.unit,
                &p.before_run_uuid,
                &p.after_run_uuid,
                &p.level_before,
                &p.level_after,
                &p.ratio,
                &p.ratio_lo,
                &p.ratio_hi,
                &p.p_value,
                &p.direction,
                &p.status.as_str(),
                &p.reason,
                &p.link,
                &p.detected_at_unix_s,
                &p.updated_at_unix_s,
            ],
        )?;
    }
    Ok(changed)
}

fn point_from_row(row: &Row) -> ChangePointRecord {
    ChangePointRecord {
        id: row.get(0),
        uuid: row.get(1),
        series_key: row.get(2),
        host: row.get(3),
        workload: row.get(4),
        variant: row.get(5),
        params_json: row.get(6),
        figure: row.get(7),
        unit: row.get(8),
        before_run_uuid: row.get(9),
        after_run_uuid: row.get(10),
        level_before: row.get(11),
        level_after: row.get(12),
        ratio: row.get(13),
        ratio_lo: row.get(14),
        ratio_hi: row.get(15),
        p_value: row.get(16),
        direction: row.get(17),
        status: LedgerStatus::parse(row.get(18)).unwrap_or(LedgerStatus::New),
        reason: row.get(19),
        link: row.get(20),
        detected_at_unix_s: row.get(21),
        updated_at_unix_s: row.get(22),
    }
}

/// The ledger's points, all, or those whose first run after is `after_run_uuid`.
pub(crate) fn points(
    c: &mut impl GenericClient,
    after_run_uuid: Option<&str>,
) -> Result<Vec<ChangePointRecord>, CentralError> {
    let q = format!(
        "SELECT {POINT_COLUMNS} FROM racehorse.change_points WHERE $1::text IS NULL OR after_run_uuid = $1::text::uuid ORDER BY id"
    );
    let rows = c.query(&q, &[&after_run_uuid]).map_err(sql("reading the ledger"))?;
    Ok(rows.iter().map(point_from_row).collect())
}

/// The uuids of the runs that pass `f`, newest first.
pub(crate) fn runs_where(
    c: &mut impl GenericClient,
    f: &RunFilter,
    campaign: Option<&str>,
) -> Result<Vec<String>, CentralError> {
    let tags: Vec<String> = f.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let limit = f.limit.map(|n| i64::try_from(n).unwrap_or(i64::MAX));
    let rows = c
        .query(
            "SELECT r.uuid::text FROM racehorse.runs r WHERE ($1::text IS NULL OR r.label = $1) \
             AND ($2::bigint IS NULL OR r.started_at_unix_s >= $2) AND ($3::bigint IS NULL OR r.started_at_unix_s < $3) \
             AND ($4::text IS NULL OR r.host = $4 OR r.inventory_name = $4) \
             AND (SELECT count(*) FROM racehorse.run_tags t WHERE t.run_uuid = r.uuid \
                  AND t.key || '=' || t.value = ANY($5)) = cardinality($5) \
             AND ($7::text IS NULL OR r.campaign = $7) \
             ORDER BY r.started_at_unix_s DESC, r.uuid LIMIT $6",
            &[&f.label, &f.since_unix_s, &f.until_unix_s, &f.host, &tags, &limit, &campaign],
        )
        .map_err(sql("selecting runs"))?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// Sets a point's status by hand (`ack`, `hide` against the central database).
pub(crate) fn set_status(
    c: &mut impl GenericClient,
    id: i64,
    status: LedgerStatus,
    reason: Option<&str>,
    link: Option<&str>,
    now_unix_s: i64,
) -> Result<(), CentralError> {
    let n = c
        .execute(
            "UPDATE racehorse.change_points SET status = $2, reason = coalesce($3, reason), \
             link = coalesce($4, link), updated_at_unix_s = greatest(updated_at_unix_s + 1, $5) WHERE id = $1",
            &[&id, &status.as_str(), &reason, &link, &now_unix_s],
        )
        .map_err(sql("writing the ledger"))?;
    if n == 0 {
        return Err(CentralError::UnknownRun(format!(
            "no change point {id} in the central ledger; list them with `racehorse alerts --all --db URL`"
        )));
    }
    Ok(())
}
