// Package errtext holds the rule for the text of errors a sender sees
// (through the HTTP API and the admin API): it must not name a Go package,
// which would tell clients what the service runs on ("memstore: ...",
// "pgstore: ..."), nor carry a store's, relay's or vendor's own words,
// which name hosts, ports, database users and vendor accounts. The
// adapters decide with Shown whether an error's words may be answered
// or only a plain sentence, the details going to their log.
package errtext

import (
	"errors"
	"regexp"
	"strings"

	"github.com/notifykit/notify"
)

// packagePrefix matches a text that starts with a package-like name and a
// colon.
var packagePrefix = regexp.MustCompile(`^[a-z][a-z0-9_]*: `)

// CallersFault reports whether code says the request, or the caller's
// account, is at fault: invalid_argument, unauthenticated,
// permission_denied, not_found, insufficient_funds, rate_limited,
// conflict, suppressed and declined. Only errors of these codes may be answered in their own
// words; every other code (internal, unavailable, rejected,
// outcome_unknown, deadline_exceeded, canceled, and codes this package
// does not know) is the service's or a vendor's trouble.
func CallersFault(code notify.Code) bool {
	switch code {
	case notify.CodeInvalidArgument, notify.CodeUnauthenticated, notify.CodePermissionDenied,
		notify.CodeNotFound, notify.CodeInsufficientFunds, notify.CodeRateLimited, notify.CodeConflict,
		notify.CodeSuppressed, notify.CodeDeclined:
		return true
	}
	return false
}

// Shown reports whether the words of err may be shown to the client whose
// request failed with it. They may when err says what the client did
// wrong: its code is CallersFault, or one of own (codes that only the
// adapter itself makes, such as httpapi.CodeMethodNotAllowed), and it
// comes from neither a store (a *notify.StoreError in its chain), nor a
// provider (a *notify.Error naming one: a relay's or vendor's words), nor
// a text that names a package. A provider's InvalidArgument that is only
// field rules (notify.InvalidField: a rule only the provider knows, such
// as an address its relay cannot take) is shown: the Provider contract
// has those words name the field and the rule, never the vendor's words.
// Otherwise the answer is a plain sentence with the request ID, and err
// goes to the log.
func Shown(err error, own ...notify.Code) bool {
	if err == nil {
		return true
	}
	code := notify.CodeOf(err)
	if !CallersFault(code) && !containsCode(own, code) {
		return false
	}
	var se *notify.StoreError
	if errors.As(err, &se) {
		return false
	}
	for c := err; c != nil; c = errors.Unwrap(c) {
		if ne, ok := c.(*notify.Error); ok && ne.Provider != "" && !fieldRulesOnly(ne) {
			return false
		}
	}
	var e *notify.Error
	if errors.As(err, &e) {
		return e.Err == nil || !namesPackage(e.Err.Error())
	}
	return !namesPackage(err.Error())
}

// fieldRulesOnly reports whether e says nothing but which fields break
// which rules.
func fieldRulesOnly(e *notify.Error) bool {
	return e.Code == notify.CodeInvalidArgument && e.Err == nil && len(e.Fields) > 0
}

// namesPackage reports whether a cause starts with a package name, after
// any codes ("conflict: pgstore: ...", the text of a wrapped *notify.Error).
func namesPackage(cause string) bool {
	for {
		m := packagePrefix.FindString(cause)
		if m == "" {
			return false
		}
		if !knownCode(notify.Code(m[:len(m)-2])) {
			return true
		}
		cause = cause[len(m):]
	}
}

// knownCode reports whether c is one of notify's codes.
func knownCode(c notify.Code) bool {
	switch c {
	case notify.CodeUnavailable, notify.CodeRejected, notify.CodeOutcomeUnknown, notify.CodeDeadlineExceeded,
		notify.CodeCanceled, notify.CodeInternal:
		return true
	}
	return CallersFault(c)
}

func containsCode(codes []notify.Code, c notify.Code) bool {
	for _, o := range codes {
		if o == c {
			return true
		}
	}
	return false
}

// ShownText is Shown for an error known only by its code and its text
// (the Error() of a *notify.Error, "op: provider p: code: cause"), as a
// receipt's leg or a message record keeps it. It returns the words a
// client may see (the cause, without the operation and the code), and
// whether it may see them.
func ShownText(code notify.Code, text string) (string, bool) {
	provider, cause := SplitText(code, text)
	if !CallersFault(code) || provider != "" || strings.Contains(cause, " store: ") || namesPackage(cause) {
		return "", false
	}
	return cause, true
}

// SplitText splits the text of a *notify.Error of the code into the
// provider it names ("" when none) and its cause: "op: provider p: code:
// cause" gives p and cause. A text of another form is all cause.
func SplitText(code notify.Code, text string) (provider, cause string) {
	if op, rest, ok := strings.Cut(text, ": "); ok && strings.Contains(op, ".") && !strings.ContainsAny(op, " \"") {
		text = rest // "notify.Send: "
	}
	if rest, ok := strings.CutPrefix(text, "provider "); ok {
		if name, after, ok := strings.Cut(rest, ": "); ok && !strings.Contains(name, " ") {
			provider, text = name, after
		}
	}
	if code != "" {
		text = strings.TrimPrefix(text, string(code)+": ")
	}
	return provider, text
}

// storeNotes are the parts a notify.Receipt's or Message's Note gets when
// a store failed after the send (the Notifier appends "; <prefix><the
// store's error>"): each is answered as its plain sentence ("" for the
// part's own words up to the store's error).
var storeNotes = [...]struct{ prefix, say string }{
	{"idempotency record failed: ", "the idempotency record could not be written"},
	{"message record: ", "the message record could not be updated"},
	// Notifiers before the one ledger wrote these two; receipts they
	// kept under idempotency keys may still be answered.
	{"delivery log: ", "the delivery log could not be written"},
	{"price adjustment for the ", ""}, // "price adjustment for the qr gateway failed: <error>"
}

// failedFirst is how the chat channel's note says why the other gateway
// sent the message: "sent by the qr gateway: the cloud gateway failed
// first (<its error>)".
const failedFirst = " failed first ("

// PublicNote returns a note (a notify.Receipt's or Message's Note, "what
// the caller should know") without the store and vendor errors the
// Notifier and the channels put in it: a store's failure after the send
// becomes a plain sentence, and a chat failover says which gateway failed
// first but not its error. The details are the log's; a note without
// such errors is returned as it is.
func PublicNote(note string) string {
	if note == "" {
		return ""
	}
	var b strings.Builder
	head, parts := splitNote(note)
	if i := strings.Index(head, failedFirst); i >= 0 {
		if j := strings.LastIndex(head, ")"); j > i {
			// Everything to the last parenthesis goes: an error's text
			// may hold parentheses and "; " itself.
			head = head[:i+len(failedFirst)-2] + head[j+1:]
		}
	}
	b.WriteString(head)
	for _, p := range parts {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p)
	}
	return b.String()
}

// splitNote returns what comes before the first store part of a note, and
// the plain sentences of the store parts.
func splitNote(note string) (head string, parts []string) {
	cut := -1
	for i := 0; i < len(note); {
		if i == 0 || strings.HasPrefix(note[i-2:], "; ") {
			if k, ok := storePart(note[i:]); ok {
				if cut < 0 {
					cut = i
				}
				say := storeNotes[k].say
				if say == "" {
					say, _, _ = strings.Cut(note[i:], ": ")
				}
				if len(parts) == 0 || parts[len(parts)-1] != say {
					parts = append(parts, say)
				}
			}
		}
		j := strings.Index(note[i:], "; ")
		if j < 0 {
			break
		}
		i += j + 2
	}
	if cut < 0 {
		return note, nil
	}
	return strings.TrimSuffix(note[:cut], "; "), parts
}

func storePart(s string) (int, bool) {
	for k, n := range storeNotes {
		if strings.HasPrefix(s, n.prefix) {
			return k, true
		}
	}
	return 0, false
}
