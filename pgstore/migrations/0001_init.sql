-- 0001: accounts, API keys, wallets and their ledger, idempotency keys,
-- the delivery log and custom templates.
--
-- {{s}} is the schema qualifier ("name". or nothing) and {{p}} the table
-- prefix; pgstore substitutes both (validated identifiers) before running
-- this file inside the migration transaction.

CREATE TABLE {{s}}{{p}}accounts (
    id                text PRIMARY KEY,
    name              text NOT NULL DEFAULT '',
    vendor_id         text NOT NULL DEFAULT '',
    currency_code     text NOT NULL DEFAULT '',
    currency_symbol   text NOT NULL DEFAULT '',
    currency_exponent integer NOT NULL DEFAULT 0,
    primary_gateway   text NOT NULL DEFAULT '',
    dlt_templates     jsonb,
    price_plan        text NOT NULL DEFAULT '',
    disabled          boolean NOT NULL DEFAULT false,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);

-- Only the SHA-256 of each key is kept.
CREATE TABLE {{s}}{{p}}api_keys (
    key_hash   bytea PRIMARY KEY CHECK (length(key_hash) = 32),
    account    text NOT NULL REFERENCES {{s}}{{p}}accounts (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX {{p}}api_keys_account ON {{s}}{{p}}api_keys (account);

-- balance = opening + sum(ledger.amount) at every commit; CheckLedger
-- proves it. The CHECK is a second line of defence behind the conditional
-- UPDATE of a debit.
CREATE TABLE {{s}}{{p}}wallets (
    account           text PRIMARY KEY,
    currency_code     text NOT NULL,
    currency_symbol   text NOT NULL DEFAULT '',
    currency_exponent integer NOT NULL,
    opening           bigint NOT NULL CHECK (opening >= 0),
    balance           bigint NOT NULL CHECK (balance >= 0),
    created_at        timestamptz NOT NULL DEFAULT now()
);

-- One row per debit (amount < 0) or credit (amount > 0). The unique ref
-- makes a repeated call a no-op; balance_after is what that call answered.
-- There is no foreign key to wallets on purpose: a row is only ever
-- written from the RETURNING of the UPDATE of an existing wallet, in the
-- same statement, and the key check would run while that wallet's row is
-- locked, lengthening the one section every debit of the account queues
-- for (about 12% of hot-account throughput here). CheckLedger finds
-- strays: their amounts break the identity.
CREATE TABLE {{s}}{{p}}ledger (
    id            bigserial PRIMARY KEY,
    account       text NOT NULL,
    ref           text NOT NULL,
    amount        bigint NOT NULL CHECK (amount <> 0),
    balance_after bigint NOT NULL CHECK (balance_after >= 0),
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account, ref)
);

-- A row with a NULL receipt is a reservation of a send still in flight.
CREATE TABLE {{s}}{{p}}idempotency (
    account     text NOT NULL,
    key_hash    bytea NOT NULL,
    fingerprint text NOT NULL,
    receipt     jsonb,
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (account, key_hash)
);
CREATE INDEX {{p}}idempotency_expires ON {{s}}{{p}}idempotency (expires_at);

CREATE TABLE {{s}}{{p}}deliveries (
    account    text NOT NULL,
    message_id text NOT NULL,
    kind       text NOT NULL,
    status     text NOT NULL,
    receipt    jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (account, message_id)
);
CREATE INDEX {{p}}deliveries_expires ON {{s}}{{p}}deliveries (expires_at);

CREATE TABLE {{s}}{{p}}templates (
    account       text NOT NULL,
    slug          text NOT NULL,
    variables     text[],
    class         text NOT NULL DEFAULT '',
    chat          text NOT NULL DEFAULT '',
    sms           text NOT NULL DEFAULT '',
    email_subject text NOT NULL DEFAULT '',
    email_html    text NOT NULL DEFAULT '',
    email_text    text NOT NULL DEFAULT '',
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account, slug)
);
