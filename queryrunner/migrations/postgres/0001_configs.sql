-- 0001_configs: Query Runner's admin, user and team configs and saved queries,
-- mirrored by sqlite/0001_configs.sql. A config's doc is its JSON without secrets;
-- secret holds the secrets as one value sealed with the catalog's key ('' for none).
-- Configs are keyed by the database service's entity id, so a renamed service keeps
-- them. Timestamps are epoch milliseconds.

CREATE TABLE qr_admin_configs (
    service_id  TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    id          TEXT COLLATE "C" NOT NULL UNIQUE,
    enabled     BIGINT  NOT NULL,
    doc         TEXT COLLATE "C" NOT NULL,
    secret      TEXT COLLATE "C" NOT NULL,
    created_at  BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL
);

CREATE TABLE qr_user_configs (
    id          TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    service_id  TEXT COLLATE "C" NOT NULL,
    user_id     TEXT COLLATE "C" NOT NULL,
    doc         TEXT COLLATE "C" NOT NULL,
    secret      TEXT COLLATE "C" NOT NULL,
    status      TEXT COLLATE "C" NOT NULL,
    created_at  BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL,
    UNIQUE (service_id, user_id)
);
CREATE INDEX qr_user_configs_user ON qr_user_configs (user_id);

CREATE TABLE qr_team_configs (
    id          TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    service_id  TEXT COLLATE "C" NOT NULL,
    team_id     TEXT COLLATE "C" NOT NULL,
    doc         TEXT COLLATE "C" NOT NULL,
    secret      TEXT COLLATE "C" NOT NULL,
    status      TEXT COLLATE "C" NOT NULL,
    created_at  BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL,
    UNIQUE (service_id, team_id)
);
CREATE INDEX qr_team_configs_team ON qr_team_configs (team_id);

CREATE TABLE qr_saved_queries (
    id           TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    owner_id     TEXT COLLATE "C" NOT NULL,
    service_name TEXT COLLATE "C" NOT NULL,
    name         TEXT COLLATE "C" NOT NULL,
    query_text   TEXT COLLATE "C" NOT NULL,
    created_at   BIGINT  NOT NULL,
    updated_at   BIGINT  NOT NULL
);
CREATE INDEX qr_saved_queries_owner ON qr_saved_queries (owner_id, created_at, id);
