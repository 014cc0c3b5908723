-- Task numbers: the next TASK-NNNNN name.
CREATE TABLE tasks_sequence (
    name  TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);

-- Feed threads (conversations and legacy task threads) about an entity, with their
-- posts and reactions in doc; version orders read-modify-writes.
CREATE TABLE feed_threads (
    id         TEXT PRIMARY KEY,
    type       TEXT NOT NULL,
    about      TEXT NOT NULL,
    about_type TEXT NOT NULL,
    about_fqn  TEXT NOT NULL,
    about_id   TEXT NOT NULL,
    task_id    BIGINT,
    task_status TEXT,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    version    BIGINT NOT NULL,
    doc        TEXT NOT NULL
);
CREATE INDEX feed_threads_created ON feed_threads (created_at, id);
CREATE INDEX feed_threads_about ON feed_threads (about_fqn, created_at);
CREATE INDEX feed_threads_about_id ON feed_threads (about_id);
CREATE UNIQUE INDEX feed_threads_task ON feed_threads (task_id);
