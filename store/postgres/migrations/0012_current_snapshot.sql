-- 0012_current_snapshot: the snapshot of an entity's current version is stored once.
-- A write whose row document is also the version's snapshot (store.Row.Snapshot) sets
-- entities.snapshot and writes no entity_versions row for that version; an update first
-- copies such a row's document into entity_versions as the snapshot of the version it
-- replaces. Reads of a version take the entity_versions row when there is one, and
-- otherwise the entities row if it is that version's snapshot. Rows written before keep
-- their entity_versions snapshots. SQLite's 0012 does the same.
ALTER TABLE entities ADD COLUMN snapshot BOOLEAN NOT NULL DEFAULT false;
