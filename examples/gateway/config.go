package main

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/base32"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/qrchat"
	"github.com/notifykit/notify/provider/smtp"
	"github.com/notifykit/notify/wallet"
)

// config is the gateway's configuration, read from the environment. Every
// field has a default that works on a fresh machine.
type config struct {
	addr string // NOTIFY_ADDR
	// apiKey is NOTIFY_API_KEY, or a random key when it is not set. A
	// chosen key (keyChosen) becomes the demo account's only key, in
	// PostgreSQL too, where it revokes the keys of earlier starts; a
	// random one is used only where the account has no key yet (always
	// in memory; on PostgreSQL, the first start), since the key of an
	// earlier start is kept rather than joined by another.
	apiKey    string
	keyChosen bool         // NOTIFY_API_KEY was set
	balance   notify.Money // NOTIFY_BALANCE: the opening balance of a new wallet
	smtp      *smtp.Server // NOTIFY_SMTP_URL; nil: the in-process test server
	// smsURL is NOTIFY_SMS_URL: the Fast2SMS-style vendor's bulk SMS
	// endpoint as the vendor documents it
	// (https://www.fast2sms.com/dev/bulkV2), or its base URL
	// (https://www.fast2sms.com); both send to the same endpoint (see
	// smsgateway.Config.BaseURL). Empty, and no other SMS vendor
	// (twilio, vonage, msg91): SMS are logged, not sent.
	smsURL string
	smsKey string // NOTIFY_SMS_KEY: the vendor's API key
	// cloudURL is NOTIFY_CLOUD_URL: the cloud messaging API's root
	// (https://graph.facebook.com, the default when empty), the root with
	// the version (https://graph.facebook.com/v25.0), or the messages
	// endpoint (https://graph.facebook.com/v25.0/{phone number ID}/messages)
	// whose phone number ID is NOTIFY_CLOUD_PHONE_ID (see
	// cloudchat.Config.BaseURL).
	cloudURL   string
	cloudToken string // NOTIFY_CLOUD_TOKEN
	cloudPhone string // NOTIFY_CLOUD_PHONE_ID
	// cloudVersion is NOTIFY_CLOUD_VERSION, the API version such as v25.0;
	// default the one in NOTIFY_CLOUD_URL, else cloudchat.DefaultVersion.
	cloudVersion string
	// cloudOTPTemplate is NOTIFY_CLOUD_OTP_TEMPLATE: the approved
	// authentication template one-time codes go through on the cloud
	// gateway, in cloudOTPLanguage (NOTIFY_CLOUD_OTP_LANGUAGE, default
	// en_US). Empty with the real cloud API: codes go by the QR gateway
	// or, without one, chat messages that carry a code are refused (the
	// rest go); with the logging stand-in, otp_code.
	cloudOTPTemplate string
	cloudOTPLanguage string
	// qrURL is NOTIFY_QR_URL: the QR-session gateway's root
	// (http://waha:3000), the root with /api, or a send endpoint such as
	// http://waha:3000/api/sendText (see qrchat.Config.BaseURL). Empty:
	// QR chat messages are logged, not sent.
	qrURL     string
	qrKey     string // NOTIFY_QR_KEY
	qrSession string // NOTIFY_QR_SESSION
	// qrEdition is NOTIFY_QR_EDITION (plus, the default, or core) and
	// qrCoreMedia NOTIFY_QR_CORE_MEDIA (refuse, the default, or link):
	// what a WAHA Core gateway does with media (qrchat.Config.CoreMedia).
	qrEdition   qrchat.Edition
	qrCoreMedia qrchat.CoreMediaMode
	// qrCheckNumber is NOTIFY_QR_CHECK_NUMBER=on: ask the gateway whether
	// the number is on the network before each send.
	qrCheckNumber bool
	// smtpHelo is NOTIFY_SMTP_HELO, the EHLO name (default: the host name).
	smtpHelo string
	// dkim is NOTIFY_DKIM_DOMAIN, NOTIFY_DKIM_SELECTOR and the key read
	// from the PEM file NOTIFY_DKIM_KEY_FILE: campaign and other mail is
	// signed when all three are set.
	dkim smtp.DKIM
	// unsubscribeSecret is NOTIFY_UNSUBSCRIBE_SECRET, hex of at least 32
	// bytes (openssl rand -hex 32): unsubscribe URLs then carry an HMAC
	// token ({token}) instead of the address.
	unsubscribeSecret []byte
	database          string // NOTIFY_DATABASE_URL
	rate              int    // NOTIFY_RATE_LIMIT: sends per second per account
	otpMax            int    // NOTIFY_OTP_LIMIT: codes per recipient per otpWindow; 0: off
	otpWindow         time.Duration
	// dltStrict is NOTIFY_DLT=strict: the dlt route takes only the DLT
	// templates the demo account has registered. Unset or "spec": any
	// operator-registered dlt_template_id with its dlt_entity_id, as the
	// API documents the route.
	dltStrict bool
	// cloudAppSecret is NOTIFY_CLOUD_APP_SECRET: the app secret the cloud
	// API signs its status webhooks with. Set: /webhooks/cloudchat is
	// mounted. cloudVerifyToken is NOTIFY_CLOUD_VERIFY_TOKEN, the token of
	// the webhook's subscription handshake.
	cloudAppSecret   string
	cloudVerifyToken string
	// qrWebhookSecret is NOTIFY_QR_WEBHOOK_SECRET: the HMAC key of the QR
	// gateway's webhook (hmac.key). Set: /webhooks/qrchat is mounted.
	qrWebhookSecret string
	// smsWebhookToken is NOTIFY_SMS_WEBHOOK_TOKEN: the secret last segment
	// of the SMS vendor's delivery-report callback URL. Set:
	// /webhooks/smsgateway/{token} is mounted.
	smsWebhookToken string
	// adminKey is NOTIFY_ADMIN_KEY: the key of the admin API (/admin/v1)
	// and, with real vendors, of the outbox. Empty: the admin API is not
	// mounted.
	adminKey string
	// outbox is whether GET /outbox shows the messages sent: NOTIFY_OUTBOX
	// on or off; unset, on only when no real vendor is configured (the
	// in-process SMTP server and the logging providers).
	outbox bool
	// logFormat is NOTIFY_LOG_FORMAT: text (the default) or json.
	logFormat string
	// devAttachments is NOTIFY_DEV_ATTACHMENTS=loopback: e-mail
	// attachments may be fetched from this machine (127.0.0.0/8, ::1),
	// to try them locally; devAttachmentsCA, from
	// NOTIFY_DEV_ATTACHMENTS_CA, the certificates such a local https
	// server is trusted by (nil: the system's roots). Development only.
	devAttachments   bool
	devAttachmentsCA *x509.CertPool
	// metricsToken is NOTIFY_METRICS_TOKEN: the bearer token GET /metrics
	// asks for; empty, /metrics is open.
	metricsToken string
	// settleAfter is NOTIFY_SETTLE_AFTER (default 2m): how long a send may
	// stay unfinished before the reconciler settles it as abandoned, and
	// the lease of an idempotency key's reservation.
	settleAfter time.Duration
	// attemptTimeout is NOTIFY_ATTEMPT_TIMEOUT (default 10s): how long
	// one delivery attempt may take (notify.WithTimeout).
	attemptTimeout time.Duration
	// workers is NOTIFY_WORKERS (default 4): how many queued sends this
	// instance delivers at once. 0: it queues sends but delivers none and
	// runs no periodic tasks (another instance on the database does); it
	// needs NOTIFY_DATABASE_URL.
	workers int

	// twilio is NOTIFY_TWILIO_*, vonage NOTIFY_VONAGE_* and msg91
	// NOTIFY_MSG91_*: SMS vendors beside the Indian one (NOTIFY_SMS_URL);
	// nil when not configured.
	twilio *twilioConfig
	vonage *vonageConfig
	msg91  *msg91Config
	// smsRoutes are the rules that pick each SMS's providers, in order:
	// NOTIFY_SMS_ROUTES, or the default of the vendors configured
	// (defaultSMSRoutes). Empty when no vendor is: SMS are logged.
	smsRoutes []smsRule
	// webPush is NOTIFY_WEBPUSH_* and fcm NOTIFY_FCM_*: the push vendors
	// (config_push.go); nil when not configured. Neither: pushes go to
	// logging stand-ins.
	webPush *webPushConfig
	fcm     *fcmConfig
	// prices are NOTIFY_CURRENCY, NOTIFY_PRICES, NOTIFY_SMS_PRICES and
	// NOTIFY_PRICES_STRICT (prices.go).
	prices priceConfig
	// region is NOTIFY_REGION, the demo account's country
	// (notify.Account.Region: its numbers need no country code), IN by
	// default; regionSet says the variable was set: on PostgreSQL it
	// then replaces the region the account has.
	region    string
	regionSet bool
	// countries is NOTIFY_COUNTRIES, the demo account's allow list
	// (notify.Account.Countries): nil, its region only; "*", every
	// country. countriesSet says the variable was set: on PostgreSQL it
	// then replaces the list the account has.
	countries    []string
	countriesSet bool
	// breaker is NOTIFY_BREAKER, the providers' circuit breakers; nil
	// when off.
	breaker *notify.BreakerPolicy
	// verifySecret, verifyCap and verifySafe are NOTIFY_VERIFY_SECRET,
	// NOTIFY_VERIFY_SPEND_CAP (minor units per hour; 0: none) and
	// NOTIFY_VERIFY_SAFE_LIST (verify.go).
	verifySecret []byte
	verifyCap    int64
	verifySafe   []string
	// verifyTemplate is NOTIFY_VERIFY_TEMPLATE, the template the codes'
	// SMS and e-mail take in the verification's locale ("": none).
	verifyTemplate string
	// prefSecret, prefURL and prefTitle are NOTIFY_PREFERENCES_SECRET,
	// NOTIFY_PREFERENCES_URL and NOTIFY_PREFERENCES_TITLE: the preference
	// page at /preferences and its links (preference.go); nil secret: off.
	prefSecret []byte
	prefURL    string
	prefTitle  string
	// warnings are settings that work but may not do what was meant,
	// logged at start.
	warnings []string

	// unsubscribeAccount is NOTIFY_UNSUBSCRIBE_ACCOUNT: the account whose
	// suppression list /unsubscribe/{token} writes for a token that names
	// an address only (see suppress.go).
	unsubscribeAccount string
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

		cloudVersion: get("NOTIFY_CLOUD_VERSION"),

		cloudOTPTemplate: get("NOTIFY_CLOUD_OTP_TEMPLATE"),
		cloudOTPLanguage: get("NOTIFY_CLOUD_OTP_LANGUAGE"),

		cloudAppSecret:   get("NOTIFY_CLOUD_APP_SECRET"),
		cloudVerifyToken: get("NOTIFY_CLOUD_VERIFY_TOKEN"),
		qrWebhookSecret:  get("NOTIFY_QR_WEBHOOK_SECRET"),
		smsWebhookToken:  get("NOTIFY_SMS_WEBHOOK_TOKEN"),
		qrURL:            get("NOTIFY_QR_URL"),
		qrKey:            get("NOTIFY_QR_KEY"),
		qrSession:        get("NOTIFY_QR_SESSION"),
		database:         get("NOTIFY_DATABASE_URL"),
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

	if err := c.loadPrices(get); err != nil {
		return nil, err
	}
	bal := get("NOTIFY_BALANCE")
	if bal == "" {
		bal = "100"
	}
	m, err := wallet.Parse(bal, c.prices.currency)
	if err != nil {
		return nil, fmt.Errorf("NOTIFY_BALANCE: want an amount of %s such as 100.00: %s", c.prices.currency.Code, walletText(err))
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
		srv, err := smtpServer(u)
		if err != nil {
			return nil, err
		}
		c.smtp = &srv
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

	if c.dltStrict, err = parseDLT(get("NOTIFY_DLT")); err != nil {
		return nil, err
	}

	if c.attemptTimeout, c.settleAfter, err = parseSendTimes(get("NOTIFY_ATTEMPT_TIMEOUT"), get("NOTIFY_SETTLE_AFTER")); err != nil {
		return nil, err
	}

	if c.workers, err = parseWorkers(get("NOTIFY_WORKERS"), c.database != ""); err != nil {
		return nil, err
	}

	if err := pair("NOTIFY_SMS_URL", c.smsURL, "NOTIFY_SMS_KEY", c.smsKey); err != nil {
		return nil, err
	}
	if err := c.loadSMSOptions(get); err != nil {
		return nil, err
	}
	if err := c.loadPushOptions(get); err != nil {
		return nil, err
	}
	if err := c.loadOperatorOptions(get); err != nil {
		return nil, err
	}
	if err := c.loadPreferenceOptions(get); err != nil {
		return nil, err
	}
	if err := c.loadVerifyOptions(get); err != nil {
		return nil, err
	}
	for _, u := range []struct{ name, value, want string }{
		{"NOTIFY_SMS_URL", c.smsURL, "the bulk SMS endpoint, such as https://www.fast2sms.com/dev/bulkV2, or the vendor's base URL, such as https://www.fast2sms.com"},
		{"NOTIFY_CLOUD_URL", c.cloudURL, "the API's root, such as https://graph.facebook.com, optionally with the version (/v25.0) or as the whole messages endpoint"},
		{"NOTIFY_QR_URL", c.qrURL, "the gateway's root, such as http://waha:3000, optionally with /api or a send endpoint such as /api/sendText"},
	} {
		if err := checkVendorURL(u.name, u.value, u.want); err != nil {
			return nil, err
		}
	}
	if c.cloudURL != "" || c.cloudToken != "" || c.cloudPhone != "" || c.cloudVersion != "" {
		if c.cloudToken == "" || c.cloudPhone == "" {
			return nil, fmt.Errorf("NOTIFY_CLOUD_TOKEN and NOTIFY_CLOUD_PHONE_ID are both needed for the cloud chat gateway")
		}
	}
	if c.cloudOTPLanguage != "" && c.cloudOTPTemplate == "" {
		return nil, fmt.Errorf("NOTIFY_CLOUD_OTP_LANGUAGE is the language of NOTIFY_CLOUD_OTP_TEMPLATE: set that too")
	}
	if (c.cloudAppSecret != "" || c.cloudVerifyToken != "") && c.cloudToken == "" {
		return nil, fmt.Errorf("NOTIFY_CLOUD_APP_SECRET and NOTIFY_CLOUD_VERIFY_TOKEN take the cloud gateway's reports: set NOTIFY_CLOUD_TOKEN and NOTIFY_CLOUD_PHONE_ID too")
	}
	if c.cloudVerifyToken != "" && c.cloudAppSecret == "" {
		return nil, fmt.Errorf("NOTIFY_CLOUD_VERIFY_TOKEN: set NOTIFY_CLOUD_APP_SECRET too; without it no status webhook is taken")
	}
	if c.smsWebhookToken != "" && c.smsURL == "" {
		return nil, fmt.Errorf("NOTIFY_SMS_WEBHOOK_TOKEN takes the SMS vendor's delivery reports: set NOTIFY_SMS_URL and NOTIFY_SMS_KEY too")
	}
	if c.qrWebhookSecret != "" && c.qrURL == "" {
		return nil, fmt.Errorf("NOTIFY_QR_WEBHOOK_SECRET takes the QR gateway's reports: set NOTIFY_QR_URL and NOTIFY_QR_SESSION too")
	}
	if err := c.loadQROptions(get); err != nil {
		return nil, err
	}
	if err := c.loadMailOptions(get); err != nil {
		return nil, err
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

// defaultAttemptTimeout is NOTIFY_ATTEMPT_TIMEOUT's default, the
// Notifier's own.
const defaultAttemptTimeout = 10 * time.Second

// defaultSettleAfter is NOTIFY_SETTLE_AFTER's default, the library's
// (notify.WithSettleAfter).
const defaultSettleAfter = 2 * time.Minute

// parseSendTimes reads NOTIFY_ATTEMPT_TIMEOUT, a Go duration from 1s to
// 5m (default 10s), and NOTIFY_SETTLE_AFTER, one up to 24h (default
// notify.WithSettleAfter's default, 2m). The threshold must exceed the longest a
// send can take under the gateway's retry policy (the default one) with
// that attempt timeout, or live sends would be settled as abandoned: the
// rule is notify.RetryPolicy.Longest's, the one notify.New enforces.
func parseSendTimes(attempt, settle string) (attemptTimeout, settleAfter time.Duration, err error) {
	attemptTimeout, settleAfter = defaultAttemptTimeout, defaultSettleAfter
	if attempt != "" {
		d, err := time.ParseDuration(attempt)
		if err != nil || d < time.Second || d > 5*time.Minute {
			return 0, 0, fmt.Errorf("NOTIFY_ATTEMPT_TIMEOUT: want a Go duration from 1s to 5m, such as 10s")
		}
		attemptTimeout = d
	}
	longest := notify.RetryPolicy{}.Longest(attemptTimeout)
	if settle != "" {
		d, err := time.ParseDuration(settle)
		if err != nil || d <= 0 || d > 24*time.Hour {
			return 0, 0, fmt.Errorf("NOTIFY_SETTLE_AFTER: want a Go duration up to 24h, such as 2m")
		}
		settleAfter = d
	}
	if settleAfter <= longest {
		return 0, 0, fmt.Errorf("NOTIFY_SETTLE_AFTER: %v does not exceed the longest a send can take, %v "+
			"(3 attempts of NOTIFY_ATTEMPT_TIMEOUT, %v, and the backoff between them): raise it, or lower NOTIFY_ATTEMPT_TIMEOUT",
			settleAfter, longest, attemptTimeout)
	}
	return attemptTimeout, settleAfter, nil
}

// defaultWorkers is NOTIFY_WORKERS's default.
const defaultWorkers = 4

// parseWorkers reads NOTIFY_WORKERS: how many queued sends this instance
// delivers at once, 0 to 1000 (default 4). 0 is an instance that only
// queues, which needs a database (shared, onDatabase) whose other
// instances run the workers: in memory nothing else ever would.
func parseWorkers(s string, onDatabase bool) (int, error) {
	if s == "" {
		return defaultWorkers, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 1000 {
		return 0, fmt.Errorf("NOTIFY_WORKERS: want how many queued sends this instance delivers at once, 0 to 1000 (0: none, another instance does)")
	}
	if n == 0 && !onDatabase {
		return 0, fmt.Errorf("NOTIFY_WORKERS: 0 leaves queued sends to other instances, which need NOTIFY_DATABASE_URL: in memory no other instance sees them")
	}
	return n, nil
}

// parseDLT reads NOTIFY_DLT: "spec" or empty (the default) lets the dlt
// route take any operator-registered template and entity ID, as the API
// documents it; "strict" refuses template IDs the account has not
// registered (and checks the text against the registered ones).
func parseDLT(s string) (strict bool, err error) {
	switch strings.ToLower(s) {
	case "", "spec":
		return false, nil
	case "strict":
		return true, nil
	}
	return false, fmt.Errorf("NOTIFY_DLT: want spec (the default: the dlt route takes any operator-registered dlt_template_id with its dlt_entity_id) or strict (only the demo account's registered DLT templates), not %q", s)
}

// checkVendorURL checks a vendor URL setting: empty (the setting's
// default) or an absolute http or https URL without user info, query or
// fragment, since keys go in their own variables. want says what the
// variable takes. The error never repeats the value, which may carry a
// pasted key.
func checkVendorURL(name, raw, want string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%s: want an http(s) URL without user name, password or query (keys go in their own variables): %s", name, want)
	}
	return nil
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

// loadOperatorOptions reads NOTIFY_ADMIN_KEY, NOTIFY_OUTBOX,
// NOTIFY_LOG_FORMAT and NOTIFY_METRICS_TOKEN.
func (c *config) loadOperatorOptions(get func(string) string) error {
	switch c.logFormat = get("NOTIFY_LOG_FORMAT"); c.logFormat {
	case "":
		c.logFormat = "text"
	case "text", "json":
	default:
		return fmt.Errorf("NOTIFY_LOG_FORMAT: want text or json")
	}
	c.metricsToken = get("NOTIFY_METRICS_TOKEN")
	if c.metricsToken != "" && (len(c.metricsToken) < 16 || strings.ContainsAny(c.metricsToken, " \t\r\n")) {
		return fmt.Errorf("NOTIFY_METRICS_TOKEN: must be at least 16 characters without spaces")
	}
	c.adminKey = get("NOTIFY_ADMIN_KEY")
	if c.adminKey != "" && (len(c.adminKey) < 32 || strings.ContainsAny(c.adminKey, " \t\r\n")) {
		return fmt.Errorf("NOTIFY_ADMIN_KEY: must be at least 32 characters without spaces (openssl rand -hex 32)")
	}
	switch v := get("NOTIFY_OUTBOX"); v {
	case "":
		c.outbox = !c.realVendors()
	case "on":
		c.outbox = true
	case "off":
	default:
		return fmt.Errorf("NOTIFY_OUTBOX: want on or off")
	}
	if c.outbox && c.realVendors() && c.adminKey == "" {
		return fmt.Errorf("NOTIFY_OUTBOX=on with real vendors shows real people's messages: set NOTIFY_ADMIN_KEY, which the outbox then requires")
	}
	return c.loadDevAttachments(get)
}

// loadDevAttachments reads NOTIFY_DEV_ATTACHMENTS and
// NOTIFY_DEV_ATTACHMENTS_CA. Both are for development: with a real vendor
// a fetch from this machine would let an API client read its local
// services into a mail (server-side request forgery), so they are a
// start-up error then.
func (c *config) loadDevAttachments(get func(string) string) error {
	mode, caFile := get("NOTIFY_DEV_ATTACHMENTS"), get("NOTIFY_DEV_ATTACHMENTS_CA")
	switch mode {
	case "":
		if caFile != "" {
			return fmt.Errorf("NOTIFY_DEV_ATTACHMENTS_CA: set NOTIFY_DEV_ATTACHMENTS=loopback too")
		}
		return nil
	case "loopback":
	default:
		return fmt.Errorf("NOTIFY_DEV_ATTACHMENTS: want loopback, or leave it unset")
	}
	if c.realVendors() {
		return fmt.Errorf("NOTIFY_DEV_ATTACHMENTS: development only; with a real vendor configured, attachments come from public https URLs alone")
	}
	c.devAttachments = true
	if caFile == "" {
		return nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return fmt.Errorf("NOTIFY_DEV_ATTACHMENTS_CA: %w", err)
	}
	c.devAttachmentsCA = x509.NewCertPool()
	if !c.devAttachmentsCA.AppendCertsFromPEM(pem) {
		return fmt.Errorf("NOTIFY_DEV_ATTACHMENTS_CA: %s holds no PEM certificate", caFile)
	}
	return nil
}

// realVendors reports whether any message would reach a real vendor.
func (c *config) realVendors() bool {
	return c.smsURL != "" || c.twilio != nil || c.vonage != nil || c.msg91 != nil || c.cloudToken != "" || c.qrURL != "" || c.smtp != nil ||
		c.webPush != nil || c.fcm != nil
}
