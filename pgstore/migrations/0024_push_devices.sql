-- 0024: the push channel's device registry (pushstore.Devices): one row
-- per account and device, a Web Push subscription (its endpoint and
-- keys) or an FCM token, registered for one of the account's recipients.
-- A row is replaced when its device is registered again (new keys, or
-- another recipient), and goes when it is unregistered or when its
-- recipient registers a device more than pushstore.MaxDevices (20): the
-- registration deletes the recipient's least recently registered in the
-- same round trip. Nothing deletes rows on a timer.
CREATE TABLE {{s}}{{p}}push_devices (
    account       text NOT NULL,
    -- The SHA-256 of device_to, the key: an FCM token may be 4096 bytes,
    -- more than a B-tree entry holds.
    to_hash       bytea NOT NULL CHECK (length(to_hash) = 32),
    -- The device's address as the push channel writes it
    -- (push.Recipient); Devices orders ties by it in byte order.
    device_to     text COLLATE "C" NOT NULL CHECK (device_to <> ''),
    -- Compared byte for byte, at most pushstore.MaxRecipientLen bytes.
    recipient     text COLLATE "C" NOT NULL
        CHECK (recipient <> '' AND octet_length(recipient) <= 200),
    -- A subscription's keys as the browser gave them; empty for a token.
    p256dh        text NOT NULL,
    auth          text NOT NULL,
    -- The caller's time, at the microsecond.
    registered_at timestamptz NOT NULL,
    PRIMARY KEY (account, to_hash)
);

-- Devices, and a registration's count of its recipient's devices: a
-- recipient's rows, the most recently registered first.
CREATE INDEX {{p}}push_devices_recipient ON {{s}}{{p}}push_devices
    (account, recipient, registered_at DESC);
