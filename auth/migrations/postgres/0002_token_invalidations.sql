-- 0002_token_invalidations: one row per revoked token, mirroring
-- sqlite/0002_token_invalidations.sql. Every server's principal cache (cache.go) reads
-- the rows after the last it has seen and drops those tokens, so a revocation made on
-- one server reaches the others sharing the database. Rows are written under the
-- driver's write lock, so seq follows commit order. Rows older than an hour are pruned
-- by the next revocation. hash is the token's SHA-256, as in tokens.

CREATE TABLE IF NOT EXISTS token_invalidations (
    seq        BIGSERIAL PRIMARY KEY,
    hash       TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS token_invalidations_created ON token_invalidations (created_at);
