-- billing_daily becomes WITHOUT ROWID: clustered on its key, a range of days is read
-- in order with every column. runCredits alerts sum each recent conversation's
-- credits: an index on conversation.
CREATE TABLE billing_daily_clustered (
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
) WITHOUT ROWID;
INSERT INTO billing_daily_clustered SELECT day, feature, action, app, source, client, user_name, agent, units, credits, actions, failures
FROM billing_daily;
DROP TABLE billing_daily;
ALTER TABLE billing_daily_clustered RENAME TO billing_daily;
CREATE INDEX billing_daily_user ON billing_daily (user_name, day);

CREATE INDEX billing_ledger_conversation ON billing_ledger (conversation);
