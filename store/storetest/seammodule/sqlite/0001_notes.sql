-- 0001_notes: the seam suite's module table, numbered alike on both drivers.
CREATE TABLE seam_notes (
    entity_id TEXT    NOT NULL,
    n         INTEGER NOT NULL,
    body      TEXT    NOT NULL,
    PRIMARY KEY (entity_id, n)
);
