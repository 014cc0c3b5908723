-- 0006_search_terms: the terms of the keyword index, read by range, as on SQLite
-- (its 0005). A query word matches every indexed term starting with it ('month':*),
-- and GIN answers such a prefix by gathering the whole posting list of every term
-- under it into a bitmap, once in each statement a search sends (about 60 ms for a
-- common word at 100,000 tables), while whole terms are read lazily and skipped
-- through (about 6 ms). A search now expands each word into the few whole terms that
-- start with it (search.go, termsStarting), read from search_terms.
--
-- search_terms counts the documents holding each term of search_docs.tsv. As with
-- the vocabulary (0004, 0005), writers append their changes to search_terms_pending,
-- one row per term a document gains (+1) or loses (-1), and the folder moves them
-- into search_terms (vocab.go); a read sums both, so nothing lags.
CREATE TABLE search_terms (
    term TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    docs INTEGER NOT NULL
);
CREATE TABLE search_terms_pending (
    term  TEXT COLLATE "C" NOT NULL,
    delta INTEGER NOT NULL
);
CREATE INDEX search_terms_pending_term ON search_terms_pending (term);

-- The documents already indexed.
INSERT INTO search_terms (term, docs)
SELECT t, count(*) FROM search_docs, unnest(tsvector_to_array(tsv)) AS t GROUP BY t;

-- Deleting a document takes its words out of the vocabulary and its terms out of
-- search_terms, through the pending rows.
CREATE OR REPLACE FUNCTION search_vocab_forget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_vocab_pending (word, delta) SELECT w, -1 FROM unnest(OLD.vocab) AS w;
    INSERT INTO search_terms_pending (term, delta) SELECT t, -1 FROM unnest(tsvector_to_array(OLD.tsv)) AS t;
    RETURN NULL;
END
$$;
