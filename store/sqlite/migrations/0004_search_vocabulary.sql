-- 0004_search_vocabulary: the words typo correction suggests. search_vocab holds every
-- word the keyword index holds (as written, not stemmed; see store.Vocabulary) with the
-- number of documents holding it, and search_docs.vocab each document's own words (a
-- JSON array), so that replacing or removing a document updates the counts (a word
-- whose count falls to 0 is no longer suggested). The index is rebuilt at the next start
-- (store.SearchIndexVersion 3), which fills both.
ALTER TABLE search_docs ADD COLUMN vocab TEXT NOT NULL DEFAULT '[]';

CREATE TABLE search_vocab (
    word TEXT    NOT NULL PRIMARY KEY,
    docs INTEGER NOT NULL
) WITHOUT ROWID;

DROP TRIGGER search_docs_delete;

-- Deleting a document drops its text from the full-text index and its words from the
-- vocabulary.
CREATE TRIGGER search_docs_delete AFTER DELETE ON search_docs BEGIN
    DELETE FROM search_fts WHERE rowid = old.seq;
    UPDATE search_vocab SET docs = docs - 1 WHERE word IN (SELECT value FROM json_each(old.vocab));
END;
