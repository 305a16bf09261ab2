//! The coordination schema `pgrig_fleet`, created by the coordinator when missing: one row per
//! run (its kind — `pgbench`, or `lua` for a sysbench Lua script, whose script is named by
//! file name and SHA-256 (`crate::lua_script`) —, its run options, its scripts as text
//! (`crate::scripts`), their digest, seed, segment count, state, the coordinator's heartbeat and shared start instant), one per worker
//! (registration, clock offset, the target it reaches (`crate::target`), heartbeat, final
//! statistics) and one per worker and interval
//! (counts and the interval's latency histogram; a Lua script's segment adds the second's
//! queries by class, reconnects and threads running, for the coordinator's interval lines).

pub const DDL: &str = "
CREATE SCHEMA IF NOT EXISTS pgrig_fleet;
CREATE TABLE IF NOT EXISTS pgrig_fleet.runs (
    id bigserial PRIMARY KEY,
    segments integer NOT NULL,
    args text[] NOT NULL,
    scripts text NOT NULL DEFAULT '[]',
    seed text NOT NULL,
    interval_ms integer NOT NULL,
    state text NOT NULL DEFAULT 'waiting'
        CHECK (state IN ('waiting', 'running', 'stopping', 'finished', 'incomplete', 'failed')),
    start_at timestamptz,
    coordinator_seen timestamptz NOT NULL DEFAULT clock_timestamp(),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
ALTER TABLE pgrig_fleet.runs ADD COLUMN IF NOT EXISTS
    coordinator_seen timestamptz NOT NULL DEFAULT clock_timestamp();
ALTER TABLE pgrig_fleet.runs ADD COLUMN IF NOT EXISTS scripts text NOT NULL DEFAULT '[]';
ALTER TABLE pgrig_fleet.runs ADD COLUMN IF NOT EXISTS digest text NOT NULL DEFAULT '';
ALTER TABLE pgrig_fleet.runs ADD COLUMN IF NOT EXISTS kind text NOT NULL DEFAULT 'pgbench';
CREATE TABLE IF NOT EXISTS pgrig_fleet.workers (
    run_id bigint NOT NULL REFERENCES pgrig_fleet.runs ON DELETE CASCADE,
    segment integer NOT NULL,
    host text NOT NULL,
    cores integer NOT NULL,
    version text NOT NULL,
    clock_offset_ms double precision NOT NULL,
    clock_error_ms double precision NOT NULL,
    state text NOT NULL DEFAULT 'registered'
        CHECK (state IN ('registered', 'running', 'done', 'failed')),
    error text,
    registered_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    last_seen timestamptz NOT NULL DEFAULT clock_timestamp(),
    result text,
    PRIMARY KEY (run_id, segment)
);
ALTER TABLE pgrig_fleet.workers ADD COLUMN IF NOT EXISTS target text NOT NULL DEFAULT '';
CREATE TABLE IF NOT EXISTS pgrig_fleet.intervals (
    id bigserial PRIMARY KEY,
    run_id bigint NOT NULL,
    segment integer NOT NULL,
    seq integer NOT NULL,
    ok bigint NOT NULL,
    failed bigint NOT NULL,
    skipped bigint NOT NULL,
    retried bigint NOT NULL,
    retries bigint NOT NULL,
    latency_sum_us double precision NOT NULL,
    cpu_s double precision NOT NULL,
    histogram text,
    written_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (run_id, segment, seq),
    FOREIGN KEY (run_id, segment) REFERENCES pgrig_fleet.workers ON DELETE CASCADE
);
ALTER TABLE pgrig_fleet.intervals ADD COLUMN IF NOT EXISTS queries_read bigint,
    ADD COLUMN IF NOT EXISTS queries_write bigint, ADD COLUMN IF NOT EXISTS queries_other bigint,
    ADD COLUMN IF NOT EXISTS reconnects bigint, ADD COLUMN IF NOT EXISTS threads_running integer;
";
