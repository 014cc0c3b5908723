-- 0007_search_generation: on SQLite this adds a counter that moves with every change
-- to the keyword index, which keys the cache of the terms query words expand into.
-- PostgreSQL reads those terms from search_terms (0006) and keeps no such cache, so
-- there is nothing to change; the number is kept so both drivers record the same
-- engine migrations.
SELECT 1;
