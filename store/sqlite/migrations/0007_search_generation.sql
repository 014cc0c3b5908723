-- 0007_search_generation: a counter that moves with every change to the keyword index.
-- Searches keep the terms each query word expands into (store/sqlite terms.go) while
-- it stays put. Reading them again costs a scan of the FTS5 vocabulary, and the
-- database's own data version moves with any commit at all (a consumer's position, a
-- billing entry), which used to empty that cache a few times a second under load. A
-- search reads the counter in its own snapshot, so what it caches is exactly what that
-- snapshot holds.
CREATE TABLE search_generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n  INTEGER NOT NULL
);
INSERT INTO search_generation (id, n) VALUES (1, 0);

CREATE TRIGGER search_generation_insert AFTER INSERT ON search_docs BEGIN
    UPDATE search_generation SET n = n + 1 WHERE id = 1;
END;
CREATE TRIGGER search_generation_update AFTER UPDATE ON search_docs BEGIN
    UPDATE search_generation SET n = n + 1 WHERE id = 1;
END;
CREATE TRIGGER search_generation_delete AFTER DELETE ON search_docs BEGIN
    UPDATE search_generation SET n = n + 1 WHERE id = 1;
END;
