-- 0010_event_snapshots: the change event of an entity write of a kind without secrets
-- holds the same document as the snapshot the write stores. It now keeps that snapshot's
-- version in snapshot_version, and entity is NULL: events are read with the snapshot's
-- document (rowscan.EventColumns), and a hard delete copies the document into the
-- entity's events before it removes the snapshots. Events written before keep their
-- entity. SQLite's 0010 adds the same column.
ALTER TABLE change_events ADD COLUMN snapshot_version BIGINT;
