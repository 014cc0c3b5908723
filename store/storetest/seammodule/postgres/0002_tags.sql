-- 0002_tags: a second migration, so the suite sees a module's sequence applied in order.
ALTER TABLE seam_notes ADD COLUMN tag TEXT NOT NULL DEFAULT '';
