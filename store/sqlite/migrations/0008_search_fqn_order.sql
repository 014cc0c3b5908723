-- 0008_search_fqn_order: on PostgreSQL this adds the index a search without words reads
-- its page from in FQN order. SQLite has it already (search_docs_kind_fqn and
-- search_docs_fqn, 0002), so there is nothing to change; the number is kept so both
-- drivers record the same engine migrations.
SELECT 1;
