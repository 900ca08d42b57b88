package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/verify"
	"github.com/notifykit/notify/wallet"
)

// sweepEvery is how often the gateway marks expired verifications: a
// periodic task of the queue (queue.go).
const sweepEvery = time.Minute

// loadVerifyOptions reads the verification settings:
//
//   - NOTIFY_VERIFY_SECRET, at least 32 characters (64 hex digits from
//     `openssl rand -hex 32`, say), from which every code is derived. On
//     PostgreSQL it is required for /verifications, and every instance
//     needs the same one; in memory a random one is made at start, which
//     is enough since the verifications die with the process too.
//   - NOTIFY_VERIFY_SPEND_CAP, rupees per hour that the demo account's
//     verification sends may cost, in NOTIFY_CURRENCY (default 50,000
//     minor units: ₹500.00, $500.00, ¥50,000; "off" for none).
//   - NOTIFY_VERIFY_TEMPLATE, a template slug (standard-otp) the codes'
//     SMS and e-mail are rendered from, in the verification's locale
//     (its Hindi variant for "locale":"hi"); unset, the English texts.
//   - NOTIFY_VERIFY_SAFE_LIST, comma-separated numbers or ranges
//     (+9198765) the fraud guard lets through, such as testers' phones.
func (c *config) loadVerifyOptions(get func(string) string) error {
	c.verifyTemplate = get("NOTIFY_VERIFY_TEMPLATE")
	if s := get("NOTIFY_VERIFY_SECRET"); s != "" {
		if len(s) < 32 {
			return fmt.Errorf("NOTIFY_VERIFY_SECRET: must be at least 32 characters, such as the output of `openssl rand -hex 32`")
		}
		c.verifySecret = []byte(s)
	}
	switch s := get("NOTIFY_VERIFY_SPEND_CAP"); s {
	case "off":
	case "":
		c.verifyCap = 50_000
	default:
		m, err := wallet.Parse(s, c.prices.currency)
		if err != nil || m.Minor <= 0 {
			return fmt.Errorf("NOTIFY_VERIFY_SPEND_CAP: want an amount of %s per hour such as 500.00, or off", c.prices.currency.Code)
		}
		c.verifyCap = m.Minor
	}
	for _, e := range strings.Split(get("NOTIFY_VERIFY_SAFE_LIST"), ",") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		if !strings.HasPrefix(e, "+") || !phone.IsE164(e) && !digitsOnly(e[1:]) {
			return fmt.Errorf("NOTIFY_VERIFY_SAFE_LIST: want numbers or ranges in international form such as +919876543210 or +9198765, separated by commas")
		}
		c.verifySafe = append(c.verifySafe, e)
	}
	return nil
}

// digitsOnly reports whether s is one or more ASCII digits.
func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// verifications returns the verification service of the API's
// /verifications routes, with the fraud guard; the sweep that marks
// expired ones is a periodic task of the queue (sweepTask). It returns nil
// and a warning logged when the gateway keeps its records in PostgreSQL
// but NOTIFY_VERIFY_SECRET is not set: a secret made at start would void
// every verification at the next one, and differ between instances.
func verifications(cfg *config, st *stores, n *notify.Notifier, logger *slog.Logger) (*verify.Service, error) {
	secret := cfg.verifySecret
	if secret == nil {
		if cfg.database != "" {
			logger.Warn("verifications are off: set NOTIFY_VERIFY_SECRET (the same on every instance) to turn on /api/v1/verifications")
			return nil, nil
		}
		var b [32]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
		secret = []byte(hex.EncodeToString(b[:]))
	}
	guard, err := verify.NewGuard(verify.GuardConfig{Counters: st.counters, SpendCap: cfg.verifyCap, SafeList: cfg.verifySafe})
	if err != nil {
		return nil, err
	}
	svc, err := verify.New(verify.Config{Notifier: n, Accounts: st.accounts, Store: st.verifications, Secret: secret,
		Guard: guard, Template: cfg.verifyTemplate})
	if err != nil {
		return nil, err
	}
	return svc, nil
}
