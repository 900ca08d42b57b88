package storeutil

import (
	"strings"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// NormalizeRecipient returns to in the one form suppression lists keep,
// or ErrInvalid naming "to" (or "channel" for a kind not suppressible):
// for e-mail, the address without surrounding space and lower-cased
// (mailbox providers treat local parts case-insensitively, and a list
// that missed "Ann@" for "ann@" would send to someone who opted out);
// for SMS and chat, the E.164 number of the record's To ("+" and 8 to 15
// digits, spaces, dashes and parentheses dropped); for any other channel,
// the recipient as its channel wrote the record's To, without
// surrounding space (1 to 254 bytes, no spaces or control characters).
func NormalizeRecipient(kind record.Kind, to string) (string, error) {
	to = strings.TrimSpace(to)
	switch kind {
	case "email":
		to = strings.ToLower(to)
		at := strings.LastIndexByte(to, '@')
		if at <= 0 || at == len(to)-1 || len(to) > 254 {
			return "", store.Invalid("to", "must be an e-mail address of at most 254 bytes")
		}
		for _, c := range to {
			if c <= ' ' || c == 0x7f || c == '<' || c == '>' || c == ',' {
				return "", store.Invalid("to", "must be one e-mail address, without spaces or control characters")
			}
		}
		return to, nil
	case "sms", "chat":
		var b strings.Builder
		for i, c := range to {
			switch {
			case c == '+' && i == 0:
				b.WriteByte('+')
			case c >= '0' && c <= '9':
				b.WriteRune(c)
			case c == ' ' || c == '-' || c == '(' || c == ')':
			default:
				return "", store.Invalid("to", "must be a phone number in E.164 form, as +919876543210")
			}
		}
		n := b.String()
		if len(n) < 9 || len(n) > 16 || n[0] != '+' || n[1] == '0' {
			return "", store.Invalid("to", "must be a phone number in E.164 form, as +919876543210")
		}
		return n, nil
	}
	if !store.SuppressibleKind(kind) {
		return "", channelRule(kind)
	}
	if to == "" || len(to) > 254 || strings.IndexFunc(to, func(c rune) bool { return c <= ' ' || c == 0x7f }) >= 0 {
		return "", store.Invalid("to", "must be 1 to 254 bytes without spaces or control characters")
	}
	return to, nil
}

// CheckSuppression returns e with its recipient normalised and At in UTC
// at microsecond precision, or ErrInvalid naming every field that breaks
// AddSuppression's rules. Stores call it first.
func CheckSuppression(e store.Suppression) (store.Suppression, error) {
	var fe store.FieldErrors
	if e.Account == "" {
		fe.Add("account", "is required")
	}
	if to, err := NormalizeRecipient(e.Kind, e.To); err != nil {
		fe = append(fe, err.(store.FieldErrors)...)
	} else {
		e.To = to
	}
	if !e.Reason.Valid() {
		fe.Add("reason", "must be unsubscribed, hard_bounce, complaint or manual")
	}
	if e.At.IsZero() {
		fe.Add("at", "is required")
	}
	e.At = e.At.UTC().Truncate(time.Microsecond)
	return e, fe.Err()
}

// CheckSuppressionKey returns the normalised recipient of an account's
// lookup or removal, or ErrInvalid naming the fields that break the
// rules.
func CheckSuppressionKey(account string, kind record.Kind, to string) (string, error) {
	var fe store.FieldErrors
	if account == "" {
		fe.Add("account", "is required")
	}
	n, err := NormalizeRecipient(kind, to)
	if err != nil {
		fe = append(fe, err.(store.FieldErrors)...)
	}
	return n, fe.Err()
}

// CheckSuppressionKeys is CheckSuppressionKey for LookupSuppressions: it
// refuses an empty account or a kind that is not a channel's name with
// ErrInvalid, and returns each recipient of tos normalised, or "" for
// one the list's rules refuse (it can have no entry).
func CheckSuppressionKeys(account string, kind record.Kind, tos []string) ([]string, error) {
	var fe store.FieldErrors
	if account == "" {
		fe.Add("account", "is required")
	}
	if !store.SuppressibleKind(kind) {
		fe = append(fe, channelRule(kind)...)
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	keys := make([]string, len(tos))
	for i, to := range tos {
		keys[i], _ = NormalizeRecipient(kind, to)
	}
	return keys, nil
}

// channelRule is the refusal of kind as the channel of a list: the rule
// store.SuppressionQuery.Check states, so that its text is written once.
func channelRule(kind record.Kind) store.FieldErrors {
	fe, _ := store.SuppressionQuery{Kind: kind}.Check().(store.FieldErrors)
	return fe
}
