package record

import (
	"fmt"
	"strings"
)

// FieldError names one bad field of a request or a call and the rule it
// breaks. Field uses the names the caller knows: the HTTP API's JSON
// names for a request ("to", "dlt_template_id", "variables.OTP"), the
// argument's for a store call ("amount", "api_key").
type FieldError struct {
	Field   string
	Message string
}

// FieldErrors collects the bad fields of one request or call, so that one
// error names every one of them. The zero value is ready to use. It is
// the one list of field rules of the library: a Notifier's error carries
// it (notify.Error.Fields; notify.InvalidFields makes that error of it)
// and so does a store's (store.InvalidFields). Not safe for concurrent
// use.
type FieldErrors []FieldError

// Add records that field breaks the rule message states.
func (fe *FieldErrors) Add(field, message string) {
	*fe = append(*fe, FieldError{Field: field, Message: message})
}

// Addf records a rule message formatted as by fmt.Sprintf.
func (fe *FieldErrors) Addf(field, format string, args ...any) {
	fe.Add(field, fmt.Sprintf(format, args...))
}

// Has reports whether a failure of field is already recorded. A check
// that only makes sense on a well-formed value runs when it is not, so a
// field is not told twice what is wrong with it.
func (fe FieldErrors) Has(field string) bool {
	for _, f := range fe {
		if f.Field == field {
			return true
		}
	}
	return false
}

// Error lists the fields and their rules: "to: is required; message: must
// not be empty". It is the text the errors that carry fe end with.
func (fe FieldErrors) Error() string {
	var b strings.Builder
	for i, f := range fe {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.Field)
		b.WriteString(": ")
		b.WriteString(f.Message)
	}
	return b.String()
}
