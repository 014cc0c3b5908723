-- 0009_search_snapshot: a document whose source is the snapshot of the entity's current
-- version with its entityType added (every entity write of a kind without secrets) no
-- longer stores that source a second time: snapshot = 1 and source is empty, and a hit
-- reads the snapshot from entity_versions. A table's source is several KB, a whole page
-- per document, written by every create and update. Documents written before keep their
-- source. PostgreSQL's 0009 does the same with a NULL source.
ALTER TABLE search_docs ADD COLUMN snapshot INTEGER NOT NULL DEFAULT 0;
