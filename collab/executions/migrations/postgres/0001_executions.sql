-- 0001_executions: MCP and agent execution records, mirroring
-- sqlite/0001_executions.sql. One row per record: the series (mcpExecution or
-- agentExecution), the server or agent it belongs to (parent_id), its start timestamp
-- (epoch ms), its status, the soft-delete flag (0 or 1) and the JSON document. A parent
-- has at most one record per timestamp in a series; the unique index is also the index
-- of the time-window lists.

CREATE TABLE executions (
    id        TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    series    TEXT COLLATE "C" NOT NULL,
    parent_id TEXT COLLATE "C" NOT NULL,
    ts        BIGINT   NOT NULL,
    status    TEXT     NOT NULL,
    deleted   SMALLINT NOT NULL DEFAULT 0,
    doc       JSONB    NOT NULL
);
CREATE UNIQUE INDEX executions_parent_ts ON executions (series, parent_id, ts);
CREATE INDEX executions_series_ts ON executions (series, ts);
CREATE INDEX executions_parent ON executions (parent_id);
