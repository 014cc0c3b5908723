-- 0001_activity: the activity stream, mirrored by postgres/0001_activity.sql. One row per
-- change event taken from the outbox (id = the event's id): its time (epoch ms), type,
-- entity, actor, the first domain of the entity ('' for none) and the JSON activity
-- event. activity_retention holds the retention in days: the global one under domain
-- '' and one row per domain with its own.

CREATE TABLE activity_events (
    id          TEXT    NOT NULL PRIMARY KEY,
    ts          INTEGER NOT NULL,
    event_type  TEXT    NOT NULL,
    entity_type TEXT    NOT NULL,
    entity_id   TEXT    NOT NULL,
    entity_fqn  TEXT    NOT NULL,
    user_name   TEXT    NOT NULL,
    domain      TEXT    NOT NULL,
    doc         TEXT    NOT NULL
);
CREATE INDEX activity_events_ts ON activity_events (ts, id);
CREATE INDEX activity_events_entity ON activity_events (entity_id, ts);
CREATE INDEX activity_events_user ON activity_events (user_name, ts);
CREATE INDEX activity_events_domain ON activity_events (domain, ts);

CREATE TABLE activity_retention (
    domain TEXT    NOT NULL PRIMARY KEY,
    days   INTEGER NOT NULL
);
