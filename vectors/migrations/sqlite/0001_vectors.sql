-- vectors holds the embeddings of the catalog's entities: one row per chunk of an
-- entity's text, per model and dimension, so a model change never mixes vectors.
-- content_hash is the hash of every chunk's text and of the filter columns, for the
-- indexer to skip unchanged entities; kind, fqn, service (lower case), tags (a JSON array
-- of lower-case tag FQNs) and deleted are what searches filter by. embedding is the
-- vector as little-endian float16.
CREATE TABLE vectors (
    entity_id    TEXT    NOT NULL,
    model        TEXT    NOT NULL,
    dim          INTEGER NOT NULL,
    chunk        INTEGER NOT NULL,
    content_hash TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    fqn          TEXT    NOT NULL,
    service      TEXT    NOT NULL DEFAULT '',
    tags         TEXT    NOT NULL DEFAULT '[]',
    deleted      INTEGER NOT NULL DEFAULT 0,
    text         TEXT    NOT NULL,
    embedding    BLOB    NOT NULL,
    PRIMARY KEY (entity_id, model, dim, chunk)
);
CREATE INDEX vectors_model ON vectors (model, dim);

-- vectors_state counts the writes to vectors, so a process holding them in memory
-- notices another process's writes.
CREATE TABLE vectors_state (
    id         INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    generation INTEGER NOT NULL
);
INSERT INTO vectors_state (id, generation) VALUES (1, 0);
