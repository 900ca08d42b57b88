-- 0015: the provider calls of a message that had several providers to
-- try (store.Record.Tried): a JSON array of {provider, outcome,
-- error_code, at}, NULL for a message with one provider.
ALTER TABLE {{s}}{{p}}messages ADD COLUMN tried jsonb;
