-- 0003_timeseries: time-series points (test case results; later MCP and agent
-- executions). One JSON document per (series, entity, timestamp); a point written
-- again at the same timestamp replaces the earlier one. store/postgres mirrors it.

CREATE TABLE points (
    series    TEXT    NOT NULL,
    entity_id TEXT    NOT NULL,
    ts        INTEGER NOT NULL,
    doc       TEXT    NOT NULL,
    PRIMARY KEY (series, entity_id, ts)
);
CREATE INDEX points_entity ON points (entity_id);
