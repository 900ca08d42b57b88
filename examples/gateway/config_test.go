package main

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify/provider/smtp"
)

func TestSMTPServerFromURL(t *testing.T) {
	cases := []struct {
		url  string
		want smtp.Server
	}{
		{"smtp://mail.example.com:25", smtp.Server{Host: "mail.example.com", Port: 25, Encryption: smtp.EncryptionNone,
			From: "notify@mail.example.com", FromName: "Notify", ListUnsubscribeMailto: "mailto:unsubscribe@mail.example.com"}},
		{"smtp://me%40example.com:s3cret@mail.example.com:587?starttls=1", smtp.Server{Host: "mail.example.com", Port: 587,
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
		if got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.url, got, c.want)
		}
	}
	u, _ := url.Parse("smtp://u:secretpw@mail.example.com:99999")
	if _, err := smtpServer(u); err == nil || strings.Contains(err.Error(), "secretpw") {
		t.Errorf("bad port: %v", err)
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
