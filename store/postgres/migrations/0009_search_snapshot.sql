-- 0009_search_snapshot: a document whose source is the snapshot of the entity's current
-- version with its entityType added (every entity write of a kind without secrets) no
-- longer stores that source a second time: its source is NULL, and a hit reads the
-- snapshot from entity_versions. Documents written before keep their source. SQLite's
-- 0009 does the same with a snapshot flag.
ALTER TABLE search_docs ALTER COLUMN source DROP NOT NULL;
