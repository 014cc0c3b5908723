-- 0005_search_vocab_pending: writers no longer update the vocabulary counts. Every
-- create of a document counted up the same rows of search_vocab (the words most
-- documents hold), so concurrent writers waited for each other's row locks until
-- commit, and each count left a dead row version behind. A writer now appends its
-- changes to search_vocab_pending, one row per word gained (+1) or lost (-1), which
-- conflicts with nothing; one folder at a time moves them into search_vocab
-- (vocab.go). The vocabulary's count of a word is its search_vocab count plus its
-- pending deltas, read together, so nothing lags. search_vocab is as 0004 left it.
CREATE TABLE search_vocab_pending (
    word  TEXT COLLATE "C" NOT NULL,
    delta INTEGER NOT NULL
);
CREATE INDEX search_vocab_pending_word ON search_vocab_pending (word);

-- Deleting a document takes its words out of the vocabulary, through the pending rows.
CREATE OR REPLACE FUNCTION search_vocab_forget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_vocab_pending (word, delta) SELECT w, -1 FROM unnest(OLD.vocab) AS w;
    RETURN NULL;
END
$$;
