package adminapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// jsonDecoder refuses unknown fields: a misspelt field is an error, not
// silently ignored.
func jsonDecoder(r io.Reader) *json.Decoder {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	return dec
}

// decodeError turns a decoding error into an InvalidArgument naming the
// field ("body" for the object itself).
func decodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return notify.InvalidField(typeErr.Field, "must be a JSON "+jsonType(typeErr.Type.Kind().String()))
	case errors.As(err, &typeErr):
		return notify.InvalidField("body", "must be a JSON object")
	case errors.As(err, &syntaxErr):
		return notify.InvalidField("body", "is not valid JSON (at byte "+strconv.FormatInt(syntaxErr.Offset, 10)+")")
	case errors.Is(err, io.EOF):
		return notify.InvalidField("body", "is empty; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return notify.InvalidField("body", "ends in the middle of the JSON")
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return notify.InvalidField(strings.Trim(name, `"`), "is not a field of this request")
	}
	return notify.InvalidField("body", err.Error())
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "struct", "map", "ptr":
		return "object"
	}
	return "number (an integer)"
}

// pageQuery reads a list's ?limit= and its ?after= cursor, which cursor
// decodes (the zero C when absent). A bad one is answered 400, and ok is
// false.
func pageQuery[C any](q *request, cursor func(raw string, fe *record.FieldErrors) C) (limit int, after C, ok bool) {
	var fe record.FieldErrors
	query := q.r.URL.Query()
	limit = page(query, &fe)
	if s := query.Get("after"); s != "" {
		if raw, decoded := decodeCursor(s, &fe); decoded {
			after = cursor(raw, &fe)
		}
	}
	if err := notify.InvalidFields(fe); err != nil {
		q.fail(err, "")
		return 0, after, false
	}
	return limit, after, true
}

// onePage cuts items, fetched one over limit so as to learn whether more
// follow, to limit, and returns the next page's cursor (next of the last
// item kept), or "" on the last page.
func onePage[T any](items []T, limit int, next func(T) string) ([]T, string) {
	if len(items) <= limit {
		return items, ""
	}
	items = items[:limit]
	return items, next(items[len(items)-1])
}

// accountPage is a page of a list of the path's account ({id}): it reads
// the page query (pageQuery, with cursor), the account, and what fetch
// returns one over the limit, and cuts that to the page (onePage). What
// fails is answered, and ok is false.
func accountPage[C, T any](q *request, cursor func(raw string, fe *record.FieldErrors) C,
	fetch func(ctx context.Context, account string, after C, limit int) ([]T, error),
	next func(T) string) (a *notify.Account, items []T, nextCursor string, ok bool) {
	limit, after, ok := pageQuery(q, cursor)
	if !ok {
		return nil, nil, "", false
	}
	if a, ok = q.account(); !ok {
		return nil, nil, "", false
	}
	items, err := fetch(q.ctx(), a.ID, after, limit+1)
	if err != nil {
		q.fail(err, "")
		return nil, nil, "", false
	}
	items, nextCursor = onePage(items, limit, next)
	return a, items, nextCursor, true
}

// page reads ?limit=: DefaultLimit when absent, else 1 to MaxLimit.
func page(query url.Values, fe *record.FieldErrors) int {
	s := query.Get("limit")
	if s == "" {
		return DefaultLimit
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxLimit {
		fe.Addf("limit", "must be an integer from 1 to %d", MaxLimit)
		return 0
	}
	return n
}

// Cursors are opaque to clients: the base64url of what the store pages
// by. A cursor is read only by the endpoint that gave it.

func encodeCursor(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func decodeCursor(s string, fe *record.FieldErrors) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || !validKey(string(b)) {
		fe.Add("after", notACursor)
		return "", false
	}
	return string(b), true
}

// notACursor is the complaint about an ?after= no page gave.
const notACursor = "is not a cursor this endpoint gave (use the next of a page)"

// accountCursor reads ?after= of the accounts: an account's ID.
func accountCursor(raw string, _ *record.FieldErrors) string { return raw }

// ledgerCursor reads ?after= of the ledger: an entry's Seq.
func ledgerCursor(raw string, fe *record.FieldErrors) int64 {
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 0 {
		fe.Add("after", notACursor)
		return 0
	}
	return n
}

// messageCursor reads ?after= of the messages: a record's creation time
// and ID.
func messageCursor(raw string, fe *record.FieldErrors) store.MessageCursor {
	at, id, ok := strings.Cut(raw, " ")
	t, err := time.Parse(time.RFC3339Nano, at)
	if !ok || err != nil || id == "" {
		fe.Add("after", notACursor)
		return store.MessageCursor{}
	}
	return store.MessageCursor{CreatedAt: t, ID: id}
}

func nextMessageCursor(m *record.Message) string {
	return encodeCursor(m.CreatedAt.UTC().Format(time.RFC3339Nano) + " " + m.ID)
}

// Every ID in a path ({id}, {template}, {slug}) and the text of every
// cursor must be a key (validKey) before it is looked up in a store: a
// store must not be handed what it cannot store (PostgreSQL refuses NUL
// and invalid UTF-8 with "invalid byte sequence", a 500), and nothing the
// API makes or gives has a control character. The stricter rules of what
// the API creates (idRule, template.Check's slugs) are checked when it is
// created; a lookup of an ID that is a key but was never made is 404.

// maxKeyLen is the longest key, in bytes.
const maxKeyLen = 255

// keyRule is the complaint about a path ID that is not a key.
const keyRule = "must be 1 to 255 bytes of valid UTF-8 without control characters"

// pathParams are the wildcards of the routes, each answered by its name
// when it is not a key.
var pathParams = [...]string{"id", "template", "slug"}

// validKey reports whether s is 1 to maxKeyLen bytes of valid UTF-8
// without control characters (NUL among them).
func validKey(s string) bool {
	if s == "" || len(s) > maxKeyLen || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// validText reports whether s, a free text of a body (a name, a template
// body), can be stored: valid UTF-8 without NUL. JSON decoding makes any
// string valid UTF-8, but "\u0000" decodes to a NUL.
func validText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// pathKeys checks the request's path IDs: true when each is a key, else
// the answer is 400 naming each bad one, and false.
func (q *request) pathKeys() bool {
	var fe record.FieldErrors
	for _, name := range pathParams {
		if v := q.r.PathValue(name); v != "" && !validKey(v) {
			fe.Add(name, keyRule)
		}
	}
	if err := notify.InvalidFields(fe); err != nil {
		q.fail(err, "")
		return false
	}
	return true
}
