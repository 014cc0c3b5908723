-- billing_daily rolls the ledger up by UTC day (ts / 86400000) and by every dimension
-- the cycle reports group by, so they read one row per day and combination instead of
-- every entry. The drain adds to it, in the transaction that inserts the entries, only
-- the entries it inserted.
CREATE TABLE billing_daily (
    day       INTEGER NOT NULL,
    feature   TEXT    NOT NULL,
    action    TEXT    NOT NULL,
    app       TEXT    NOT NULL,
    source    TEXT    NOT NULL,
    client    TEXT    NOT NULL,
    user_name TEXT    NOT NULL,
    agent     TEXT    NOT NULL,
    units     INTEGER NOT NULL,
    credits   INTEGER NOT NULL,
    actions   INTEGER NOT NULL,
    failures  INTEGER NOT NULL,
    PRIMARY KEY (day, feature, action, app, source, client, user_name, agent)
);
CREATE INDEX billing_daily_user ON billing_daily (user_name, day);

INSERT INTO billing_daily (day, feature, action, app, source, client, user_name, agent, units, credits, actions, failures)
SELECT ts / 86400000, feature, action, app, source, client, user_name, agent, SUM(units), SUM(credits), COUNT(*), SUM(failed)
FROM billing_ledger GROUP BY ts / 86400000, feature, action, app, source, client, user_name, agent;
