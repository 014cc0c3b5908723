-- 0006_search_terms: on PostgreSQL this adds the table of the keyword index's terms
-- that searches expand query words with. SQLite reads its terms from the FTS5 index
-- itself (0005), so there is nothing to change; the number is kept so both drivers
-- record the same engine migrations.
SELECT 1;
