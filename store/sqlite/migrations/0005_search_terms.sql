-- 0005_search_terms: the terms of the full-text index, read by range. A query word
-- matches every indexed term starting with it; searches expand a word into those
-- terms (store/sqlite search.go, prefixTerms) before matching, because FTS5 answers a
-- prefix query by merging the whole document lists of every term it covers, once for
-- each MATCH expression of a search. search_terms holds no data of its own: it reads
-- search_fts's index.
CREATE VIRTUAL TABLE search_terms USING fts5vocab(search_fts, row);

-- What a search matches and ranks on, without the source document: a search joins
-- every document its words match to search_docs by seq, and the source (several KB,
-- on overflow pages) makes each of those rows a page read of its own (250 ms for
-- 62,000 matches at 100,000 tables). Through this index the join reads about 100
-- bytes per document, and only the page's sources are read from the table.
CREATE INDEX search_docs_match ON search_docs (seq, kind, deleted, fqn, id, name_words);
