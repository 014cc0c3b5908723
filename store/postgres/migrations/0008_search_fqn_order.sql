-- 0008_search_fqn_order: a search without words answers its page in FQN order; without
-- this index PostgreSQL ranked every matching document to find the first few (80 ms
-- at 100,000 tables), with it the page is read in index order.
CREATE INDEX search_docs_fqn ON search_docs (fqn, id);
