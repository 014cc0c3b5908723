-- 0001_tokens: API tokens, mirrored by postgres/0001_tokens.sql. Only a token's SHA-256
-- is kept. Timestamps are INTEGER epoch milliseconds; expires_at 0 means never.
-- IF NOT EXISTS: a catalog made before auth owned this table (the engine's 0001_init
-- created it, with the same columns) keeps it and its tokens.

CREATE TABLE IF NOT EXISTS tokens (
    id         TEXT    NOT NULL PRIMARY KEY,
    hash       TEXT    NOT NULL UNIQUE,
    user_name  TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    token_type TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL DEFAULT 0,
    revoked    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS tokens_user ON tokens (user_name);
