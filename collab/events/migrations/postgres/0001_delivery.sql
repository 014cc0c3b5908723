-- Event subscriptions' delivery: one row of state per subscription and one ordered
-- queue of events per subscription.
CREATE TABLE event_subscription_state (
    subscription_id  TEXT PRIMARY KEY,
    last_seq         BIGINT NOT NULL DEFAULT 0,
    queued           BIGINT NOT NULL DEFAULT 0,
    delivered        BIGINT NOT NULL DEFAULT 0,
    failed           BIGINT NOT NULL DEFAULT 0,
    dropped          BIGINT NOT NULL DEFAULT 0,
    status           TEXT NOT NULL DEFAULT 'active',
    last_error       TEXT NOT NULL DEFAULT '',
    last_status_code INTEGER NOT NULL DEFAULT 0,
    last_failed_at   BIGINT NOT NULL DEFAULT 0,
    last_success_at  BIGINT NOT NULL DEFAULT 0,
    updated_at       BIGINT NOT NULL DEFAULT 0,
    lease_owner      TEXT NOT NULL DEFAULT '',
    lease_until      BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE event_subscription_queue (
    subscription_id  TEXT NOT NULL,
    seq              BIGINT NOT NULL,
    event            TEXT NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    first_attempt_at BIGINT NOT NULL DEFAULT 0,
    next_attempt_at  BIGINT NOT NULL DEFAULT 0,
    delivered_to     TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (subscription_id, seq)
);

-- Events given up (after the retry horizon, or at once for a failure retrying cannot
-- fix), newest kept: at most 1,000 per subscription.
CREATE TABLE event_subscription_failed (
    subscription_id TEXT NOT NULL,
    seq             BIGINT NOT NULL,
    event           TEXT NOT NULL,
    reason          TEXT NOT NULL,
    failed_at       BIGINT NOT NULL,
    PRIMARY KEY (subscription_id, seq)
);
