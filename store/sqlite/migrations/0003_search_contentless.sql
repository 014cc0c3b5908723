-- 0003_search_contentless: the full-text index keeps no copy of its text. search_fts
-- becomes a contentless FTS5 table (content=''): the words of a document are indexed
-- but not stored again (search_docs holds what a hit answers), and contentless_delete=1
-- lets a document's row be deleted or replaced by rowid. A write then stores its text
-- once, in the index, instead of twice. Ranking (bm25) reads only the index, so
-- answers do not change. The columns, tokenizer and prefix indexes are those of
-- 0002_search; the existing rows are copied across.

DROP TRIGGER search_docs_delete;

CREATE VIRTUAL TABLE search_fts_new USING fts5(
    name, display, description, columns,
    tokenize = 'unicode61',
    prefix = '2 3',
    content = '',
    contentless_delete = 1
);
INSERT INTO search_fts_new (rowid, name, display, description, columns)
    SELECT rowid, name, display, description, columns FROM search_fts;
DROP TABLE search_fts;
ALTER TABLE search_fts_new RENAME TO search_fts;

-- Deleting a document drops its text from the full-text index.
CREATE TRIGGER search_docs_delete AFTER DELETE ON search_docs BEGIN
    DELETE FROM search_fts WHERE rowid = old.seq;
END;
