-- 0002_search: the keyword search index, kept in the same transaction as every write.
-- search_docs holds one row per indexed entity: the filter fields and the _source JSON.
-- The filter fields (service, tags, owners, domains) are stored lower-cased, so term
-- filters compare case-insensitively; _source keeps the original spelling.
-- search_fts is the FTS5 index of the text fields, already split into lower-case words
-- by store.SearchWords; its rowid is search_docs.seq. No porter stemmer: the words are
-- names, and stemming would make prefix queries ("cust"*) unpredictable.

CREATE TABLE search_docs (
    seq        INTEGER PRIMARY KEY,
    id         TEXT    NOT NULL UNIQUE,
    kind       TEXT    NOT NULL,
    fqn        TEXT    NOT NULL,
    name_words TEXT    NOT NULL,
    service    TEXT    NOT NULL DEFAULT '',
    deleted    INTEGER NOT NULL DEFAULT 0,
    tags       TEXT    NOT NULL DEFAULT '[]',
    owners     TEXT    NOT NULL DEFAULT '[]',
    domains    TEXT    NOT NULL DEFAULT '[]',
    source     TEXT    NOT NULL
);
CREATE INDEX search_docs_kind_fqn ON search_docs (kind, fqn);
CREATE INDEX search_docs_fqn ON search_docs (fqn);

CREATE VIRTUAL TABLE search_fts USING fts5(
    name, display, description, columns,
    tokenize = 'unicode61',
    prefix = '2 3'
);

-- Deleting a document drops its text from the full-text index.
CREATE TRIGGER search_docs_delete AFTER DELETE ON search_docs BEGIN
    DELETE FROM search_fts WHERE rowid = old.seq;
END;
