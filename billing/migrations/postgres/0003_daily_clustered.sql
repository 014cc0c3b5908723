-- On SQLite this migration clusters billing_daily on its key (WITHOUT ROWID); here the
-- primary key already serves its ranges. runCredits alerts sum each recent
-- conversation's credits: an index on conversation.
CREATE INDEX billing_ledger_conversation ON billing_ledger (conversation);
