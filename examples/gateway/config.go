package main

import (
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/wallet"
)

// config is the gateway's configuration, read from the environment. Every
// field has a default that works on a fresh machine.
type config struct {
	addr       string       // NOTIFY_ADDR
	apiKey     string       // NOTIFY_API_KEY
	keyChosen  bool         // NOTIFY_API_KEY was set
	balance    notify.Money // NOTIFY_BALANCE
	smtpURL    *url.URL     // NOTIFY_SMTP_URL; nil: the in-process test server
	smsURL     string       // NOTIFY_SMS_URL
	smsKey     string       // NOTIFY_SMS_KEY
	cloudURL   string       // NOTIFY_CLOUD_URL
	cloudToken string       // NOTIFY_CLOUD_TOKEN
	cloudPhone string       // NOTIFY_CLOUD_PHONE_ID
	qrURL      string       // NOTIFY_QR_URL
	qrKey      string       // NOTIFY_QR_KEY
	qrSession  string       // NOTIFY_QR_SESSION
	database   string       // NOTIFY_DATABASE_URL
	rate       int          // NOTIFY_RATE_LIMIT: sends per second per account
	otpMax     int          // NOTIFY_OTP_LIMIT: codes per recipient per otpWindow; 0: off
	otpWindow  time.Duration
}

// loadConfig reads the configuration. Errors name the variable and never
// repeat a secret's value.
func loadConfig(env func(string) string) (*config, error) {
	get := func(k string) string { return strings.TrimSpace(env(k)) }
	c := &config{
		addr:       get("NOTIFY_ADDR"),
		apiKey:     get("NOTIFY_API_KEY"),
		smsURL:     get("NOTIFY_SMS_URL"),
		smsKey:     get("NOTIFY_SMS_KEY"),
		cloudURL:   get("NOTIFY_CLOUD_URL"),
		cloudToken: get("NOTIFY_CLOUD_TOKEN"),
		cloudPhone: get("NOTIFY_CLOUD_PHONE_ID"),
		qrURL:      get("NOTIFY_QR_URL"),
		qrKey:      get("NOTIFY_QR_KEY"),
		qrSession:  get("NOTIFY_QR_SESSION"),
		database:   get("NOTIFY_DATABASE_URL"),
	}
	if c.addr == "" {
		c.addr = "127.0.0.1:8080"
	}
	if _, _, err := net.SplitHostPort(c.addr); err != nil {
		return nil, fmt.Errorf("NOTIFY_ADDR: want host:port, such as 127.0.0.1:8080: %v", err)
	}

	if c.apiKey == "" {
		k, err := newKey()
		if err != nil {
			return nil, err
		}
		c.apiKey = k
	} else {
		c.keyChosen = true
		if len(c.apiKey) < 16 || strings.ContainsAny(c.apiKey, " \t\r\n") {
			return nil, fmt.Errorf("NOTIFY_API_KEY: must be at least 16 characters without spaces")
		}
	}

	bal := get("NOTIFY_BALANCE")
	if bal == "" {
		bal = "100.00"
	}
	m, err := wallet.Parse(bal, notify.INR())
	if err != nil {
		return nil, fmt.Errorf("NOTIFY_BALANCE: want rupees such as 100.00: %v", err)
	}
	if m.Minor < 0 {
		return nil, fmt.Errorf("NOTIFY_BALANCE: must not be negative")
	}
	c.balance = m

	if s := get("NOTIFY_SMTP_URL"); s != "" {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" {
			// url.Parse's error repeats the URL, password included.
			return nil, fmt.Errorf("NOTIFY_SMTP_URL: want smtp://user:pass@host:port or smtps://user:pass@host:port")
		}
		c.smtpURL = u
	}

	c.rate = 50
	if s := get("NOTIFY_RATE_LIMIT"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1_000_000 {
			return nil, fmt.Errorf("NOTIFY_RATE_LIMIT: want sends per second per account, 1 to 1000000")
		}
		c.rate = n
	}
	if c.otpMax, c.otpWindow, err = parseOTPLimit(get("NOTIFY_OTP_LIMIT")); err != nil {
		return nil, err
	}

	if err := pair("NOTIFY_SMS_URL", c.smsURL, "NOTIFY_SMS_KEY", c.smsKey); err != nil {
		return nil, err
	}
	if c.cloudURL != "" || c.cloudToken != "" || c.cloudPhone != "" {
		if c.cloudToken == "" || c.cloudPhone == "" {
			return nil, fmt.Errorf("NOTIFY_CLOUD_TOKEN and NOTIFY_CLOUD_PHONE_ID are both needed for the cloud chat gateway")
		}
	}
	if c.qrURL != "" || c.qrKey != "" || c.qrSession != "" {
		if c.qrURL == "" || c.qrSession == "" {
			return nil, fmt.Errorf("NOTIFY_QR_URL and NOTIFY_QR_SESSION are both needed for the QR chat gateway")
		}
	}
	return c, nil
}

// parseOTPLimit reads NOTIFY_OTP_LIMIT: "COUNT/WINDOW" with a Go
// duration (5/15m: at most 5 codes to one recipient in any 15 minutes),
// "off" (no throttle), or empty (the default, 5/15m).
func parseOTPLimit(s string) (int, time.Duration, error) {
	if s == "" {
		return 5, 15 * time.Minute, nil
	}
	if strings.EqualFold(s, "off") {
		return 0, 0, nil
	}
	count, window, ok := strings.Cut(s, "/")
	n, err := strconv.Atoi(strings.TrimSpace(count))
	if !ok || err != nil || n < 1 || n > 1_000_000 {
		return 0, 0, fmt.Errorf("NOTIFY_OTP_LIMIT: want COUNT/WINDOW such as 5/15m (COUNT 1 to 1000000), or off")
	}
	d, err := time.ParseDuration(strings.TrimSpace(window))
	if err != nil || d < time.Second || d > 24*time.Hour {
		return 0, 0, fmt.Errorf("NOTIFY_OTP_LIMIT: the window after / must be a Go duration from 1s to 24h, such as 15m")
	}
	return n, d, nil
}

// pair checks that a URL and its key come together.
func pair(urlName, u, keyName, key string) error {
	if (u == "") != (key == "") {
		return fmt.Errorf("%s and %s go together: set both or neither", urlName, keyName)
	}
	return nil
}

// newKey returns a random API key: "nk_" and 26 base32 characters (130
// bits).
func newKey() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generating an API key: %v", err)
	}
	return "nk_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])), nil
}
