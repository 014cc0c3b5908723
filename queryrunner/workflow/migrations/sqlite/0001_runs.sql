-- 0001_runs: Query Runner workflows (one row per triggered query) and their stored
-- results in bounded chunks of consecutive rows (JSON arrays of rows). Identical on
-- SQLite and PostgreSQL. Timestamps are BIGINT epoch milliseconds.

CREATE TABLE qr_runs (
    id              TEXT    NOT NULL PRIMARY KEY,
    workflow_name   TEXT    NOT NULL,
    owner_id        TEXT    NOT NULL,
    owner_name      TEXT    NOT NULL,
    service_name    TEXT    NOT NULL,
    connection_type TEXT    NOT NULL,
    auth_type       TEXT    NOT NULL,
    config_id       TEXT    NOT NULL,
    layer           TEXT    NOT NULL,
    query_text      TEXT    NOT NULL,
    max_result_size BIGINT  NOT NULL,
    status          TEXT    NOT NULL,
    columns         TEXT    NOT NULL DEFAULT '[]',
    total           BIGINT  NOT NULL DEFAULT 0,
    truncated       INTEGER NOT NULL DEFAULT 0,
    error_code      TEXT    NOT NULL DEFAULT '',
    error_message   TEXT    NOT NULL DEFAULT '',
    job_id          TEXT    NOT NULL DEFAULT '',
    created_at      BIGINT  NOT NULL,
    finished_at     BIGINT  NOT NULL DEFAULT 0
);
CREATE INDEX qr_runs_owner_name ON qr_runs (owner_id, workflow_name);
CREATE INDEX qr_runs_name ON qr_runs (workflow_name);
CREATE INDEX qr_runs_created ON qr_runs (created_at);

CREATE TABLE qr_run_chunks (
    run_id    TEXT    NOT NULL,
    first_row BIGINT  NOT NULL,
    row_count INTEGER NOT NULL,
    rows      TEXT    NOT NULL,
    PRIMARY KEY (run_id, first_row)
);
