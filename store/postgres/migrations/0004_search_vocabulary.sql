-- 0004_search_vocabulary: the words typo correction suggests, as on SQLite.
-- search_vocab holds every word the keyword index holds (as written, not stemmed; see
-- store.Vocabulary) with the number of documents holding it, and search_docs.vocab
-- each document's own words, so that replacing or removing a document updates the
-- counts. The index is rebuilt at the next start (store.SearchIndexVersion 3), which
-- fills both.
ALTER TABLE search_docs ADD COLUMN vocab TEXT[] NOT NULL DEFAULT '{}';

CREATE TABLE search_vocab (
    word TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    docs INTEGER NOT NULL
);

-- Deleting a document takes its words out of the vocabulary (a word whose count falls
-- to 0 is no longer suggested).
CREATE FUNCTION search_vocab_forget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE search_vocab SET docs = docs - 1 WHERE word = ANY(OLD.vocab);
    RETURN NULL;
END
$$;
CREATE TRIGGER search_docs_vocab AFTER DELETE ON search_docs
    FOR EACH ROW EXECUTE FUNCTION search_vocab_forget();
