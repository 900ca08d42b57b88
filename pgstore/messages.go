package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/notifykit/notify/store/storeutil"

	"github.com/jackc/pgx/v5"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// maxMessageIDLen bounds a message ID so that its refund ref still fits
// in a ledger ref.
const maxMessageIDLen = maxRefLen - len(store.RefundRefPrefix)

// staleLimit bounds one Stale call.
const staleLimit = 10_000

// moveFrom lists, for each target state, the states record.CanMove lets
// reach it: Move's UPDATE applies only from one of them, so the state
// machine is checked under the row's lock without a second round trip.
var moveFrom = statesFrom(record.CanMove)

// backfillFrom lists, for each state, the states record.CanBackfill lets
// a report of it reach as a history step.
var backfillFrom = statesFrom(record.CanBackfill)

// statesFrom lists, for each target state, the states from which rule
// allows it.
func statesFrom(rule func(from, to record.State) bool) map[record.State][]string {
	out := make(map[record.State][]string)
	states := record.States()
	for _, to := range states {
		for _, from := range states {
			if rule(from, to) {
				out[to] = append(out[to], string(from))
			}
		}
	}
	return out
}

// Open writes m as a record, pending, attempting, queued or scheduled
// (record.OpenStates), with its SendAt and Payload, and, when m.Charge is
// positive, debits it under ref m.ID, in one statement, as store.Ledger
// documents: store.ErrInsufficientFunds, store.ErrNotFound (no wallet),
// store.ErrInvalid (another currency, a negative charge, an empty account
// or ID, an ID over 193 bytes, another state) and store.ErrConflict (the
// ID is recorded already) write nothing. Any other error leaves the
// outcome unknown; the record and its debit are then both there or both
// missing, and Message tells which.
func (s *Store) Open(ctx context.Context, m *record.Message) (record.Balance, error) {
	return s.open(ctx, s.pool, true, m)
}

// OpenUnlisted is Open unless the account's suppression list stops m, in
// one statement: the list's entry is read in the statement that writes
// the record and its debit, whose writes run only when there is none, as
// store.Ledger documents. It is repeated after a lost connection as Open
// is (never once the statement may have run).
func (s *Store) OpenUnlisted(ctx context.Context, m *record.Message, to string, stopping []store.SuppressionReason) (record.Balance, store.Suppression, error) {
	if err := storeutil.CheckStopping(stopping); err != nil {
		return record.Balance{}, store.Suppression{}, fmt.Errorf("pgstore: open message: %w", err)
	}
	args, err := openArgs(m)
	if err != nil {
		return record.Balance{}, store.Suppression{}, err
	}
	key, err := storeutil.CheckSuppressionKeys(m.Account, m.Kind, []string{to})
	if err != nil {
		return record.Balance{}, store.Suppression{}, fmt.Errorf("pgstore: open message: %w", err)
	}
	if !storable(key[0]) {
		key[0] = "" // no entry can name it
	}
	reasons := make([]string, len(stopping))
	for i, r := range stopping {
		reasons[i] = string(r)
	}
	var (
		after          *int64
		stored         bool
		listed, reason *string
		at             *time.Time
	)
	err = s.run(ctx, true, onceOnly, func() error {
		return s.pool.QueryRow(ctx, s.q.openUnlisted, append(args, key[0], reasons)...).Scan(&after, &stored, &listed, &reason, &at)
	})
	if err == nil && reason != nil {
		return record.Balance{}, store.Suppression{Account: m.Account, Kind: m.Kind, To: *listed,
			Reason: store.SuppressionReason(*reason), At: at.UTC()}, nil
	}
	b, err := s.opened(ctx, s.pool, true, m, after, stored, err)
	return b, store.Suppression{}, err
}

// OpenTx is Open inside tx, a transaction of the caller's on this Store's
// database (a queue writes a record's job in the same transaction, see
// pgstore/pgqueue): the record and its debit take effect when, and only
// if, the caller commits tx. It validates m and answers as Open does, but
// runs its statements on tx, once: nothing is repeated after a lost
// connection. The debit holds the wallet's row lock until tx ends, so
// concurrent sends of the account wait for it: keep tx short. A
// duplicate ID (store.ErrConflict) and any error of the server abort tx,
// as any failed statement does; after the other refusals
// (store.ErrInsufficientFunds, store.ErrNotFound, store.ErrInvalid) tx
// is still usable, with nothing written.
func (s *Store) OpenTx(ctx context.Context, tx pgx.Tx, m *record.Message) (record.Balance, error) {
	if tx == nil {
		return record.Balance{}, fmt.Errorf("pgstore: open message: %w: nil transaction", store.ErrInvalid)
	}
	return s.open(ctx, tx, false, m)
}

// open is Open on q: the pool, whose statements are repeated after a
// lost connection as s.do allows (retry), or a caller's transaction,
// whose are not.
func (s *Store) open(ctx context.Context, q querier, retry bool, m *record.Message) (record.Balance, error) {
	args, err := openArgs(m)
	if err != nil {
		return record.Balance{}, err
	}
	var after *int64
	var stored bool
	// Not repeated after a lost connection: a repeat of a run that
	// committed would answer ErrConflict.
	err = s.run(ctx, retry, onceOnly, func() error {
		return q.QueryRow(ctx, s.q.openMessage, args...).Scan(&after, &stored)
	})
	return s.opened(ctx, q, retry, m, after, stored, err)
}

// OpenTxMany opens every record of ms, each queued or scheduled (the
// records a queue opens), in tx, with their debits, all or nothing:
// 10,000 records take a fraction of the time of as many OpenTx calls.
// Each account is debited the sum of its records' charges under its
// wallet's lock, in one statement, and only then are the ledger rows
// (one per record, ref its ID, its running balance in ms's order) and
// the records written, each table by one COPY. When an account cannot
// pay its sum (store.ErrInsufficientFunds), has no wallet
// (store.ErrNotFound) or another currency (store.ErrInvalid) nothing is
// written and tx stays usable; a record already recorded
// (store.ErrConflict) or any other error aborts tx, which the caller
// rolls back. A record in another state, or that carries a provider's
// ID, attempts or an error, is store.ErrInvalid, as are two currencies
// among one account's records. ms is taken as Open takes m.
//
// It answers, for each record of ms in its order, the balance its
// account's wallet had right after that record's debit, as Open answers
// one (the zero Balance for a record that charges nothing); the wallets
// are locked in the order of their accounts, so two batches that share
// accounts never wait for each other in a cycle.
func (s *Store) OpenTxMany(ctx context.Context, tx pgx.Tx, ms []*record.Message) ([]record.Balance, error) {
	if tx == nil {
		return nil, fmt.Errorf("pgstore: open messages: %w: nil transaction", store.ErrInvalid)
	}
	if len(ms) == 0 {
		return nil, nil
	}
	rows, needs, err := batchRows(ms)
	if err != nil {
		return nil, err
	}
	after, paid, err := s.debitMany(ctx, tx, needs)
	if err != nil {
		return nil, err
	}
	switch {
	case !paid:
		return nil, s.batchRefused(ctx, tx, ms, needs)
	case len(after) != len(needs):
		// Never a ledger row without its wallet's balance: the caller
		// rolls the debits back.
		return nil, fmt.Errorf("pgstore: open messages: debited %d of %d wallets", len(after), len(needs))
	}
	// Each row's running balance: the wallet's before the debit, less
	// each charge in turn, ending at what the debit left.
	running := make(map[string]int64, len(needs))
	for a, n := range needs {
		running[a] = after[a] + n.total
	}
	balances := make([]record.Balance, len(ms))
	ledger := make([][]any, 0, len(ms))
	for i, m := range ms {
		if m.Charge.Minor > 0 {
			running[m.Account] -= m.Charge.Minor
			ledger = append(ledger, []any{m.Account, m.ID, -m.Charge.Minor, running[m.Account]})
			balances[i] = record.Balance{Account: m.Account, Available: record.Money{Minor: running[m.Account], Currency: m.Charge.Currency}}
		}
	}
	if _, err := tx.CopyFrom(ctx, s.table("ledger"), []string{"account", "ref", "amount", "balance_after"}, pgx.CopyFromRows(ledger)); err != nil {
		return nil, s.batchFailed(ctx, err)
	}
	written, err := tx.CopyFrom(ctx, s.table("messages"), messageColumnList, pgx.CopyFromRows(rows))
	if err != nil {
		return nil, s.batchFailed(ctx, err)
	}
	if written != int64(len(ms)) {
		return nil, fmt.Errorf("pgstore: open messages: wrote %d of %d records", written, len(ms))
	}
	return balances, nil
}

// batchFailed answers a failed write of OpenTxMany: a record already
// recorded is store.ErrConflict.
func (s *Store) batchFailed(ctx context.Context, err error) error {
	if pgCode(err) == stateUniqueViolation {
		return fmt.Errorf("pgstore: open messages: %w: a message of the batch is recorded already", store.ErrConflict)
	}
	return s.fail(ctx, "open messages", err)
}

// accountNeed is what a batch charges one account.
type accountNeed struct {
	total int64
	cur   record.Currency
}

// debitMany debits each account of needs its total, in one statement,
// when every one can pay it in its wallet's currency (paid), and then
// answers each wallet's balance after the debit; otherwise it moves
// nothing.
func (s *Store) debitMany(ctx context.Context, tx pgx.Tx, needs map[string]*accountNeed) (map[string]int64, bool, error) {
	accounts, totals := make([]string, 0, len(needs)), make([]int64, 0, len(needs))
	codes, exponents := make([]string, 0, len(needs)), make([]int32, 0, len(needs))
	for a, n := range needs {
		accounts, totals = append(accounts, a), append(totals, n.total)
		codes, exponents = append(codes, n.cur.Code), append(exponents, int32(n.cur.Exponent))
	}
	after := make(map[string]int64, len(needs))
	paid := true
	rows, err := tx.Query(ctx, s.q.debitMany, accounts, totals, codes, exponents)
	if err != nil {
		return nil, false, s.batchFailed(ctx, err)
	}
	for rows.Next() {
		var account *string
		var balance *int64
		if err := rows.Scan(&paid, &account, &balance); err != nil {
			rows.Close()
			return nil, false, s.batchFailed(ctx, err)
		}
		if account != nil && balance != nil {
			after[*account] = *balance
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, s.batchFailed(ctx, err)
	}
	return after, paid, nil
}

// batchRows checks ms and returns each record's row of the messages
// table (messageColumnList) and what the batch charges each account.
func batchRows(ms []*record.Message) ([][]any, map[string]*accountNeed, error) {
	rows := make([][]any, len(ms))
	needs := make(map[string]*accountNeed)
	for i, m := range ms {
		if m == nil || !m.State.Waiting() || m.ProviderMessageID != "" || m.Gateway != "" || m.Attempts != 0 ||
			m.ErrorCode != "" || m.Error != "" {
			return nil, nil, fmt.Errorf("pgstore: open messages: record %d: %w", i,
				store.InvalidField("state", "a batch holds queued or scheduled records not yet sent"))
		}
		_, h, err := openChecked(m)
		if err != nil {
			return nil, nil, fmt.Errorf("pgstore: open messages: record %d: %w", i, err)
		}
		if m.Charge.Minor > 0 {
			n := needs[m.Account]
			if n == nil {
				n = &accountNeed{cur: m.Charge.Currency}
				needs[m.Account] = n
			}
			if !n.cur.Same(m.Charge.Currency) {
				return nil, nil, fmt.Errorf("pgstore: open messages: account %q: %w", m.Account,
					store.InvalidField("charge", "every record of an account must be in one currency"))
			}
			n.total += m.Charge.Minor
		}
		var sendAt *time.Time
		if !m.SendAt.IsZero() {
			sendAt = &m.SendAt
		}
		cur := m.Charge.Currency
		// In messageColumns' order.
		rows[i] = []any{m.ID, m.Account, string(m.Kind), string(m.Request), m.To, string(m.State), m.Provider, "", "",
			m.IdempotencyKey, m.Domain, int32(m.Units), m.Metered, m.Charge.Minor, cur.Code, cur.Symbol,
			int32(cur.Exponent), int32(0), "", "", m.Note, h, m.CreatedAt, m.CreatedAt,
			"", false, m.Resend, m.Country, nil, sendAt, m.Payload, m.Fallback, m.Follows, string(m.Confirm)}
	}
	return rows, needs, nil
}

// batchRefused says why debitMany moved nothing: the first account of
// ms (in ms's order) without a wallet, in another currency, or short of
// its sum, as needs has them.
func (s *Store) batchRefused(ctx context.Context, tx pgx.Tx, ms []*record.Message, needs map[string]*accountNeed) error {
	var order []string
	seen := make(map[string]bool, len(needs))
	for _, m := range ms {
		if needs[m.Account] != nil && !seen[m.Account] {
			seen[m.Account] = true
			order = append(order, m.Account)
		}
	}
	type wallet struct {
		balance  int64
		code     string
		exponent int
	}
	wallets := make(map[string]wallet)
	rows, err := tx.Query(ctx, s.q.openWallets, order)
	if err != nil {
		return s.fail(ctx, "open messages", err)
	}
	for rows.Next() {
		var a string
		var w wallet
		if err := rows.Scan(&a, &w.balance, &w.code, &w.exponent); err != nil {
			rows.Close()
			return s.fail(ctx, "open messages", err)
		}
		wallets[a] = w
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s.fail(ctx, "open messages", err)
	}
	for _, a := range order {
		w, ok := wallets[a]
		n := needs[a]
		switch {
		case !ok:
			return fmt.Errorf("pgstore: open messages: wallet of account %q: %w", a, store.ErrNotFound)
		case w.code != n.cur.Code || w.exponent != n.cur.Exponent:
			return fmt.Errorf("pgstore: open messages: wallet of %q is in %s, not %q: %w", a, w.code, n.cur.Code,
				store.InvalidField("charge", "must be in the wallet's currency "+w.code))
		case w.balance < n.total:
			return fmt.Errorf("charges of %s to account %q: %w", record.Money{Minor: n.total, Currency: n.cur}.Decimal(), a, store.ErrInsufficientFunds)
		}
	}
	return fmt.Errorf("pgstore: open messages: the batch's charges: %w", store.ErrInsufficientFunds)
}

// openChecked checks m as a record to open and returns the state it
// opens in and its history's JSON: what openArgs and batchRows write.
func openChecked(m *record.Message) (record.State, []byte, error) {
	var fe record.FieldErrors
	switch {
	case m == nil:
		return "", nil, fmt.Errorf("pgstore: open message: %w: nil record", store.ErrInvalid)
	case m.ID == "":
		fe.Add("id", "is required")
	case len(m.ID) > maxMessageIDLen:
		fe.Add("id", fmt.Sprintf("must be at most %d bytes", maxMessageIDLen))
	}
	if m.Account == "" {
		fe.Add("account", "is required")
	}
	if m.Charge.Minor < 0 {
		fe.Add("charge", "must not be negative")
	}
	state, steps, ok := record.OpenStates(m.State, m.CreatedAt)
	if !ok {
		fe.Add("state", "must be pending, attempting, queued or scheduled")
	}
	if err := store.InvalidFields(fe); err != nil {
		return "", nil, err
	}
	history, err := json.Marshal(historyJSON(steps))
	if err != nil {
		return "", nil, fmt.Errorf("pgstore: open message: %w", err)
	}
	return state, history, nil
}

// openArgs checks m and returns the arguments of the openMessage
// statement that writes it.
func openArgs(m *record.Message) ([]any, error) {
	state, history, err := openChecked(m)
	if err != nil {
		return nil, err
	}
	var sendAt *time.Time
	if !m.SendAt.IsZero() {
		sendAt = &m.SendAt
	}
	cur := m.Charge.Currency
	return []any{m.ID, m.Account, string(m.Kind), string(m.Request),
		m.To, m.Provider, m.ProviderMessageID, m.Gateway, m.IdempotencyKey, m.Domain,
		m.Units, m.Metered, m.Charge.Minor, cur.Code, cur.Symbol, cur.Exponent,
		m.Attempts, m.ErrorCode, m.Error, m.Note, history, m.CreatedAt, m.Resend, string(state), m.Country,
		sendAt, m.Payload, m.Fallback, m.Follows, string(m.Confirm)}, nil
}

// opened answers the openMessage statement of m, which returned after
// and stored, or failed with err (m may be nil then).
func (s *Store) opened(ctx context.Context, q querier, retry bool, m *record.Message, after *int64, stored bool, err error) (record.Balance, error) {
	switch {
	case pgCode(err) == stateUniqueViolation && m != nil:
		return record.Balance{}, fmt.Errorf("pgstore: open message: %w: message %q is recorded already", store.ErrConflict, m.ID)
	case pgCode(err) == stateUniqueViolation:
		return record.Balance{}, fmt.Errorf("pgstore: open message: %w: a message of the batch is recorded already", store.ErrConflict)
	case err != nil:
		return record.Balance{}, s.fail(ctx, "open message", err)
	case stored && after != nil:
		// The debit matched the wallet's currency code and exponent.
		return record.Balance{Account: m.Account, Available: record.Money{Minor: *after, Currency: m.Charge.Currency}}, nil
	case stored:
		return record.Balance{}, nil // no charge
	}
	return record.Balance{}, s.openRefused(ctx, q, retry, m)
}

// run runs op as s.do does when retry is set, else once: a statement on
// a caller's transaction is never repeated.
func (s *Store) run(ctx context.Context, retry, kind bool, op func() error) error {
	if !retry {
		return op()
	}
	return s.do(ctx, kind, op)
}

// openRefused says why Open wrote nothing, reading on q what refused it.
func (s *Store) openRefused(ctx context.Context, q querier, retry bool, m *record.Message) error {
	var code *string
	var exponent *int
	var duplicate bool
	err := s.run(ctx, retry, repeatable, func() error {
		return q.QueryRow(ctx, s.q.openRefusal, m.ID, m.Account).Scan(&code, &exponent, &duplicate)
	})
	cur := m.Charge.Currency
	switch {
	case err != nil:
		return s.fail(ctx, "open message", err)
	case duplicate:
		return fmt.Errorf("pgstore: open message: %w: message %q is recorded already", store.ErrConflict, m.ID)
	case code == nil:
		return fmt.Errorf("pgstore: open message: wallet of account %q: %w", m.Account, store.ErrNotFound)
	case *code != cur.Code || *exponent != cur.Exponent:
		return fmt.Errorf("pgstore: open message: wallet of %q is in %s, not %q: %w", m.Account, *code, cur.Code,
			store.InvalidField("charge", "must be in the wallet's currency "+*code))
	}
	return fmt.Errorf("charge of %s to account %q: %w", m.Charge.Decimal(), m.Account, store.ErrInsufficientFunds)
}

// Move moves the record along record.CanMove, refunding its charge in the
// same statement when it moves into failed (unless u.KeepCharge), and
// dropping its Payload in the same statement when it leaves the live
// states (record.State.Live), or adds
// a step record.CanBackfill allows, as store.Ledger documents. Each
// statement returns only the columns of the store.Moved it answers, not
// the record. A move whose answer was lost (store.ErrUnavailable) may
// have applied: a repeat then answers store.ErrConflict with the record in
// u.State.
func (s *Store) Move(ctx context.Context, account, id string, u store.Update) (store.Moved, error) {
	from := moveFrom[u.State]
	if u.From != "" {
		// A conditional move: from u.From only, when CanMove allows it.
		from = []string{}
		if record.CanMove(u.From, u.State) {
			from = []string{string(u.From)}
		}
	}
	if from == nil {
		from = []string{} // no state leads there: the move is ErrConflict
	}
	step, err := json.Marshal([]stateChangeJSON{{State: string(u.State), At: u.At}})
	if err != nil {
		return store.Moved{}, fmt.Errorf("pgstore: move message: %w", err)
	}
	query, args := s.q.moveMessage, []any{id, account, string(u.State), from, u.At,
		u.Provider, u.ProviderMessageID, u.Gateway, u.Attempts, u.ErrorCode,
		u.Error, u.Note, step, u.VendorCode, triedColumn(u.Tried)}
	switch {
	case u.State == record.StateFailed && !u.KeepCharge:
		query, args = s.q.failMessage, append(args, store.RefundRefPrefix+id)
	case storeutil.Repricing(u):
		query, args = s.q.repriceMessage, append(args, u.Reprice.Minor, store.AdjustRefPrefix+id,
			u.Reprice.Currency.Code, u.Reprice.Currency.Exponent)
	}
	var m store.Moved
	if query == s.q.moveMessage && s.moves != nil && u.State != record.StateAttempting {
		// A move that locks no wallet: committed with its neighbours'.
		// Never a claim, which a vendor call waits for: behind a batch
		// under way it would keep a queue's send slot for two commits.
		m, err = s.moves.move(ctx, account, id, query, args)
	} else {
		// A refund's or reprice's statement answers the balance after
		// its credit beside.
		scan := scanMovedBalance
		if query == s.q.moveMessage {
			scan = scanMoved
		}
		err = s.do(ctx, onceOnly, func() (err error) {
			m, err = scan(s.pool.QueryRow(ctx, query, args...))
			return err
		})
	}
	if errors.Is(err, pgx.ErrNoRows) && backfillFrom[u.State] != nil && u.From == "" {
		err = s.do(ctx, onceOnly, func() (err error) {
			m, err = scanMoved(s.pool.QueryRow(ctx, s.q.backfillMessage, id, account, step,
				backfillFrom[u.State], `[{"state":"`+string(u.State)+`"}]`))
			return err
		})
	}
	if errors.Is(err, pgx.ErrNoRows) {
		// Neither applied: the record is missing, or where it stands
		// forbids the move.
		err = s.do(ctx, repeatable, func() (err error) {
			m, err = scanMoved(s.pool.QueryRow(ctx, s.q.moved, id, account))
			return err
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return store.Moved{}, fmt.Errorf("pgstore: move message: message %q: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return store.Moved{}, s.fail(ctx, "move message", err)
		}
		if record.CanMove(m.State, u.State) && storeutil.RepriceMismatch(u, m.Charge) {
			// The move was allowed: the reprice's currency stopped it.
			return m, fmt.Errorf("pgstore: move message %q: a reprice in %s of a charge in %s: %w", id, u.Reprice.Currency.Code, m.Charge.Currency.Code, store.ErrInvalid)
		}
		return m, fmt.Errorf("message %s is %s and cannot become %s: %w", id, m.State, u.State, store.ErrConflict)
	}
	if err != nil {
		return store.Moved{}, s.fail(ctx, "move message", err)
	}
	return m, nil
}

// Message returns the account's record id, or store.ErrNotFound (also for a
// record of another account).
func (s *Store) Message(ctx context.Context, account, id string) (*record.Message, error) {
	var m *record.Message
	err := s.do(ctx, repeatable, func() (err error) {
		m, err = scanMessage(s.pool.QueryRow(ctx, s.q.message, id, account))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("pgstore: message %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, s.fail(ctx, "message", err)
	}
	return m, nil
}

// ByKey returns the account's records opened with idempotency key key at
// or after since, oldest first.
func (s *Store) ByKey(ctx context.Context, account, key string, since time.Time) ([]*record.Message, error) {
	return s.messages(ctx, "messages by key", s.q.messagesByKey, account, key, since)
}

// ByProviderID returns the records provider accepted under its message ID
// id, of any account, oldest first, through an index of provider IDs.
func (s *Store) ByProviderID(ctx context.Context, provider, id string) ([]*record.Message, error) {
	return s.messages(ctx, "messages by provider ID", s.q.messagesByProvider, provider, id)
}

// Stale returns up to limit (at most 10,000) records of any account still
// pending or attempting that last moved before cutoff, least recently
// moved first; never a queued or scheduled one, which its job settles. It
// reads an index of the open records only.
func (s *Store) Stale(ctx context.Context, cutoff time.Time, limit int) ([]*record.Message, error) {
	if limit < 0 || limit > staleLimit {
		limit = staleLimit
	}
	return s.messages(ctx, "stale messages", s.q.staleMessages, cutoff, limit)
}

// Attempting reports whether provider has a record in attempting that
// last moved at or after since, of any account, as store.Ledger
// documents: one probe of the index of the records in flight by provider
// and time.
func (s *Store) Attempting(ctx context.Context, provider string, since time.Time) (bool, error) {
	var found bool
	err := s.do(ctx, repeatable, func() error {
		return s.pool.QueryRow(ctx, s.q.attemptingMessages, provider, since).Scan(&found)
	})
	if err != nil {
		return false, s.fail(ctx, "attempting messages", err)
	}
	return found, nil
}

func (s *Store) messages(ctx context.Context, what, query string, args ...any) ([]*record.Message, error) {
	return readRows(ctx, s, what, scanMessage, query, args...)
}

// readRows runs query, a read that may run again (repeatable), and
// answers its rows as scan reads each; an error is s.fail's for what.
func readRows[T any](ctx context.Context, s *Store, what string, scan func(pgx.Row) (T, error), query string, args ...any) ([]T, error) {
	var out []T
	err := s.do(ctx, repeatable, func() error {
		out = out[:0]
		rows, err := s.pool.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			v, err := scan(rows)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.fail(ctx, what, err)
	}
	return out, nil
}

// attemptJSON is the stored form of one record.Attempt.
type attemptJSON struct {
	Provider  string    `json:"provider"`
	Outcome   string    `json:"outcome"`
	ErrorCode string    `json:"error_code,omitempty"`
	At        time.Time `json:"at"`
}

// triedColumn is an Update's Tried as the tried column's JSON, nil (SQL
// NULL: the column stays) when there is none.
func triedColumn(tried []record.Attempt) any {
	if tried == nil {
		return nil
	}
	out := make([]attemptJSON, len(tried))
	for i, a := range tried {
		out[i] = attemptJSON{Provider: a.Provider, Outcome: string(a.Outcome), ErrorCode: a.ErrorCode, At: a.At}
	}
	b, err := json.Marshal(out)
	if err != nil { // strings and times always marshal
		return nil
	}
	return string(b)
}

// readTried decodes the tried column: nil when NULL.
func readTried(raw []byte) ([]record.Attempt, error) {
	if raw == nil {
		return nil, nil
	}
	var in []attemptJSON
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	out := make([]record.Attempt, len(in))
	for i, a := range in {
		out[i] = record.Attempt{Provider: a.Provider, Outcome: record.State(a.Outcome), ErrorCode: a.ErrorCode, At: a.At.UTC()}
	}
	return out, nil
}

// stateChangeJSON is the stored form of one history step.
type stateChangeJSON struct {
	State string    `json:"state"`
	At    time.Time `json:"at"`
}

// historyJSON is steps in the history column's form.
func historyJSON(steps []record.StateChange) []stateChangeJSON {
	h := make([]stateChangeJSON, len(steps))
	for i, c := range steps {
		h[i] = stateChangeJSON{State: string(c.State), At: c.At}
	}
	return h
}

// scanMoved reads one row of movedColumns.
func scanMoved(row pgx.Row) (store.Moved, error) { return scanMovedWith(row, nil) }

// scanMovedBalance reads one row of movedColumns followed by the
// wallet's balance after the move's credit (NULL without one), in the
// record's currency (a credit is made only in it).
func scanMovedBalance(row pgx.Row) (store.Moved, error) {
	var balance *int64
	m, err := scanMovedWith(row, &balance)
	if err == nil && balance != nil {
		m.Balance = record.Money{Minor: *balance, Currency: m.Charge.Currency}
	}
	return m, err
}

// scanMovedWith reads movedColumns, then into extra when it is not nil.
func scanMovedWith(row pgx.Row, extra any) (store.Moved, error) {
	var (
		m            store.Moved
		state        string
		charge       int64
		code, symbol string
		exponent     int
	)
	dest := []any{&state, &charge, &code, &symbol, &exponent, &m.Refunded, &m.UpdatedAt}
	if extra != nil {
		dest = append(dest, extra)
	}
	if err := row.Scan(dest...); err != nil {
		return store.Moved{}, err
	}
	m.State = record.State(state)
	m.Charge = record.Money{Minor: charge, Currency: record.Currency{Code: code, Symbol: symbol, Exponent: exponent}}
	m.UpdatedAt = m.UpdatedAt.UTC()
	return m, nil
}

// scanMessage reads one row of messageColumns.
func scanMessage(row pgx.Row) (*record.Message, error) {
	var (
		m                    record.Message
		kind, request, state string
		confirm              string
		history, tried       []byte
		sendAt               *time.Time
		charge               int64
		code, symbol         string
		exponent             int
	)
	err := row.Scan(&m.ID, &m.Account, &kind, &request, &m.To, &state, &m.Provider,
		&m.ProviderMessageID, &m.Gateway, &m.IdempotencyKey, &m.Domain, &m.Units, &m.Metered,
		&charge, &code, &symbol, &exponent, &m.Attempts, &m.ErrorCode, &m.Error, &m.Note,
		&history, &m.CreatedAt, &m.UpdatedAt, &m.VendorCode, &m.Refunded, &m.Resend, &m.Country, &tried,
		&sendAt, &m.Payload, &m.Fallback, &m.Follows, &confirm)
	if err != nil {
		return nil, err
	}
	m.Kind, m.Request, m.State, m.Confirm = record.Kind(kind), record.Kind(request), record.State(state), record.State(confirm)
	m.Charge = record.Money{Minor: charge, Currency: record.Currency{Code: code, Symbol: symbol, Exponent: exponent}}
	var steps []stateChangeJSON
	if err := json.Unmarshal(history, &steps); err != nil {
		return nil, fmt.Errorf("history of message %q: %w", m.ID, err)
	}
	if m.Tried, err = readTried(tried); err != nil {
		return nil, fmt.Errorf("tried of message %q: %w", m.ID, err)
	}
	m.History = make([]record.StateChange, len(steps))
	for i, st := range steps {
		m.History[i] = record.StateChange{State: record.State(st.State), At: st.At}
	}
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC()
	if sendAt != nil {
		m.SendAt = sendAt.UTC()
	}
	return &m, nil
}
