-- 0001_init: the catalog's core tables. Keep this portable: store/postgres mirrors it,
-- with the same migration numbers. (Before the module seam this file also created
-- tokens, now auth's.)
-- ids are TEXT UUIDs, timestamps INTEGER epoch milliseconds, documents TEXT JSON,
-- entity versions INTEGER tenths (meridian.Version: 0.1 is 1).

CREATE TABLE entities (
    id         TEXT    NOT NULL PRIMARY KEY,
    kind       TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    fqn        TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    updated_by TEXT    NOT NULL,
    deleted    INTEGER NOT NULL DEFAULT 0,
    doc        TEXT    NOT NULL,
    UNIQUE (kind, fqn)
);
CREATE INDEX entities_kind_name_id ON entities (kind, name, id);
-- Lists and counts of active (or deleted) entities of a kind read only this index.
CREATE INDEX entities_kind_deleted_name_id ON entities (kind, deleted, name, id);

CREATE TABLE entity_versions (
    id      TEXT    NOT NULL,
    version INTEGER NOT NULL,
    doc     TEXT    NOT NULL,
    PRIMARY KEY (id, version)
);

CREATE TABLE relations (
    from_id   TEXT    NOT NULL,
    from_kind TEXT    NOT NULL,
    to_id     TEXT    NOT NULL,
    to_kind   TEXT    NOT NULL,
    type      TEXT    NOT NULL,
    doc       TEXT    NULL,
    seq       INTEGER NOT NULL,
    PRIMARY KEY (from_id, to_id, type)
);
CREATE INDEX relations_to_type ON relations (to_id, type);
CREATE INDEX relations_from_type ON relations (from_id, type);
CREATE INDEX relations_seq ON relations (seq);

CREATE TABLE change_events (
    seq                INTEGER PRIMARY KEY AUTOINCREMENT,
    id                 TEXT    NOT NULL UNIQUE,
    event_type         TEXT    NOT NULL,
    entity_type        TEXT    NOT NULL,
    entity_id          TEXT    NOT NULL,
    entity_fqn         TEXT    NOT NULL,
    user_name          TEXT    NOT NULL,
    ts                 INTEGER NOT NULL,
    previous_version   REAL    NOT NULL,
    current_version    REAL    NOT NULL,
    change_description TEXT    NULL,
    entity             TEXT    NULL,
    recursive          INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX change_events_entity ON change_events (entity_id);

CREATE TABLE settings (
    key   TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);
