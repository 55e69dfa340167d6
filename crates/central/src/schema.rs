//! The central schema: PostgreSQL schema `racehorse`, brought forward by an ordered list of
//! steps recorded in its own table `racehorse.schema_migrations` (version, description,
//! when). Loaders take an advisory lock while migrating, so that several `racehorse load`
//! at once apply each step once. A database migrated by a newer racehorse is refused.

use crate::error::{sql, CentralError};
use postgres::Client;

/// Steps in order: step `i` moves the schema from version `i` to `i + 1`. Never edit a
/// released step; append one (docs/central-store.md lists them).
const STEPS: &[(&str, &str)] = &[
    ("runs, cells, campaigns and their hosts", V1),
    ("view run_counts", V2),
    ("history: run tags, the change-point ledger, views series_points and change_point_runs", V3),
    ("profiles: views profile_stacks and profile_counters", V4),
    ("load speed: the latency histograms' buckets compact in cells.latency_buckets", V5),
    ("runs.cells_ok and runs.cells_failed, kept by load; view run_counts reads them", V6),
];

/// The central schema version this racehorse writes and reads.
pub const CENTRAL_VERSION: i32 = STEPS.len() as i32;

/// The advisory lock key held while migrating ("rh30").
const MIGRATION_LOCK: i64 = 0x7268_3330;

const V1: &str = "
CREATE TABLE racehorse.runs (
    uuid               uuid    PRIMARY KEY,
    inventory_name     text    NOT NULL,
    campaign           text,
    source_id          bigint  NOT NULL,
    label              text    NOT NULL,
    started_at_unix_s  bigint  NOT NULL,
    finished_at_unix_s bigint,
    status             text    NOT NULL,
    host               text    NOT NULL,
    command            text    NOT NULL,
    racehorse_version  text    NOT NULL,
    cpu_method         text    NOT NULL,
    suite              jsonb,
    env                jsonb,
    exclusivity        jsonb,
    export_version     integer NOT NULL,
    loaded_at_unix_s   bigint  NOT NULL,
    updated_at_unix_s  bigint  NOT NULL
);
CREATE INDEX runs_inventory ON racehorse.runs (inventory_name, started_at_unix_s);
CREATE INDEX runs_campaign ON racehorse.runs (campaign);
CREATE INDEX runs_label ON racehorse.runs (label);

CREATE TABLE racehorse.cells (
    run_uuid             uuid    NOT NULL REFERENCES racehorse.runs (uuid) ON DELETE CASCADE,
    match_key            text    NOT NULL,
    rep                  integer NOT NULL,
    dup                  integer NOT NULL,
    idx                  integer NOT NULL,
    workload             text    NOT NULL,
    variant              text    NOT NULL,
    status               text    NOT NULL,
    unit                 text    NOT NULL,
    throughput_per_s     double precision,
    cpu_total_per_unit_s double precision,
    cell                 jsonb   NOT NULL,
    loaded_at_unix_s     bigint  NOT NULL,
    PRIMARY KEY (run_uuid, match_key, rep, dup)
);
CREATE INDEX cells_match_key ON racehorse.cells (match_key);

CREATE TABLE racehorse.campaigns (
    campaign          text   PRIMARY KEY,
    started_at_unix_s bigint,
    loaded_at_unix_s  bigint NOT NULL
);

CREATE TABLE racehorse.campaign_hosts (
    campaign text NOT NULL REFERENCES racehorse.campaigns (campaign) ON DELETE CASCADE,
    name     text NOT NULL,
    outcome  text NOT NULL CHECK (outcome IN ('ok', 'unreachable', 'failed')),
    detail   text NOT NULL,
    PRIMARY KEY (campaign, name)
);
";

/// Version 2: each run's cell counts as a view (what `list` shows).
const V2: &str = "
CREATE VIEW racehorse.run_counts AS
    SELECT r.uuid AS run_uuid,
           count(c.run_uuid) FILTER (WHERE c.status = 'ok') AS cells_ok,
           count(c.run_uuid) FILTER (WHERE c.status <> 'ok') AS cells_failed
    FROM racehorse.runs r LEFT JOIN racehorse.cells c ON c.run_uuid = r.uuid
    GROUP BY r.uuid;
";

/// Version 3: history (issue 41). A run's tags and the ledger of change points, as in the
/// SQLite store; `series_points` is one figure of one point of one run (the median, range and
/// count of its usable repetitions, and how many were left out as noisy or below resolution),
/// what a dashboard draws; `change_point_runs` is the ledger with the runs on both sides.
const V3: &str = "
CREATE TABLE racehorse.run_tags (
    run_uuid uuid NOT NULL REFERENCES racehorse.runs (uuid) ON DELETE CASCADE,
    key      text NOT NULL,
    value    text NOT NULL,
    PRIMARY KEY (run_uuid, key)
);
CREATE INDEX run_tags_key_value ON racehorse.run_tags (key, value);
CREATE INDEX cells_workload ON racehorse.cells (workload);

CREATE TABLE racehorse.change_points (
    id                 bigserial UNIQUE,
    uuid               uuid   PRIMARY KEY,
    series_key         text   NOT NULL,
    host               text   NOT NULL,
    workload           text   NOT NULL,
    variant            text   NOT NULL,
    params             jsonb  NOT NULL,
    figure             text   NOT NULL,
    unit               text   NOT NULL,
    before_run_uuid    uuid   NOT NULL,
    after_run_uuid     uuid   NOT NULL,
    level_before       double precision NOT NULL,
    level_after        double precision NOT NULL,
    ratio              double precision NOT NULL,
    ratio_lo           double precision,
    ratio_hi           double precision,
    p_value            double precision NOT NULL,
    direction          text   NOT NULL CHECK (direction IN ('better', 'worse')),
    status             text   NOT NULL CHECK (status IN ('new', 'acknowledged', 'hidden', 'reverted')),
    reason             text,
    link               text,
    detected_at_unix_s bigint NOT NULL,
    updated_at_unix_s  bigint NOT NULL
);
CREATE INDEX change_points_series ON racehorse.change_points (series_key);
CREATE INDEX change_points_status ON racehorse.change_points (status);

CREATE VIEW racehorse.series_points AS
    SELECT r.uuid AS run_uuid, r.inventory_name AS host, r.label, r.started_at_unix_s,
           to_timestamp(r.started_at_unix_s) AS started_at,
           coalesce((SELECT jsonb_object_agg(t.key, t.value) FROM racehorse.run_tags t
                     WHERE t.run_uuid = r.uuid), '{}'::jsonb) AS tags,
           c.workload, c.variant, c.match_key, c.cell->'params' AS params, f.figure, c.unit,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY f.value) FILTER (WHERE f.usable) AS median,
           min(f.value) FILTER (WHERE f.usable) AS range_lo,
           max(f.value) FILTER (WHERE f.usable) AS range_hi,
           count(*) FILTER (WHERE f.usable) AS reps,
           count(*) FILTER (WHERE f.noisy) AS noisy,
           count(*) FILTER (WHERE f.below AND NOT f.noisy) AS below_resolution
    FROM racehorse.runs r
    JOIN racehorse.cells c ON c.run_uuid = r.uuid AND c.status = 'ok'
    CROSS JOIN LATERAL (VALUES
        ('throughput', c.throughput_per_s, 'throughput'),
        ('cpu_total_per_unit', c.cpu_total_per_unit_s, 'cpu'),
        ('cpu_kernel_per_unit', (c.cell->'cpu_per_unit'->>'kernel_s')::double precision, 'cpu'),
        ('cpu_user_per_unit', (c.cell->'cpu_per_unit'->>'user_s')::double precision, 'cpu')
    ) AS m(figure, value, resolution)
    CROSS JOIN LATERAL (SELECT m.figure, m.value,
        coalesce((c.cell->'quality'->>'noisy')::boolean, false) AS noisy,
        coalesce(c.cell->'quality'->'below_resolution' ? m.resolution, false) AS below,
        NOT coalesce((c.cell->'quality'->>'noisy')::boolean, false)
            AND NOT coalesce(c.cell->'quality'->'below_resolution' ? m.resolution, false) AS usable) AS f
    WHERE f.value IS NOT NULL
    GROUP BY r.uuid, r.inventory_name, r.label, r.started_at_unix_s, c.workload, c.variant, c.match_key,
             c.cell->'params', f.figure, c.unit;

CREATE VIEW racehorse.change_point_runs AS
    SELECT p.id, p.uuid, p.series_key, p.host, p.workload, p.variant, p.params, p.figure, p.unit,
           p.ratio, p.ratio_lo, p.ratio_hi, p.p_value, p.direction, p.status, p.reason, p.link,
           p.level_before, p.level_after, p.detected_at_unix_s, p.updated_at_unix_s,
           to_timestamp(p.detected_at_unix_s) AS detected_at,
           b.uuid AS before_run_uuid, b.label AS before_label, b.started_at_unix_s AS before_started_at_unix_s,
           a.uuid AS after_run_uuid, a.label AS after_label, a.started_at_unix_s AS after_started_at_unix_s,
           to_timestamp(a.started_at_unix_s) AS after_started_at,
           coalesce((SELECT jsonb_object_agg(t.key, t.value) FROM racehorse.run_tags t
                     WHERE t.run_uuid = b.uuid), '{}'::jsonb) AS before_tags,
           coalesce((SELECT jsonb_object_agg(t.key, t.value) FROM racehorse.run_tags t
                     WHERE t.run_uuid = a.uuid), '{}'::jsonb) AS after_tags
    FROM racehorse.change_points p
    LEFT JOIN racehorse.runs b ON b.uuid = p.before_run_uuid
    LEFT JOIN racehorse.runs a ON a.uuid = p.after_run_uuid;
";

/// Version 4: profiles (issue 43), which `cell` already holds whole, as rows a dashboard or a
/// query can use: every folded call stack of every profiled cell, and every counter with its
/// count per unit of work (null where the machine had no such counter).
const V4: &str = "
CREATE VIEW racehorse.profile_stacks AS
    SELECT c.run_uuid, c.match_key, c.rep, c.dup, c.workload, c.variant,
           c.cell->'profile'->>'callgraph' AS callgraph,
           (c.cell->'profile'->>'samples')::bigint AS window_samples,
           s.value->>'stack' AS stack,
           (s.value->>'samples')::bigint AS samples
    FROM racehorse.cells c
    CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(c.cell->'profile'->'stacks') = 'array'
        THEN c.cell->'profile'->'stacks' ELSE '[]'::jsonb END) AS s(value);

CREATE VIEW racehorse.profile_counters AS
    SELECT c.run_uuid, c.match_key, c.rep, c.dup, c.workload, c.variant, c.unit,
           k.value->>'event' AS event,
           (k.value->>'count')::double precision AS count,
           (k.value->>'count')::double precision / nullif((c.cell->>'units')::double precision, 0) AS per_unit
    FROM racehorse.cells c
    CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(c.cell->'profile'->'counters') = 'array'
        THEN c.cell->'profile'->'counters' ELSE '[]'::jsonb END) AS k(value);
";

/// Version 5: load speed (issue 44). `load` moves the buckets of each latency histogram out
/// of `cell` into `latency_buckets` (see `buckets`), where they take a byte or a few each
/// instead of a JSON key and number; rows loaded before keep them in `cell` (null here).
const V5: &str = "
ALTER TABLE racehorse.cells ADD COLUMN latency_buckets bytea;
";

/// Version 6: queries at a million cells (issue 44). `list` showed each run's cell counts
/// through `run_counts`, which counted every cell of the store on each call; the counts now
/// live in `runs`, set by `load` after it adds a run's cells, and the view reads them.
const V6: &str = "
ALTER TABLE racehorse.runs ADD COLUMN cells_ok bigint NOT NULL DEFAULT 0,
                           ADD COLUMN cells_failed bigint NOT NULL DEFAULT 0;
UPDATE racehorse.runs r SET cells_ok = n.cells_ok, cells_failed = n.cells_failed
    FROM racehorse.run_counts n WHERE n.run_uuid = r.uuid;
CREATE OR REPLACE VIEW racehorse.run_counts AS
    SELECT uuid AS run_uuid, cells_ok, cells_failed FROM racehorse.runs;
";

/// The version recorded in the database (0: never migrated).
pub fn version(client: &mut Client) -> Result<i32, CentralError> {
    let doing = "reading the central schema version";
    let exists: bool = client
        .query_one("SELECT to_regclass('racehorse.schema_migrations') IS NOT NULL", &[])
        .map_err(sql(doing))?
        .get(0);
    if !exists {
        return Ok(0);
    }
    let row = client
        .query_one("SELECT coalesce(max(version), 0) FROM racehorse.schema_migrations", &[])
        .map_err(sql(doing))?;
    Ok(row.get(0))
}

/// Brings the database to [`CENTRAL_VERSION`]; returns the version found before.
pub fn migrate(client: &mut Client) -> Result<i32, CentralError> {
    migrate_to(client, CENTRAL_VERSION)
}

/// Brings the database to `target` (tests stop early to make an old database), one
/// transaction per step, under the advisory lock.
pub fn migrate_to(client: &mut Client, target: i32) -> Result<i32, CentralError> {
    client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
        .map_err(sql("waiting for the migration lock"))?;
    let result = apply(client, target);
    let unlocked = client.execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK]);
    let found = result?;
    unlocked.map_err(sql("releasing the migration lock"))?;
    Ok(found)
}

fn apply(client: &mut Client, target: i32) -> Result<i32, CentralError> {
    client
        .batch_execute(
            "CREATE SCHEMA IF NOT EXISTS racehorse; \
             CREATE TABLE IF NOT EXISTS racehorse.schema_migrations (\
                 version integer PRIMARY KEY, description text NOT NULL, applied_at_unix_s bigint NOT NULL)",
        )
        .map_err(sql("creating the schema racehorse (the user needs CREATE on the database)"))?;
    let found = version(client)?;
    if found > CENTRAL_VERSION {
        return Err(CentralError::TooNew { found, known: CENTRAL_VERSION });
    }
    for (i, (description, step)) in STEPS
        .iter()
        .enumerate()
        .take(usize::try_from(target).unwrap_or(0))
        .skip(usize::try_from(found).unwrap_or(0))
    {
        let v = i as i32 + 1;
        let doing = format!("migrating the central schema to version {v} ({description})");
        let mut tx = client.transaction().map_err(sql(doing.clone()))?;
        tx.batch_execute(step).map_err(sql(doing.clone()))?;
        tx.execute(
            "INSERT INTO racehorse.schema_migrations VALUES ($1, $2, extract(epoch FROM now())::bigint)",
            &[&v, description],
        )
        .map_err(sql(doing.clone()))?;
        tx.commit().map_err(sql(doing))?;
    }
    Ok(found)
}
