-- vectors holds the embeddings of the catalog's entities: one row per chunk of an
-- entity's text, per model and dimension, so a model change never mixes vectors.
-- content_hash is the hash of every chunk's text and of the filter columns, for the
-- indexer to skip unchanged entities; kind, fqn, service (lower case), tags (lower-case
-- tag FQNs) and deleted are what searches filter by. embedding is a halfvec of any
-- dimension; each dimension has its own partial HNSW index (cosine) over the cast to
-- halfvec(dim), created by the index on first use of that dimension (512 here). There
-- is deliberately no btree on (model, dim): the planner would prefer it to HNSW.
CREATE TABLE vectors (
    entity_id    TEXT COLLATE "C" NOT NULL,
    model        TEXT COLLATE "C" NOT NULL,
    dim          INTEGER NOT NULL,
    chunk        INTEGER NOT NULL,
    content_hash TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    fqn          TEXT    NOT NULL,
    service      TEXT    NOT NULL DEFAULT '',
    tags         TEXT[]  NOT NULL DEFAULT '{}',
    deleted      BOOLEAN NOT NULL DEFAULT FALSE,
    text         TEXT    NOT NULL,
    embedding    halfvec NOT NULL,
    PRIMARY KEY (entity_id, model, dim, chunk)
);
CREATE INDEX vectors_hnsw_512 ON vectors USING hnsw ((embedding::halfvec(512)) halfvec_cosine_ops) WITH (m = 16, ef_construction = 128) WHERE dim = 512;

-- vectors_state counts the writes to vectors, so a process holding them in memory
-- notices another process's writes (used on SQLite; kept alike here).
CREATE TABLE vectors_state (
    id         INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    generation BIGINT  NOT NULL
);
INSERT INTO vectors_state (id, generation) VALUES (1, 0);
