-- 0001_configs: Query Runner's admin, user and team configs and saved queries,
-- mirrored by postgres/0001_configs.sql. A config's doc is its JSON without secrets;
-- secret holds the secrets as one value sealed with the catalog's key ('' for none).
-- Configs are keyed by the database service's entity id, so a renamed service keeps
-- them. Timestamps are epoch milliseconds.

CREATE TABLE qr_admin_configs (
    service_id  TEXT    NOT NULL PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    enabled     INTEGER NOT NULL,
    doc         TEXT    NOT NULL,
    secret      TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE TABLE qr_user_configs (
    id          TEXT    NOT NULL PRIMARY KEY,
    service_id  TEXT    NOT NULL,
    user_id     TEXT    NOT NULL,
    doc         TEXT    NOT NULL,
    secret      TEXT    NOT NULL,
    status      TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (service_id, user_id)
);
CREATE INDEX qr_user_configs_user ON qr_user_configs (user_id);

CREATE TABLE qr_team_configs (
    id          TEXT    NOT NULL PRIMARY KEY,
    service_id  TEXT    NOT NULL,
    team_id     TEXT    NOT NULL,
    doc         TEXT    NOT NULL,
    secret      TEXT    NOT NULL,
    status      TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (service_id, team_id)
);
CREATE INDEX qr_team_configs_team ON qr_team_configs (team_id);

CREATE TABLE qr_saved_queries (
    id           TEXT    NOT NULL PRIMARY KEY,
    owner_id     TEXT    NOT NULL,
    service_name TEXT    NOT NULL,
    name         TEXT    NOT NULL,
    query_text   TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
CREATE INDEX qr_saved_queries_owner ON qr_saved_queries (owner_id, created_at, id);
