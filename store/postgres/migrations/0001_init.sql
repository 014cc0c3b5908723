-- 0001_init: the catalog's core tables, mirroring store/sqlite's 0001_init.sql. (Before
-- the module seam this file also created tokens, now auth's, and search_docs, now
-- 0002_search; catalogs made then are adopted as having both versions.)
-- ids are TEXT UUIDs, timestamps BIGINT epoch milliseconds, documents JSONB, entity
-- versions BIGINT tenths (meridian.Version: 0.1 is 1). Text keys use COLLATE "C" so
-- list order and cursors compare bytes, as SQLite does.
-- The vector and pg_trgm extensions are created before any migration runs (Open).

CREATE TABLE entities (
    id         TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    kind       TEXT COLLATE "C" NOT NULL,
    name       TEXT COLLATE "C" NOT NULL,
    fqn        TEXT COLLATE "C" NOT NULL,
    version    BIGINT  NOT NULL,
    updated_at BIGINT  NOT NULL,
    updated_by TEXT    NOT NULL,
    deleted    BOOLEAN NOT NULL DEFAULT false,
    doc        JSONB   NOT NULL,
    UNIQUE (kind, fqn)
);
CREATE INDEX entities_kind_name_id ON entities (kind, name, id);
-- Lists and counts of active (or deleted) entities of a kind read only this index.
CREATE INDEX entities_kind_deleted_name_id ON entities (kind, deleted, name, id);
CREATE INDEX entities_name_id ON entities (name, id);

CREATE TABLE entity_versions (
    id      TEXT COLLATE "C" NOT NULL,
    version BIGINT NOT NULL,
    doc     JSONB  NOT NULL,
    PRIMARY KEY (id, version)
);

CREATE TABLE relations (
    from_id   TEXT COLLATE "C" NOT NULL,
    from_kind TEXT NOT NULL,
    to_id     TEXT COLLATE "C" NOT NULL,
    to_kind   TEXT NOT NULL,
    type      TEXT COLLATE "C" NOT NULL,
    doc       JSONB NULL,
    seq       BIGINT GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (from_id, to_id, type)
);
CREATE INDEX relations_to_type ON relations (to_id, type);
CREATE INDEX relations_from_type ON relations (from_id, type);
CREATE INDEX relations_seq ON relations (seq);

CREATE TABLE change_events (
    seq                BIGSERIAL PRIMARY KEY,
    id                 TEXT COLLATE "C" NOT NULL UNIQUE,
    event_type         TEXT    NOT NULL,
    entity_type        TEXT    NOT NULL,
    entity_id          TEXT    NOT NULL,
    entity_fqn         TEXT    NOT NULL,
    user_name          TEXT    NOT NULL,
    ts                 BIGINT  NOT NULL,
    previous_version   DOUBLE PRECISION NOT NULL,
    current_version    DOUBLE PRECISION NOT NULL,
    change_description JSONB   NULL,
    entity             JSONB   NULL,
    recursive          BOOLEAN NOT NULL DEFAULT false
);
CREATE INDEX change_events_entity ON change_events (entity_id);
CREATE INDEX change_events_ts ON change_events (ts);

CREATE TABLE settings (
    key   TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);
