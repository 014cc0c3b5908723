-- 0001_audit_log: the audit log, mirrored by postgres/0001_audit_log.sql. One row per
-- recorded fact: a write request or an authentication failure seen at the REST or MCP
-- edge (source rest or mcp), or a committed change taken from the outbox (source
-- event, id = the change event's id). search holds the lower-cased text that the text
-- filter matches. The log is append-only: the triggers refuse every UPDATE and DELETE.

CREATE TABLE audit_log (
    id          TEXT    NOT NULL PRIMARY KEY,
    ts          INTEGER NOT NULL,
    source      TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    user_name   TEXT    NOT NULL,
    method      TEXT    NOT NULL,
    path        TEXT    NOT NULL,
    entity_type TEXT    NOT NULL,
    entity_id   TEXT    NOT NULL,
    entity_fqn  TEXT    NOT NULL,
    status      INTEGER NOT NULL,
    outcome     TEXT    NOT NULL,
    remote_addr TEXT    NOT NULL,
    request_id  TEXT    NOT NULL,
    event_type  TEXT    NOT NULL,
    message     TEXT    NOT NULL,
    search      TEXT    NOT NULL
);
CREATE INDEX audit_log_ts ON audit_log (ts, id);
CREATE INDEX audit_log_user ON audit_log (user_name, ts);
CREATE INDEX audit_log_entity_type ON audit_log (entity_type, ts);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;
