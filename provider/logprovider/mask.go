package logprovider

import (
	"log/slog"
	"strings"
)

// Withheld replaces message content in a log written in Production mode.
const Withheld = "[withheld]"

// Mode says how much of a message's content a log may show: the one
// masking rule of the package doc, which the provider follows (WithMode)
// and ReplaceAttr applies to any slog handler's records.
type Mode int

const (
	// Dev logs message content as sent, one-time codes masked: for
	// development, where the recipients are the developers.
	Dev Mode = iota
	// Production never logs message content, only its length: for a
	// process that reaches real recipients.
	Production
)

// String returns "dev" or "production".
func (m Mode) String() string {
	if m == Production {
		return "production"
	}
	return "dev"
}

// redacted returns text as a log in mode m may show message content:
// Redact(text, otp, digits) in Dev, Withheld in Production, without the
// work of redacting what is withheld.
func (m Mode) redacted(text, otp string, digits bool) string {
	if m == Production {
		return Withheld
	}
	return Redact(text, otp, digits)
}

// ReplaceAttr applies the masking rule to an attribute of any record, as
// slog.HandlerOptions.ReplaceAttr: an attribute named as a secret (otp,
// api_key, apikey, token, password, secret, authorization) is replaced by
// Mask in every mode; in Production one named as message content (text,
// subject, body, html, params, named_params, header_text, dlt_values,
// button_<n>) is replaced by Withheld, in any group. Recipients are
// masked where they are logged (MaskRecipient), since only the logger
// knows which attribute holds one. Everything else passes unchanged.
func (m Mode) ReplaceAttr(_ []string, a slog.Attr) slog.Attr {
	switch a.Key {
	case "otp", "api_key", "apikey", "token", "password", "secret", "authorization":
		if a.Value.Kind() == slog.KindString && a.Value.String() == "" {
			return a // nothing to hide, and nothing to suggest there was
		}
		return slog.String(a.Key, Mask)
	case "text", "subject", "body", "html", "params", "named_params", "header_text", "dlt_values":
		if m == Production {
			return slog.String(a.Key, Withheld)
		}
	default:
		if m == Production && strings.HasPrefix(a.Key, "button_") {
			return slog.String(a.Key, Withheld)
		}
	}
	return a
}
