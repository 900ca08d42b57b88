package main

import (
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/notifykit/notify/provider/qrchat"
	"github.com/notifykit/notify/provider/smtp"
)

// loadQROptions reads NOTIFY_QR_EDITION, NOTIFY_QR_CORE_MEDIA and
// NOTIFY_QR_CHECK_NUMBER.
func (c *config) loadQROptions(get func(string) string) error {
	switch e := strings.ToLower(get("NOTIFY_QR_EDITION")); e {
	case "", "plus":
		c.qrEdition = qrchat.EditionPlus
	case "core":
		c.qrEdition = qrchat.EditionCore
	default:
		return fmt.Errorf("NOTIFY_QR_EDITION: want plus or core, not %q", e)
	}
	switch m := strings.ToLower(get("NOTIFY_QR_CORE_MEDIA")); m {
	case "", "refuse":
		c.qrCoreMedia = qrchat.MediaRefuse
	case "link":
		c.qrCoreMedia = qrchat.MediaAsLink
	default:
		return fmt.Errorf("NOTIFY_QR_CORE_MEDIA: want refuse or link, not %q", m)
	}
	if get("NOTIFY_QR_CORE_MEDIA") != "" && c.qrEdition != qrchat.EditionCore {
		return fmt.Errorf("NOTIFY_QR_CORE_MEDIA is for NOTIFY_QR_EDITION=core")
	}
	on, err := onOff("NOTIFY_QR_CHECK_NUMBER", get("NOTIFY_QR_CHECK_NUMBER"))
	if err != nil {
		return err
	}
	c.qrCheckNumber = on
	if c.qrURL == "" && (get("NOTIFY_QR_EDITION") != "" || on) {
		return fmt.Errorf("NOTIFY_QR_EDITION and NOTIFY_QR_CHECK_NUMBER are for the QR gateway: set NOTIFY_QR_URL and NOTIFY_QR_SESSION too")
	}
	return nil
}

// loadMailOptions reads NOTIFY_SMTP_HELO, NOTIFY_DKIM_* and
// NOTIFY_UNSUBSCRIBE_SECRET. The DKIM key is read from a file, so that it
// never sits in the environment; errors never show it or the secret.
func (c *config) loadMailOptions(get func(string) string) error {
	c.smtpHelo = get("NOTIFY_SMTP_HELO")
	domain, selector, keyFile := get("NOTIFY_DKIM_DOMAIN"), get("NOTIFY_DKIM_SELECTOR"), get("NOTIFY_DKIM_KEY_FILE")
	if domain != "" || selector != "" || keyFile != "" {
		if domain == "" || selector == "" || keyFile == "" {
			return fmt.Errorf("NOTIFY_DKIM_DOMAIN, NOTIFY_DKIM_SELECTOR and NOTIFY_DKIM_KEY_FILE go together")
		}
		key, err := os.ReadFile(keyFile)
		if err != nil {
			return fmt.Errorf("NOTIFY_DKIM_KEY_FILE: %w", err)
		}
		c.dkim = smtp.DKIM{Domain: domain, Selector: selector, PrivateKey: key}
	}
	if s := get("NOTIFY_UNSUBSCRIBE_SECRET"); s != "" {
		secret, err := hex.DecodeString(s)
		if err != nil || len(secret) < smtp.MinUnsubscribeSecretLen {
			return fmt.Errorf("NOTIFY_UNSUBSCRIBE_SECRET: want hex of at least %d random bytes (openssl rand -hex 32)", smtp.MinUnsubscribeSecretLen)
		}
		c.unsubscribeSecret = secret
	}
	c.unsubscribeAccount = get("NOTIFY_UNSUBSCRIBE_ACCOUNT")
	if c.smtp == nil && (c.smtpHelo != "" || c.dkim.Domain != "" || c.unsubscribeSecret != nil) {
		return fmt.Errorf("NOTIFY_SMTP_HELO, NOTIFY_DKIM_* and NOTIFY_UNSUBSCRIBE_SECRET are for a real SMTP server: set NOTIFY_SMTP_URL too")
	}
	return nil
}

// onOff reads a switch: on, true, 1, off, false, 0 or empty (off).
func onOff(name, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "", "off", "false", "0":
		return false, nil
	case "on", "true", "1":
		return true, nil
	}
	return false, fmt.Errorf("%s: want on or off, not %q", name, v)
}
