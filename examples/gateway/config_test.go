package main

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify/provider/qrchat"

	"github.com/notifykit/notify/provider/smtp"
)

func TestSMTPServerFromURL(t *testing.T) {
	cases := []struct {
		url  string
		want smtp.Server
	}{
		{"smtp://mail.example.com:25?from=notify@shop.example", smtp.Server{Host: "mail.example.com", Port: 25, Encryption: smtp.EncryptionNone,
			From: "notify@shop.example", FromName: "Notify", ListUnsubscribeMailto: "mailto:unsubscribe@shop.example"}},
		{"smtp://me%40example.com:s3cret@mail.example.com:587?starttls=1&from=me@example.com", smtp.Server{Host: "mail.example.com", Port: 587,
			Encryption: smtp.EncryptionSTARTTLS, Username: "me@example.com", Password: "s3cret", From: "me@example.com",
			FromName: "Notify", ListUnsubscribeMailto: "mailto:unsubscribe@example.com"}},
		{"smtps://apikey:pw@smtp.relay.example?from=alerts@shop.example&from_name=Shop&unsubscribe=https://shop.example/u?e={email}",
			smtp.Server{Host: "smtp.relay.example", Encryption: smtp.EncryptionImplicitTLS, Username: "apikey", Password: "pw",
				From: "alerts@shop.example", FromName: "Shop", ListUnsubscribeURL: "https://shop.example/u?e={email}"}},
	}
	for _, c := range cases {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		got, err := smtpServer(u)
		if err != nil {
			t.Errorf("%s: %v", c.url, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.url, got, c.want)
		}
	}
	u, _ := url.Parse("smtp://u:secretpw@mail.example.com:99999?from=a@shop.example")
	if _, err := smtpServer(u); err == nil || strings.Contains(err.Error(), "secretpw") {
		t.Errorf("bad port: %v", err)
	}
	// Without from= mail would go out from an address the relay may not
	// send for (notify@<relay host>): a start-up error naming the parameter.
	for _, bad := range []string{
		"smtp://me%40example.com:secretpw@mail.example.com:587?starttls=1",
		"smtp://mail.example.com:25?from=",
		"smtp://mail.example.com:25?from=not-an-address",
		"smtp://mail.example.com:25?from=Shop%20%3Ca@shop.example%3E",
	} {
		_, err := loadConfig(func(k string) string {
			if k == "NOTIFY_SMTP_URL" {
				return bad
			}
			return ""
		})
		if err == nil || !strings.Contains(err.Error(), "NOTIFY_SMTP_URL: from=") || strings.Contains(err.Error(), "secretpw") {
			t.Errorf("%s: %v, want an error naming from=", bad, err)
		}
	}
}

func TestLoadConfigDefaults(t *testing.T) {
	c, err := loadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if c.addr != "127.0.0.1:8080" || c.balance.Minor != 10000 || c.keyChosen || !strings.HasPrefix(c.apiKey, "nk_") || len(c.apiKey) != 29 {
		t.Errorf("%+v", c)
	}
	other, _ := loadConfig(func(string) string { return "" })
	if other.apiKey == c.apiKey {
		t.Error("two random keys are equal")
	}
}

func TestOTPLimitSetting(t *testing.T) {
	for in, want := range map[string]struct {
		max    int
		window time.Duration
	}{
		"":        {5, 15 * time.Minute},
		"off":     {0, 0},
		"OFF":     {0, 0},
		"3/10m":   {3, 10 * time.Minute},
		"10 / 1h": {10, time.Hour},
	} {
		c, err := loadConfig(func(k string) string {
			if k == "NOTIFY_OTP_LIMIT" {
				return in
			}
			return ""
		})
		if err != nil {
			t.Errorf("NOTIFY_OTP_LIMIT=%q: %v", in, err)
			continue
		}
		if c.otpMax != want.max || c.otpWindow != want.window {
			t.Errorf("NOTIFY_OTP_LIMIT=%q: %d/%v, want %d/%v", in, c.otpMax, c.otpWindow, want.max, want.window)
		}
	}
	for _, bad := range []string{"5", "0/15m", "5/15", "5/0s", "x/15m", "5/48h", "-1/1m"} {
		_, err := loadConfig(func(k string) string {
			if k == "NOTIFY_OTP_LIMIT" {
				return bad
			}
			return ""
		})
		if err == nil || !strings.Contains(err.Error(), "NOTIFY_OTP_LIMIT") {
			t.Errorf("NOTIFY_OTP_LIMIT=%q: %v, want an error naming the variable", bad, err)
		}
	}
}

// TestDLTSetting: NOTIFY_DLT unset or "spec" follows the API (any
// operator-registered template ID with its entity ID), "strict" takes only
// the account's templates, and anything else is an error naming the
// variable and both values.
func TestDLTSetting(t *testing.T) {
	for in, strict := range map[string]bool{"": false, "spec": false, "SPEC": false, "strict": true, " Strict ": true} {
		c, err := loadConfig(func(k string) string {
			if k == "NOTIFY_DLT" {
				return in
			}
			return ""
		})
		if err != nil || c.dltStrict != strict {
			t.Errorf("NOTIFY_DLT=%q: %v, strict %v; want strict %v", in, err, c != nil && c.dltStrict, strict)
		}
	}
	for _, bad := range []string{"off", "lenient", "true", "registered"} {
		_, err := loadConfig(func(k string) string {
			if k == "NOTIFY_DLT" {
				return bad
			}
			return ""
		})
		if err == nil || !strings.Contains(err.Error(), "NOTIFY_DLT") || !strings.Contains(err.Error(), "spec") || !strings.Contains(err.Error(), "strict") {
			t.Errorf("NOTIFY_DLT=%q: %v, want an error naming the variable and its values", bad, err)
		}
	}
}

// TestVendorURLSettings: each vendor URL takes the forms its provider
// takes; a URL with a query (where a pasted key would be) or user info is
// refused with the variable named and the value not repeated.
func TestVendorURLSettings(t *testing.T) {
	base := map[string]string{"NOTIFY_SMS_KEY": "k", "NOTIFY_CLOUD_TOKEN": "t", "NOTIFY_CLOUD_PHONE_ID": "106540352242922", "NOTIFY_QR_SESSION": "default"}
	load := func(k, v string) error {
		_, err := loadConfig(func(name string) string {
			if name == k {
				return v
			}
			if name == "NOTIFY_QR_URL" && k != name {
				return "http://waha:3000"
			}
			if name == "NOTIFY_SMS_URL" && k != name {
				return "https://www.fast2sms.com"
			}
			return base[name]
		})
		return err
	}
	for k, vs := range map[string][]string{
		"NOTIFY_SMS_URL":   {"https://www.fast2sms.com", "https://www.fast2sms.com/dev/bulkV2", "http://127.0.0.1:9000/"},
		"NOTIFY_CLOUD_URL": {"", "https://graph.facebook.com", "https://graph.facebook.com/v25.0/106540352242922/messages"},
		"NOTIFY_QR_URL":    {"http://waha:3000", "http://waha:3000/api/sendText"},
	} {
		for _, v := range vs {
			if err := load(k, v); err != nil {
				t.Errorf("%s=%s: %v", k, v, err)
			}
		}
	}
	for k, vs := range map[string][]string{
		"NOTIFY_SMS_URL":   {"https://www.fast2sms.com/dev/bulkV2?authorization=secretkey", "www.fast2sms.com", "ftp://x.example/secretkey"},
		"NOTIFY_CLOUD_URL": {"https://user:secretkey@graph.facebook.com", "graph.facebook.com"},
		"NOTIFY_QR_URL":    {"http://waha:3000/?api_key=secretkey", "waha:3000"},
	} {
		for _, v := range vs {
			err := load(k, v)
			if err == nil || !strings.Contains(err.Error(), k) || strings.Contains(err.Error(), "secretkey") {
				t.Errorf("%s=%s: %v, want an error naming the variable without the value", k, v, err)
			}
		}
	}
}

// TestVendorOptions: the QR edition, the number check and the mail
// options reach their providers' configuration; bad values and options
// without their vendor are refused, naming the variable and never showing
// the secret.
func TestVendorOptions(t *testing.T) {
	load := func(env map[string]string) (*config, error) {
		return loadConfig(func(k string) string { return env[k] })
	}
	qr := map[string]string{"NOTIFY_QR_URL": "http://waha:3000", "NOTIFY_QR_SESSION": "default",
		"NOTIFY_QR_EDITION": "Core", "NOTIFY_QR_CORE_MEDIA": "link", "NOTIFY_QR_CHECK_NUMBER": "on"}
	c, err := load(qr)
	if err != nil {
		t.Fatal(err)
	}
	if c.qrEdition != qrchat.EditionCore || c.qrCoreMedia != qrchat.MediaAsLink || !c.qrCheckNumber {
		t.Fatalf("qr options: %v %v %v", c.qrEdition, c.qrCoreMedia, c.qrCheckNumber)
	}
	secret := strings.Repeat("ab", 32)
	mail := map[string]string{"NOTIFY_SMTP_URL": "smtp://mail.example.com:25?from=notify@example.com", "NOTIFY_SMTP_HELO": "mx.example.com",
		"NOTIFY_UNSUBSCRIBE_SECRET": secret}
	if c, err = load(mail); err != nil || c.smtpHelo != "mx.example.com" || len(c.unsubscribeSecret) != 32 {
		t.Fatalf("mail options: %v %+v", err, c)
	}
	page := map[string]string{"NOTIFY_PREFERENCES_SECRET": secret, "NOTIFY_PREFERENCES_URL": "https://notify.example/preferences",
		"NOTIFY_PREFERENCES_TITLE": "Acme"}
	if c, err = load(page); err != nil || len(c.prefSecret) != 32 || c.prefURL != page["NOTIFY_PREFERENCES_URL"] || c.prefTitle != "Acme" {
		t.Fatalf("preference page options: %v %+v", err, c)
	}
	for name, env := range map[string]map[string]string{
		"edition":             {"NOTIFY_QR_URL": "http://waha:3000", "NOTIFY_QR_SESSION": "d", "NOTIFY_QR_EDITION": "pro"},
		"core media":          {"NOTIFY_QR_URL": "http://waha:3000", "NOTIFY_QR_SESSION": "d", "NOTIFY_QR_CORE_MEDIA": "link"},
		"check number":        {"NOTIFY_QR_URL": "http://waha:3000", "NOTIFY_QR_SESSION": "d", "NOTIFY_QR_CHECK_NUMBER": "maybe"},
		"qr without url":      {"NOTIFY_QR_CHECK_NUMBER": "on"},
		"short secret":        {"NOTIFY_SMTP_URL": "smtp://mail.example.com:25?from=notify@example.com", "NOTIFY_UNSUBSCRIBE_SECRET": "abcd"},
		"secret not hex":      {"NOTIFY_SMTP_URL": "smtp://mail.example.com:25?from=notify@example.com", "NOTIFY_UNSUBSCRIBE_SECRET": strings.Repeat("zz", 32)},
		"dkim incomplete":     {"NOTIFY_SMTP_URL": "smtp://mail.example.com:25?from=notify@example.com", "NOTIFY_DKIM_DOMAIN": "example.com"},
		"dkim key missing":    {"NOTIFY_SMTP_URL": "smtp://mail.example.com:25?from=notify@example.com", "NOTIFY_DKIM_DOMAIN": "example.com", "NOTIFY_DKIM_SELECTOR": "s1", "NOTIFY_DKIM_KEY_FILE": "/nonexistent/key.pem"},
		"mail without url":    {"NOTIFY_SMTP_HELO": "mx.example.com"},
		"short page secret":   {"NOTIFY_PREFERENCES_SECRET": "abcd"},
		"page secret not hex": {"NOTIFY_PREFERENCES_SECRET": strings.Repeat("zz", 32)},
		"page URL, no secret": {"NOTIFY_PREFERENCES_URL": "https://notify.example/preferences"},
		"page URL relative":   {"NOTIFY_PREFERENCES_SECRET": secret, "NOTIFY_PREFERENCES_URL": "/preferences"},
		"page URL query":      {"NOTIFY_PREFERENCES_SECRET": secret, "NOTIFY_PREFERENCES_URL": "https://notify.example/p?x=1"},
	} {
		_, err := load(env)
		if err == nil || !strings.Contains(err.Error(), "NOTIFY_") || strings.Contains(err.Error(), "zzzz") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestOperatorOptions(t *testing.T) {
	key := strings.Repeat("a", 32)
	vendor := map[string]string{"NOTIFY_SMS_URL": "https://www.fast2sms.com/dev/bulkV2", "NOTIFY_SMS_KEY": "k"}
	with := func(base map[string]string, kv ...string) func(string) string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for name, c := range map[string]struct {
		env    func(string) string
		outbox bool
		err    string
	}{
		"dev default":            {env: with(nil), outbox: true},
		"dev off":                {env: with(nil, "NOTIFY_OUTBOX", "off")},
		"vendor default":         {env: with(vendor)},
		"vendor on with key":     {env: with(vendor, "NOTIFY_OUTBOX", "on", "NOTIFY_ADMIN_KEY", key), outbox: true},
		"vendor on without key":  {env: with(vendor, "NOTIFY_OUTBOX", "on"), err: "NOTIFY_ADMIN_KEY"},
		"bad value":              {env: with(nil, "NOTIFY_OUTBOX", "yes"), err: "NOTIFY_OUTBOX: want on or off"},
		"short admin key":        {env: with(nil, "NOTIFY_ADMIN_KEY", "short-key-1234"), err: "NOTIFY_ADMIN_KEY: must be at least 32"},
		"admin key with a space": {env: with(nil, "NOTIFY_ADMIN_KEY", key+" x"), err: "NOTIFY_ADMIN_KEY"},
		"short metrics token":    {env: with(nil, "NOTIFY_METRICS_TOKEN", "scrape"), err: "NOTIFY_METRICS_TOKEN: must be at least 16"},
		"log format":             {env: with(nil, "NOTIFY_LOG_FORMAT", "xml"), err: "NOTIFY_LOG_FORMAT: want text or json"},
		"dev attachments":        {env: with(nil, "NOTIFY_DEV_ATTACHMENTS", "loopback"), outbox: true},
		"dev attachments bad":    {env: with(nil, "NOTIFY_DEV_ATTACHMENTS", "on"), err: "NOTIFY_DEV_ATTACHMENTS: want loopback"},
		"dev attachments vendor": {env: with(vendor, "NOTIFY_DEV_ATTACHMENTS", "loopback"), err: "NOTIFY_DEV_ATTACHMENTS: development only"},
		"dev CA alone":           {env: with(nil, "NOTIFY_DEV_ATTACHMENTS_CA", "/tmp/ca.pem"), err: "NOTIFY_DEV_ATTACHMENTS_CA: set NOTIFY_DEV_ATTACHMENTS"},
		"dev CA missing":         {env: with(nil, "NOTIFY_DEV_ATTACHMENTS", "loopback", "NOTIFY_DEV_ATTACHMENTS_CA", "/nonexistent/ca.pem"), err: "NOTIFY_DEV_ATTACHMENTS_CA"},
	} {
		cfg, err := loadConfig(c.env)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), key) {
				t.Errorf("%s: %v, want an error with %q that does not repeat the key", name, err, c.err)
			}
		case err != nil:
			t.Errorf("%s: %v", name, err)
		case cfg.outbox != c.outbox:
			t.Errorf("%s: outbox %v, want %v", name, cfg.outbox, c.outbox)
		}
	}
}

// NOTIFY_SETTLE_AFTER must exceed the longest a send can take with the
// attempt timeout NOTIFY_ATTEMPT_TIMEOUT: three attempts and the backoff
// between them, computed as notify.New computes it.
func TestSendTimeSettings(t *testing.T) {
	load := func(attempt, settle string) (*config, error) {
		return loadConfig(func(k string) string {
			switch k {
			case "NOTIFY_ATTEMPT_TIMEOUT":
				return attempt
			case "NOTIFY_SETTLE_AFTER":
				return settle
			}
			return ""
		})
	}
	for _, ok := range []struct {
		attempt, settle string
		want            [2]time.Duration
	}{
		{"", "", [2]time.Duration{10 * time.Second, 2 * time.Minute}},
		{"", "35s", [2]time.Duration{10 * time.Second, 35 * time.Second}},
		{"2s", "11s", [2]time.Duration{2 * time.Second, 11 * time.Second}},
		{"1m", "5m", [2]time.Duration{time.Minute, 5 * time.Minute}},
	} {
		c, err := load(ok.attempt, ok.settle)
		if err != nil {
			t.Errorf("%q, %q: %v", ok.attempt, ok.settle, err)
			continue
		}
		if c.attemptTimeout != ok.want[0] || c.settleAfter != ok.want[1] {
			t.Errorf("%q, %q: %v, %v", ok.attempt, ok.settle, c.attemptTimeout, c.settleAfter)
		}
	}
	for _, bad := range []struct{ attempt, settle, names string }{
		{"", "10s", "NOTIFY_SETTLE_AFTER: 10s does not exceed the longest a send can take, 34s"},
		{"", "34s", "NOTIFY_SETTLE_AFTER: 34s does not exceed"},
		{"1m", "", "NOTIFY_SETTLE_AFTER: 2m0s does not exceed the longest a send can take, 3m4s"},
		{"", "25h", "NOTIFY_SETTLE_AFTER"},
		{"", "soon", "NOTIFY_SETTLE_AFTER"},
		{"500ms", "", "NOTIFY_ATTEMPT_TIMEOUT"},
		{"6m", "1h", "NOTIFY_ATTEMPT_TIMEOUT"},
	} {
		if _, err := load(bad.attempt, bad.settle); err == nil || !strings.Contains(err.Error(), bad.names) {
			t.Errorf("%q, %q: %v, want an error with %q", bad.attempt, bad.settle, err, bad.names)
		}
	}
}
