package pgstore

import (
	"strings"

	"github.com/notifykit/notify/record"
)

// queries holds every statement with the store's table names filled in,
// built once in New so that no call formats SQL.
type queries struct {
	move, balance, openWallet, checkLedger, ledger string

	putAccount, account, accountByKey, addKey, revokeKey string

	reserve, complete, release string

	openMessage, openUnlisted, debitMany, openWallets, openRefusal, moveMessage, failMessage, repriceMessage, backfillMessage, moved, message, messagesByKey,
	messagesByProvider, staleMessages, attemptingMessages, cleanupMessages string

	openRequest, requestByKey, cleanupRequests string

	putTemplate, template, deleteTemplate, templates string

	cleanupIdem string

	limits limitQueries

	verifications verificationQueries

	counters counterQueries

	suppressions suppressionQueries

	preferences preferenceQueries

	pushDevices pushDeviceQueries

	migrationsTable, migrationVersions, migrationInsert string
}

// accountColumns lists an account's columns in the order scanAccount
// reads them.
const accountColumns = `id, name, currency_code, currency_symbol, currency_exponent,
	price_plan, disabled, settings, region, countries, locale`

// messageColumns lists a message record's columns in the order
// scanMessage reads them.
const messageColumns = `id, account, kind, request, recipient, state, provider, provider_message_id, gateway,
	idempotency_key, domain, units, metered, charge, currency_code, currency_symbol,
	currency_exponent, attempts, error_code, error, note, history, created_at, updated_at,
	vendor_code, refunded, resend, country, tried, send_at, payload, fallback, follows, confirm`

// messageColumnList is messageColumns as a list of names: the columns a
// COPY of records writes.
var messageColumnList = func() []string {
	cols := strings.Split(messageColumns, ",")
	for i, c := range cols {
		cols[i] = strings.TrimSpace(c)
	}
	return cols
}()

// movedColumns lists the columns of a store.Moved in the order
// scanMoved reads them: all a move returns, so that a move does not carry
// the record (its history above all) back over the wire.
const movedColumns = `state, charge, currency_code, currency_symbol, currency_exponent, refunded, updated_at`

// liveStates is the SQL list of the states a record keeps its payload in
// (record.State.Live): pending, attempting, queued, scheduled.
var liveStates = sqlStates(record.State.Live)

// sqlStates is the SQL list, ('a', 'b'), of the states of record.States
// that keep says.
func sqlStates(keep func(record.State) bool) string {
	var out []string
	for _, st := range record.States() {
		if keep(st) {
			out = append(out, "'"+string(st)+"'")
		}
	}
	return "(" + strings.Join(out, ", ") + ")"
}

// moveSet is the SET list of a move: the new state and time, the
// update's non-empty fields, the step appended to the history, and the
// payload, kept only while the new state is live ($5 to $15; the
// statements that add to it number their own from $16).
var moveSet = `state = $3, updated_at = $5,
		payload = CASE WHEN $3 IN ` + liveStates + ` THEN payload END,
		provider = COALESCE(NULLIF($6, ''), provider),
		provider_message_id = COALESCE(NULLIF($7, ''), provider_message_id),
		gateway = COALESCE(NULLIF($8, ''), gateway),
		attempts = CASE WHEN $9 <> 0 THEN $9 ELSE attempts END,
		error_code = COALESCE(NULLIF($10, ''), error_code),
		error = COALESCE(NULLIF($11, ''), error),
		note = COALESCE(NULLIF($12, ''), note),
		vendor_code = COALESCE(NULLIF($14, ''), vendor_code),
		tried = COALESCE($15::jsonb, tried),
		history = history || $13::jsonb`

// openMessageSQL is the text of openMessage, or with unlisted of
// openUnlisted, whose stop CTE reads the suppression list's entry that
// stops the send, and whose writes each run only without one.
func openMessageSQL(unlisted bool) string {
	stop, guard, answer := "", "", ""
	if unlisted {
		stop = `stop AS (
	SELECT recipient, reason, at FROM {{s}}{{p}}suppressions
	WHERE account = $2 AND kind = $3 AND recipient = $31 AND reason = ANY($32::text[])
), `
		guard = ` AND NOT EXISTS (SELECT 1 FROM stop)`
		answer = `, (SELECT recipient FROM stop), (SELECT reason FROM stop), (SELECT at FROM stop)`
	}
	return `WITH ` + stop + `upd AS (
	UPDATE {{s}}{{p}}wallets SET balance = balance - $13
	WHERE $13 > 0 AND account = $2 AND balance >= $13
	  AND currency_code = $14 AND currency_exponent = $16` + guard + `
	RETURNING balance
), led AS (
	INSERT INTO {{s}}{{p}}ledger (account, ref, amount, balance_after)
	SELECT $2, $1, -$13, balance FROM upd
	RETURNING balance_after
), rec AS (
	INSERT INTO {{s}}{{p}}messages (` + messageColumns + `)
	SELECT $1, $2, $3, $4, $5, $24, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
		$17, $18, $19, $20, $21, $22, $22, '', false, $23, $25, NULL, $26, $27, $28, $29, $30
	WHERE ($13 = 0 OR EXISTS (SELECT 1 FROM led))` + guard + `
	RETURNING 1
)
SELECT (SELECT balance_after FROM led), EXISTS (SELECT 1 FROM rec)` + answer
}

func buildQueries(qualifier, prefix string) queries {
	x := func(sql string) string { return expand(sql, qualifier, prefix) }
	return queries{
		// move debits (delta < 0) or credits (delta > 0) in one statement,
		// hence one implicit transaction and one round trip. The UPDATE
		// refuses to go below zero and to repeat a recorded ref; the ledger
		// INSERT writes the row only when the UPDATE did, from its
		// RETURNING, so money never moves without its row. Two calls racing
		// with one new ref serialise on the wallet row; the second then
		// fails on the unique (account, ref) and the whole statement is
		// rolled back, and the caller runs it again to read the first
		// result through prev.
		move: x(`WITH w AS (
	SELECT currency_code, currency_symbol, currency_exponent, balance
	FROM {{s}}{{p}}wallets WHERE account = $1
), prev AS (
	SELECT amount, balance_after FROM {{s}}{{p}}ledger WHERE account = $1 AND ref = $3
), upd AS (
	UPDATE {{s}}{{p}}wallets SET balance = balance + $2
	WHERE account = $1 AND balance + $2 >= 0
	  AND currency_code = $4 AND currency_exponent = $5
	  AND NOT EXISTS (SELECT 1 FROM prev)
	RETURNING balance
), ins AS (
	INSERT INTO {{s}}{{p}}ledger (account, ref, amount, balance_after)
	SELECT $1, $3, $2, balance FROM upd
	RETURNING balance_after
)
SELECT (SELECT currency_code FROM w), (SELECT currency_symbol FROM w),
	(SELECT currency_exponent FROM w), (SELECT balance FROM w),
	(SELECT balance_after FROM ins), (SELECT balance_after FROM prev), (SELECT amount FROM prev)`),

		balance: x(`SELECT currency_code, currency_symbol, currency_exponent, balance
FROM {{s}}{{p}}wallets WHERE account = $1`),

		openWallet: x(`INSERT INTO {{s}}{{p}}wallets
	(account, currency_code, currency_symbol, currency_exponent, opening, balance)
VALUES ($1, $2, $3, $4, $5, $5)
ON CONFLICT (account) DO NOTHING`),

		// checkLedger proves the identity two ways: the balance equals the
		// opening plus every ledger amount, and each row's balance_after
		// follows from the one before it (rows are written under the
		// wallet's row lock, so id order is the order money moved in).
		checkLedger: x(`SELECT w.opening, w.balance,
	COALESCE((SELECT sum(amount) FROM {{s}}{{p}}ledger l WHERE l.account = w.account), 0)::bigint,
	(SELECT count(*) FROM {{s}}{{p}}ledger l WHERE l.account = w.account),
	(SELECT count(*) FROM (
		SELECT balance_after, amount,
			lag(balance_after, 1, w.opening) OVER (ORDER BY id) AS before
		FROM {{s}}{{p}}ledger l WHERE l.account = w.account) c
	 WHERE c.balance_after <> c.before + c.amount)
FROM {{s}}{{p}}wallets w WHERE w.account = $1`),

		ledger: x(`SELECT l.id, l.ref, l.amount, l.balance_after, l.created_at,
	w.currency_code, w.currency_symbol, w.currency_exponent
FROM {{s}}{{p}}ledger l JOIN {{s}}{{p}}wallets w ON w.account = l.account
WHERE l.account = $1 AND l.id > $2 ORDER BY l.id LIMIT $3`),

		putAccount: x(`INSERT INTO {{s}}{{p}}accounts
	(id, name, currency_code, currency_symbol, currency_exponent, price_plan, disabled, settings,
	region, countries, locale)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
ON CONFLICT (id) DO UPDATE SET
	name = EXCLUDED.name, currency_code = EXCLUDED.currency_code,
	currency_symbol = EXCLUDED.currency_symbol, currency_exponent = EXCLUDED.currency_exponent,
	price_plan = EXCLUDED.price_plan, disabled = EXCLUDED.disabled,
	settings = EXCLUDED.settings, region = EXCLUDED.region, countries = EXCLUDED.countries,
	locale = EXCLUDED.locale, updated_at = now()`),

		account: x(`SELECT ` + accountColumns + `
FROM {{s}}{{p}}accounts WHERE id = $1`),

		accountByKey: x(`SELECT k.key_hash, a.id, a.name, a.currency_code, a.currency_symbol,
	a.currency_exponent, a.price_plan, a.disabled, a.settings, a.region, a.countries, a.locale
FROM {{s}}{{p}}api_keys k JOIN {{s}}{{p}}accounts a ON a.id = k.account
WHERE k.key_hash = $1`),

		// addKey answers the key's owner after the insert, so a key that
		// already belongs to another account can be refused.
		addKey: x(`WITH ins AS (
	INSERT INTO {{s}}{{p}}api_keys (key_hash, account)
	SELECT $1, id FROM {{s}}{{p}}accounts WHERE id = $2
	ON CONFLICT (key_hash) DO NOTHING
	RETURNING account
)
SELECT (SELECT account FROM ins),
	(SELECT account FROM {{s}}{{p}}api_keys WHERE key_hash = $1),
	EXISTS (SELECT 1 FROM {{s}}{{p}}accounts WHERE id = $2)`),

		revokeKey: x(`DELETE FROM {{s}}{{p}}api_keys WHERE key_hash = $1`),

		// reserve claims a key unless an entry holds it: a completed one
		// within its retention, or a reservation within its lease or of
		// another fingerprint. A reservation of the same fingerprint
		// whose lease ran out is taken over in place, and
		// abandoned answers when it was made (read before the takeover,
		// from the statement's snapshot). The second branch reads the
		// entry that won, in the same snapshot; when that entry committed
		// after the snapshot it returns no row and the caller asks again.
		// The first branch's NULL receipt takes the column's type (bytea
		// since migration 0010, jsonb before it).
		reserve: x(`WITH abandoned AS (
	SELECT created_at FROM {{s}}{{p}}idempotency
	WHERE account = $1 AND key_hash = $2 AND receipt IS NULL AND fingerprint = $3
	  AND expires_at > $4 AND lease_until <= $4
), ins AS (
	INSERT INTO {{s}}{{p}}idempotency AS i
		(account, key_hash, fingerprint, receipt, created_at, expires_at, lease_until)
	VALUES ($1, $2, $3, NULL, $4, $5, $6)
	ON CONFLICT (account, key_hash) DO UPDATE SET
		fingerprint = EXCLUDED.fingerprint, receipt = NULL, created_at = EXCLUDED.created_at,
		expires_at = EXCLUDED.expires_at, lease_until = EXCLUDED.lease_until
	WHERE i.expires_at <= $4
	   OR (i.receipt IS NULL AND i.lease_until <= $4 AND i.fingerprint = EXCLUDED.fingerprint)
	RETURNING 1
)
SELECT true, NULL::text, NULL, (SELECT created_at FROM abandoned) FROM ins
UNION ALL
SELECT false, fingerprint, receipt, NULL::timestamptz FROM {{s}}{{p}}idempotency
WHERE account = $1 AND key_hash = $2 AND expires_at > $4
  AND NOT EXISTS (SELECT 1 FROM ins)`),

		// complete answers, when it stored nothing, whether the key has a
		// completed entry (ErrConflict) or none (ErrNotFound).
		complete: x(`WITH upd AS (
	UPDATE {{s}}{{p}}idempotency SET receipt = $3, expires_at = $4, lease_until = NULL
	WHERE account = $1 AND key_hash = $2 AND receipt IS NULL AND expires_at > $5
	RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM upd), EXISTS (
	SELECT 1 FROM {{s}}{{p}}idempotency
	WHERE account = $1 AND key_hash = $2 AND receipt IS NOT NULL AND expires_at > $5)`),

		release: x(`DELETE FROM {{s}}{{p}}idempotency
WHERE account = $1 AND key_hash = $2 AND receipt IS NULL`),

		// openMessage writes a record and, when it has a charge ($13 > 0),
		// debits it under ref id, in one statement: the record's INSERT
		// runs only from the ledger row's RETURNING, so neither exists
		// without the other, and a duplicate ID fails the INSERT on the
		// primary key, which rolls the whole statement back. When nothing
		// was written the caller asks openRefusal why. $24 is the state
		// the record starts in, and $21 its history to match; $26 and
		// $27 its send_at (NULL unless scheduled) and payload, $28 to $30
		// its fallback, follows and confirm.
		openMessage: x(openMessageSQL(false)),
		// openUnlisted is openMessage that writes nothing when the
		// account's list of kind $3 holds the recipient $31 with a reason
		// among $32 (OpenUnlisted), and answers that entry beside: the
		// list's read and the opening in one round trip.
		openUnlisted: x(openMessageSQL(true)),

		// debitMany debits each account $1 its total $2, in its currency
		// ($3 code, $4 exponent), in one statement, all or nothing, for
		// OpenTxMany: locked reads every wallet concerned under its row
		// lock, taken in the order of the accounts (so that two batches
		// never wait for each other in a cycle), paid says whether each can pay its total in its
		// currency, and only then do the debits go in. It answers paid,
		// and each debited wallet's account and balance after (none when
		// not paid).
		debitMany: x(`WITH need AS (
	SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::int[]) AS n(account, total, code, exp)
), locked AS (
	SELECT account, balance, currency_code, currency_exponent FROM {{s}}{{p}}wallets
	WHERE account IN (SELECT account FROM need) ORDER BY account FOR UPDATE
), paid AS (
	SELECT coalesce(bool_and(coalesce(l.balance >= n.total AND l.currency_code = n.code
		AND l.currency_exponent = n.exp, false)), true) AS ok
	FROM need n LEFT JOIN locked l ON l.account = n.account
), upd AS (
	UPDATE {{s}}{{p}}wallets AS w SET balance = w.balance - n.total FROM need n
	WHERE w.account = n.account AND (SELECT ok FROM paid)
	RETURNING w.account, w.balance
)
SELECT (SELECT ok FROM paid), upd.account, upd.balance FROM (SELECT 1) AS one LEFT JOIN upd ON true`),

		// openWallets reads the wallets of the accounts $1, to say why
		// openMessages wrote nothing.
		openWallets: x(`SELECT account, balance, currency_code, currency_exponent FROM {{s}}{{p}}wallets
WHERE account = ANY($1)`),

		// openRefusal tells why openMessage wrote nothing: the wallet (or
		// none) and whether the ID is recorded already.
		openRefusal: x(`SELECT (SELECT currency_code FROM {{s}}{{p}}wallets WHERE account = $2),
	(SELECT currency_exponent FROM {{s}}{{p}}wallets WHERE account = $2),
	EXISTS (SELECT 1 FROM {{s}}{{p}}messages WHERE id = $1)`),

		// moveMessage moves a record whose state is one of $4 (the states
		// record.CanMove lets reach $3). A concurrent move of the same
		// record waits for the row lock and then re-checks the state, so
		// of two racing moves CanMove forbids together only one applies.
		moveMessage: x(`UPDATE {{s}}{{p}}messages SET ` + moveSet + `
WHERE id = $1 AND account = $2 AND state = ANY($4)
RETURNING ` + movedColumns),

		// failMessage is moveMessage into failed ($3), which also credits
		// the record's charge back under ref $16 in the same statement and
		// marks it refunded; it answers the wallet's balance after the
		// credit beside (NULL without one).
		failMessage: x(`WITH m AS (
	UPDATE {{s}}{{p}}messages SET ` + moveSet + `, refunded = charge > 0
	WHERE id = $1 AND account = $2 AND state = ANY($4)
	RETURNING ` + movedColumns + `
), w AS (
	UPDATE {{s}}{{p}}wallets AS wl SET balance = wl.balance + m.charge
	FROM m
	WHERE wl.account = $2 AND m.charge > 0
	  AND NOT EXISTS (SELECT 1 FROM {{s}}{{p}}ledger WHERE account = $2 AND ref = $16)
	RETURNING wl.balance, m.charge
), l AS (
	INSERT INTO {{s}}{{p}}ledger (account, ref, amount, balance_after)
	SELECT $2, $16, charge, balance FROM w
)
SELECT ` + movedColumns + `, (SELECT balance FROM w) FROM m`),

		// repriceMessage (which answers, beside, the wallet's balance after
		// its credit, NULL without one) is moveMessage into sent ($3) that also lowers the
		// charge to $16 when that is lower (zero included), crediting the difference back
		// under ref $17 in the same statement; a positive charge in
		// another currency than $18, $19 (code, exponent) matches no row,
		// as a forbidden move does, and Move tells the two apart. old reads the charge the
		// statement's snapshot has (a row lock there would skip the row
		// the update changes); only this move into sent changes a charge,
		// and the state check lets it happen once, so the snapshot's is
		// the charge the update replaces.
		repriceMessage: x(`WITH old AS (
	SELECT charge FROM {{s}}{{p}}messages WHERE id = $1 AND account = $2
), m AS (
	UPDATE {{s}}{{p}}messages SET ` + moveSet + `,
		charge = CASE WHEN $16 >= 0 AND $16 < charge THEN $16 ELSE charge END
	WHERE id = $1 AND account = $2 AND state = ANY($4)
	  AND (charge = 0 OR currency_code = $18 AND currency_exponent = $19)
	RETURNING ` + movedColumns + `
), w AS (
	UPDATE {{s}}{{p}}wallets AS wl SET balance = wl.balance + (old.charge - m.charge)
	FROM m, old
	WHERE wl.account = $2 AND old.charge > m.charge
	  AND NOT EXISTS (SELECT 1 FROM {{s}}{{p}}ledger WHERE account = $2 AND ref = $17)
	RETURNING wl.balance, old.charge - m.charge AS diff
), l AS (
	INSERT INTO {{s}}{{p}}ledger (account, ref, amount, balance_after)
	SELECT $2, $17, diff, balance FROM w
)
SELECT ` + movedColumns + `, (SELECT balance FROM w) FROM m`),

		// backfillMessage adds the step $3 (a one-element JSON array) to
		// the history of a record whose state is one of $4 (the states
		// record.CanBackfill lets a report of the step's state reach) and
		// whose history has no step like $5 yet, before the history's
		// first step in one of $4; the state stays.
		backfillMessage: x(`UPDATE {{s}}{{p}}messages SET history = (
	SELECT jsonb_agg(e ORDER BY k) FROM (
		SELECT e, 2 * n AS k FROM jsonb_array_elements(history) WITH ORDINALITY AS t(e, n)
		UNION ALL
		SELECT $3::jsonb -> 0, 2 * (SELECT min(n) FROM jsonb_array_elements(history) WITH ORDINALITY AS t(e, n)
			WHERE e ->> 'state' = ANY($4)) - 1
	) AS steps)
WHERE id = $1 AND account = $2 AND state = ANY($4) AND NOT history @> $5::jsonb
RETURNING ` + movedColumns),

		// moved reads where a record stands after a move that applied
		// nothing: what a conflict answers.
		moved: x(`SELECT ` + movedColumns + ` FROM {{s}}{{p}}messages WHERE id = $1 AND account = $2`),

		message: x(`SELECT ` + messageColumns + ` FROM {{s}}{{p}}messages WHERE id = $1 AND account = $2`),

		messagesByKey: x(`SELECT ` + messageColumns + ` FROM {{s}}{{p}}messages
WHERE account = $1 AND idempotency_key = $2 AND idempotency_key <> '' AND created_at >= $3
ORDER BY created_at, id`),

		messagesByProvider: x(`SELECT ` + messageColumns + ` FROM {{s}}{{p}}messages
WHERE provider_message_id = $2 AND provider = $1 AND provider_message_id <> ''
ORDER BY created_at, id`),

		// staleMessages reads the index of the open records (migration
		// 0013), which holds no waiting (queued, scheduled) one: a job
		// settles those, however long they wait.
		staleMessages: x(`SELECT ` + messageColumns + ` FROM {{s}}{{p}}messages
WHERE state IN ('pending', 'attempting') AND updated_at < $1
ORDER BY updated_at, id LIMIT $2`),

		// attemptingMessages reads the index of the records in flight by
		// provider (migration 0013): one probe, however many there are.
		attemptingMessages: x(`SELECT EXISTS (SELECT 1 FROM {{s}}{{p}}messages
WHERE state = 'attempting' AND provider = $1 AND updated_at >= $2)`),

		// A template's bodies are one jsonb object, by kind (migration
		// 0012), its variants another, by tag then kind (migration 0021);
		// templates.go encodes and decodes them.
		putTemplate: x(`INSERT INTO {{s}}{{p}}templates (account, slug, variables, class, bodies, locales)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (account, slug) DO UPDATE SET
	variables = EXCLUDED.variables, class = EXCLUDED.class, bodies = EXCLUDED.bodies,
	locales = EXCLUDED.locales, updated_at = now()`),

		template: x(`SELECT slug, variables, class, bodies, locales
FROM {{s}}{{p}}templates WHERE account = $1 AND slug = $2`),

		deleteTemplate: x(`DELETE FROM {{s}}{{p}}templates WHERE account = $1 AND slug = $2`),

		templates: x(`SELECT slug, variables, class, bodies, locales
FROM {{s}}{{p}}templates WHERE account = $1 ORDER BY slug COLLATE "C"`),

		// The cleanup deletes re-check expiry on the row they delete, so a
		// key reserved afresh between the sub-select and the delete stays.
		cleanupIdem: x(`DELETE FROM {{s}}{{p}}idempotency
WHERE (account, key_hash) IN (
	SELECT account, key_hash FROM {{s}}{{p}}idempotency WHERE expires_at <= $1 LIMIT $2)
  AND expires_at <= $1`),

		// cleanupMessages deletes settled records only, never a live
		// one (pending, attempting, queued, scheduled): its predicate is
		// that of the index of settled records (migration 0017).
		cleanupMessages: x(`DELETE FROM {{s}}{{p}}messages
WHERE id IN (
	SELECT id FROM {{s}}{{p}}messages
	WHERE state NOT IN ('pending', 'attempting', 'queued', 'scheduled') AND updated_at <= $1 LIMIT $2)
  AND state NOT IN ('pending', 'attempting', 'queued', 'scheduled') AND updated_at <= $1`),

		openRequest: x(`INSERT INTO {{s}}{{p}}requests (id, account, kind, bulk, idempotency_key, parts, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)`),
		requestByKey: x(`SELECT id, account, kind, bulk, idempotency_key, parts, created_at FROM {{s}}{{p}}requests
WHERE account = $1 AND idempotency_key = $2 AND created_at >= $3 ORDER BY created_at DESC LIMIT 1`),
		cleanupRequests: x(`DELETE FROM {{s}}{{p}}requests
WHERE id IN (SELECT id FROM {{s}}{{p}}requests WHERE created_at <= $1 LIMIT $2)`),

		limits: buildLimitQueries(x),

		verifications: buildVerificationQueries(x),

		counters: buildCounterQueries(x),

		suppressions: buildSuppressionQueries(x),

		preferences: buildPreferenceQueries(x),

		pushDevices: buildPushDeviceQueries(x),

		migrationsTable: x(`CREATE TABLE IF NOT EXISTS {{s}}{{p}}schema_migrations (
	version    integer PRIMARY KEY,
	name       text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`),
		migrationVersions: x(`SELECT version FROM {{s}}{{p}}schema_migrations`),
		migrationInsert:   x(`INSERT INTO {{s}}{{p}}schema_migrations (version, name) VALUES ($1, $2)`),
	}
}
