package adminapi

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/adminapi/adminstore"
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

// page reads ?limit=: DefaultLimit when absent, else 1 to MaxLimit.
func page(query url.Values, fe *notify.FieldErrors) int {
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

func decodeCursor(s string, fe *notify.FieldErrors) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		fe.Add("after", "is not a cursor this endpoint gave (use the next of a page)")
		return "", false
	}
	return string(b), true
}

// ledgerCursor reads ?after= of the ledger: an entry's Seq.
func ledgerCursor(query url.Values, fe *notify.FieldErrors) int64 {
	s := query.Get("after")
	if s == "" {
		return 0
	}
	raw, ok := decodeCursor(s, fe)
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 0 {
		fe.Add("after", "is not a cursor this endpoint gave (use the next of a page)")
		return 0
	}
	return n
}

// messageCursor reads ?after= of the messages: a record's creation time
// and ID.
func messageCursor(query url.Values, fe *notify.FieldErrors) adminstore.MessageCursor {
	s := query.Get("after")
	if s == "" {
		return adminstore.MessageCursor{}
	}
	raw, ok := decodeCursor(s, fe)
	if !ok {
		return adminstore.MessageCursor{}
	}
	at, id, ok := strings.Cut(raw, " ")
	t, err := time.Parse(time.RFC3339Nano, at)
	if !ok || err != nil || id == "" {
		fe.Add("after", "is not a cursor this endpoint gave (use the next of a page)")
		return adminstore.MessageCursor{}
	}
	return adminstore.MessageCursor{CreatedAt: t, ID: id}
}

func nextMessageCursor(m *notify.Message) string {
	return encodeCursor(m.CreatedAt.UTC().Format(time.RFC3339Nano) + " " + m.ID)
}
