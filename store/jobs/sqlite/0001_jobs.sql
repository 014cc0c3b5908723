-- jobs holds durable asynchronous work. owner is the node running a pending or running
-- job and heartbeat_at the last time it said so; params and checkpoint (JSON) are what a
-- resumer needs after a restart; result (JSON) or error_code and error_message record
-- the outcome. Times are epoch milliseconds.
CREATE TABLE jobs (
    id             TEXT    NOT NULL PRIMARY KEY,
    type           TEXT    NOT NULL,
    principal_id   TEXT    NOT NULL,
    principal_name TEXT    NOT NULL,
    status         TEXT    NOT NULL,
    progress       INTEGER NOT NULL DEFAULT 0,
    params         TEXT    NOT NULL,
    checkpoint     TEXT    NULL,
    result         TEXT    NULL,
    error_code     TEXT    NOT NULL DEFAULT '',
    error_message  TEXT    NOT NULL DEFAULT '',
    attempts       INTEGER NOT NULL DEFAULT 0,
    owner          TEXT    NOT NULL,
    heartbeat_at   INTEGER NOT NULL,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
);
CREATE INDEX jobs_status ON jobs (status, heartbeat_at);
CREATE INDEX jobs_owner ON jobs (owner, status);
