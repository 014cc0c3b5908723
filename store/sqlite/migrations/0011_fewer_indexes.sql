-- 0011_fewer_indexes: two indexes that every entity write paid for and no read needs.
-- Each insert lands at a random place in both, which cost about one page of the
-- write-ahead log a table at ingest; without them the storage writes about a quarter
-- more tables a second.
-- - entities_kind_name_id: lists of one kind read entities_kind_deleted_name_id, and a
--   list of live and deleted entities together merges its two ranges (tx.List).
-- - search_docs_fqn: a search without words over every kind reads each kind's first
--   page from search_docs_kind_deleted_fqn and merges them (tx.matchAll), as it did for
--   several kinds.
-- PostgreSQL's 0011 keeps its indexes: its planner serves those reads with them.
DROP INDEX entities_kind_name_id;
DROP INDEX search_docs_fqn;
