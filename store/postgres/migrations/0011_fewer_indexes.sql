-- 0011_fewer_indexes: SQLite's 0011 drops entities_kind_name_id and search_docs_fqn,
-- which its reads no longer need. PostgreSQL keeps both: its merge of live and deleted
-- entities and of each kind's first page would be planned differently, and has not been
-- measured without them. This migration keeps the two sequences' numbers the same.
SELECT 1;
