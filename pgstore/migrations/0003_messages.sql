-- 0003: durable message records (notify.MessageStore) and idempotency
-- leases.
--
-- A reservation of an idempotency key (receipt IS NULL) holds the key
-- until lease_until, a bound on one send's duration; after that a Reserve
-- takes it over and reports it abandoned. expires_at stays the retention
-- window, so an abandoned reservation is still known when taken over.
-- Reservations made before this migration get their old expiry as lease.
ALTER TABLE {{s}}{{p}}idempotency ADD COLUMN lease_until timestamptz;
UPDATE {{s}}{{p}}idempotency SET lease_until = expires_at WHERE receipt IS NULL;

-- One row per message, written in the statement that debits its charge
-- (ledger ref = id), and moved along notify.CanMove; a move into failed
-- writes the refund (ref "refund:" || id) in the same statement. history
-- is a JSON array of {"state", "at"}, oldest first.
CREATE TABLE {{s}}{{p}}messages (
    id                  text PRIMARY KEY,
    account             text NOT NULL,
    kind                text NOT NULL,
    request             text NOT NULL DEFAULT '',
    recipient           text NOT NULL DEFAULT '',
    state               text NOT NULL,
    provider            text NOT NULL DEFAULT '',
    provider_message_id text NOT NULL DEFAULT '',
    gateway             text NOT NULL DEFAULT '',
    idempotency_key     text NOT NULL DEFAULT '',
    domain              text NOT NULL DEFAULT '',
    units               integer NOT NULL DEFAULT 0,
    metered             boolean NOT NULL DEFAULT false,
    charge              bigint NOT NULL DEFAULT 0 CHECK (charge >= 0),
    currency_code       text NOT NULL DEFAULT '',
    currency_symbol     text NOT NULL DEFAULT '',
    currency_exponent   integer NOT NULL DEFAULT 0,
    attempts            integer NOT NULL DEFAULT 0,
    error_code          text NOT NULL DEFAULT '',
    error               text NOT NULL DEFAULT '',
    note                text NOT NULL DEFAULT '',
    history             jsonb NOT NULL,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL
);
CREATE INDEX {{p}}messages_key ON {{s}}{{p}}messages (account, idempotency_key, created_at)
    WHERE idempotency_key <> '';
-- What the reconciler scans: only open records, which are few.
CREATE INDEX {{p}}messages_open ON {{s}}{{p}}messages (updated_at)
    WHERE state IN ('pending', 'attempting');
-- What Cleanup scans.
CREATE INDEX {{p}}messages_settled ON {{s}}{{p}}messages (updated_at)
    WHERE state NOT IN ('pending', 'attempting');
