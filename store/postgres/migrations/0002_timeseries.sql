-- 0002_timeseries: time-series points (test case results; later MCP and agent
-- executions), mirroring store/sqlite's 0003_timeseries.sql. One JSON document per
-- (series, entity, timestamp); a point written again at the same timestamp replaces
-- the earlier one.

CREATE TABLE points (
    series    TEXT COLLATE "C" NOT NULL,
    entity_id TEXT COLLATE "C" NOT NULL,
    ts        BIGINT NOT NULL,
    doc       JSONB  NOT NULL,
    PRIMARY KEY (series, entity_id, ts)
);
CREATE INDEX points_entity ON points (entity_id);
