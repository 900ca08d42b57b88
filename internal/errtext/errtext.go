// Package errtext holds the rule for the text of errors a sender sees
// (through the HTTP API too): it must not name a Go package, which would
// tell clients what the service runs on ("memstore: ...", "pgstore: ...").
// The conformance suites of the stores check their errors with it.
package errtext

import (
	"errors"
	"regexp"

	"github.com/notifykit/notify"
)

// packagePrefix matches a text that starts with a package-like name and a
// colon.
var packagePrefix = regexp.MustCompile(`^[a-z][a-z0-9_]*: `)

// NamesPackage reports whether the cause of err (the *notify.Error's Err,
// or err itself) starts with a package name, and returns that text.
func NamesPackage(err error) (string, bool) {
	msg := err.Error()
	var e *notify.Error
	if errors.As(err, &e) && e.Err != nil {
		msg = e.Err.Error()
	}
	return msg, packagePrefix.MatchString(msg)
}
