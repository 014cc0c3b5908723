-- 0001_tokens: API tokens, mirroring sqlite/0001_tokens.sql. Only a token's SHA-256 is
-- kept. Timestamps are BIGINT epoch milliseconds; expires_at 0 means never. Text keys
-- use COLLATE "C", as the engine's tables do.
-- IF NOT EXISTS: a catalog made before auth owned this table (the engine's 0001_init
-- created it, with the same columns) keeps it and its tokens.

CREATE TABLE IF NOT EXISTS tokens (
    id         TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    hash       TEXT COLLATE "C" NOT NULL UNIQUE,
    user_name  TEXT COLLATE "C" NOT NULL,
    name       TEXT    NOT NULL,
    token_type TEXT    NOT NULL,
    created_at BIGINT  NOT NULL,
    expires_at BIGINT  NOT NULL DEFAULT 0,
    revoked    BOOLEAN NOT NULL DEFAULT false
);
CREATE INDEX IF NOT EXISTS tokens_user ON tokens (user_name);
