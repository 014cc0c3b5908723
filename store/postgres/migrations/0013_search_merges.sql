-- 0013_search_merges: SQLite's 0013 makes its full-text index merge in larger steps.
-- PostgreSQL's GIN index has no such setting to change. This migration keeps the two
-- sequences' numbers the same.
SELECT 1;
