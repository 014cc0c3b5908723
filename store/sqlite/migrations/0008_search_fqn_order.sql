-- 0008_search_fqn_order: a search without words counts the documents of its kinds and
-- reads its page in FQN order. search_docs_kind_fqn (0002) gave that order but not the
-- deleted flag, so counting 10,000 of 100,000 tables read each row (33 ms); this index
-- answers both from the index alone (under 1 ms). PostgreSQL's 0008 adds its own index
-- for the same searches.
DROP INDEX search_docs_kind_fqn;
CREATE INDEX search_docs_kind_deleted_fqn ON search_docs (kind, deleted, fqn, id);
