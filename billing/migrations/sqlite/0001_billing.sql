-- billing_ledger is the append-only credit ledger: one row per metered AI action.
-- credits are micro-credits (1e-6 credit) so sums are exact; id is the journal
-- record's id, so replaying a journal segment after a crash inserts nothing twice.
CREATE TABLE billing_ledger (
    id            TEXT    NOT NULL PRIMARY KEY,
    ts            INTEGER NOT NULL,
    feature       TEXT    NOT NULL,
    action        TEXT    NOT NULL,
    app           TEXT    NOT NULL,
    source        TEXT    NOT NULL,
    client        TEXT    NOT NULL,
    user_name     TEXT    NOT NULL,
    is_bot        INTEGER NOT NULL,
    agent         TEXT    NOT NULL,
    conversation  TEXT    NOT NULL,
    units         INTEGER NOT NULL,
    credits       INTEGER NOT NULL,
    price_version INTEGER NOT NULL,
    failed        INTEGER NOT NULL,
    latency_us    INTEGER NOT NULL,
    entities      TEXT    NOT NULL
);
CREATE INDEX billing_ledger_ts ON billing_ledger (ts);
CREATE INDEX billing_ledger_user_ts ON billing_ledger (user_name, ts);

-- billing_prices keeps every version of the price table; an entry names the version
-- it was priced with, so a new table never reprices old entries.
CREATE TABLE billing_prices (
    version    INTEGER NOT NULL PRIMARY KEY,
    created_at INTEGER NOT NULL,
    doc        TEXT    NOT NULL
);

-- billing_budgets is the set of credit ceilings, replaced whole by a PUT.
CREATE TABLE billing_budgets (
    position INTEGER NOT NULL PRIMARY KEY,
    win      TEXT    NOT NULL,
    credits  INTEGER NOT NULL,
    scope    TEXT    NOT NULL
);

-- billing_alert is the one credit alert of the workspace.
CREATE TABLE billing_alert (
    id         INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    doc        TEXT    NOT NULL,
    updated_at INTEGER NOT NULL
);

-- billing_alert_fired marks each threshold of each rule that fired in a window, so a
-- restart never fires it twice.
CREATE TABLE billing_alert_fired (
    rule_key     TEXT    NOT NULL,
    threshold    TEXT    NOT NULL,
    window_start INTEGER NOT NULL,
    fired_at     INTEGER NOT NULL,
    PRIMARY KEY (rule_key, threshold, window_start)
);
