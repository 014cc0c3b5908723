-- 0002_search: the keyword search index, kept in the same transaction as every write,
-- mirroring store/sqlite's 0002_search.sql.
--
-- search_docs is the keyword index: one row per entity, words already split by
-- store.SearchWords. tsv weighs the name A, the display name B, the description C and
-- the column names D; the trigram index on name_words serves typo-tolerant matches.
CREATE TABLE search_docs (
    id                TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    kind              TEXT COLLATE "C" NOT NULL,
    fqn               TEXT COLLATE "C" NOT NULL,
    name_words        TEXT    NOT NULL,
    display_words     TEXT    NOT NULL,
    description_words TEXT    NOT NULL,
    column_words      TEXT    NOT NULL,
    service           TEXT COLLATE "C" NOT NULL,
    tags              TEXT[]  NOT NULL,
    owners            TEXT[]  NOT NULL,
    domains           TEXT[]  NOT NULL,
    deleted           BOOLEAN NOT NULL,
    source            JSONB   NOT NULL,
    tsv               TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector('simple'::regconfig, name_words), 'A') ||
        setweight(to_tsvector('simple'::regconfig, display_words), 'B') ||
        setweight(to_tsvector('simple'::regconfig, description_words), 'C') ||
        setweight(to_tsvector('simple'::regconfig, column_words), 'D')
    ) STORED
);
CREATE INDEX search_docs_tsv ON search_docs USING gin (tsv);
CREATE INDEX search_docs_name_trgm ON search_docs USING gin (name_words gin_trgm_ops);
CREATE INDEX search_docs_kind ON search_docs (kind);
CREATE INDEX search_docs_tags ON search_docs USING gin (tags);
CREATE INDEX search_docs_owners ON search_docs USING gin (owners);
CREATE INDEX search_docs_domains ON search_docs USING gin (domains);
