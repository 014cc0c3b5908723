-- 0001_points: time-series points (test case results; later MCP and agent
-- executions), mirroring sqlite/0001_points.sql. One JSON document per (series, entity,
-- timestamp); a point written again at the same timestamp replaces the earlier one.
-- Timestamps are BIGINT epoch milliseconds.
-- IF NOT EXISTS: a catalog made before the quality module owned this table (the
-- engine's 0002_timeseries created it, with the same columns) keeps it and its points.

CREATE TABLE IF NOT EXISTS points (
    series    TEXT COLLATE "C" NOT NULL,
    entity_id TEXT COLLATE "C" NOT NULL,
    ts        BIGINT NOT NULL,
    doc       JSONB  NOT NULL,
    PRIMARY KEY (series, entity_id, ts)
);
CREATE INDEX IF NOT EXISTS points_entity ON points (entity_id);
