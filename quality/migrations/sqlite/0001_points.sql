-- 0001_points: time-series points (test case results; later MCP and agent
-- executions), mirrored by postgres/0001_points.sql. One JSON document per (series,
-- entity, timestamp); a point written again at the same timestamp replaces the earlier
-- one. Timestamps are INTEGER epoch milliseconds.
-- IF NOT EXISTS: a catalog made before the quality module owned this table (the
-- engine's 0003_timeseries created it, with the same columns) keeps it and its points.

CREATE TABLE IF NOT EXISTS points (
    series    TEXT    NOT NULL,
    entity_id TEXT    NOT NULL,
    ts        INTEGER NOT NULL,
    doc       TEXT    NOT NULL,
    PRIMARY KEY (series, entity_id, ts)
);
CREATE INDEX IF NOT EXISTS points_entity ON points (entity_id);
