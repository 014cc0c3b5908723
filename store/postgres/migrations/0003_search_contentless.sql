-- 0003_search_contentless: on SQLite this makes the FTS5 index contentless (it kept a
-- second copy of each document's words). PostgreSQL's tsvector column already keeps no
-- copy beside search_docs, so there is nothing to change; the number is kept so both
-- drivers record the same engine migrations.
SELECT 1;
