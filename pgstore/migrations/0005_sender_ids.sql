-- 0005: the sender headers an account may use (notify.Account.SenderIDs).
-- NULL or empty: any header the SMS rules accept.
ALTER TABLE {{s}}{{p}}accounts ADD COLUMN sender_ids text[];
