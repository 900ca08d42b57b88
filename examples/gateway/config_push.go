package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/notifykit/notify/provider/fcm"
	"github.com/notifykit/notify/provider/webpush"
)

// webPushConfig is the Web Push provider's configuration,
// NOTIFY_WEBPUSH_*.
type webPushConfig struct {
	// publicKey and privateKey are NOTIFY_WEBPUSH_VAPID_PUBLIC_KEY and
	// NOTIFY_WEBPUSH_VAPID_PRIVATE_KEY: the application server's VAPID
	// key pair (RFC 8292), base64url, as web-push generate-vapid-keys
	// makes it. Browsers subscribe with the public key, which
	// GET /api/v1/push/vapid-public-key serves; the private key signs
	// every push and is never printed.
	publicKey  string
	privateKey string
	// subscriber is NOTIFY_WEBPUSH_SUBSCRIBER: the operator's contact
	// push services are given (the VAPID token's sub), a mailto: or an
	// https: URL.
	subscriber string
}

// fcmConfig is Firebase Cloud Messaging's configuration, NOTIFY_FCM_*.
type fcmConfig struct {
	projectID string // NOTIFY_FCM_PROJECT_ID
	// credentialsFile is NOTIFY_FCM_CREDENTIALS_FILE, the path of the
	// service account's JSON key; credentials is its content, read at
	// start, so that the key never sits in the environment. Never
	// printed.
	credentialsFile string
	credentials     []byte
	baseURL         string // NOTIFY_FCM_URL; empty: fcm.DefaultBaseURL
}

// The names of the push providers, as the records, the receipts and the
// metrics name them: each vendor's default name, and the logging
// stand-ins' (development providers, newOutbox) when no push vendor is
// configured.
const (
	providerWebPush    = webpush.DefaultName // NOTIFY_WEBPUSH_*
	providerFCM        = fcm.DefaultName     // NOTIFY_FCM_*
	webPushLogProvider = "webpush-log"
	fcmLogProvider     = "fcm-log"
)

// maxCredentialsBytes bounds the service account's key file: Google's
// are about 2.3 KB.
const maxCredentialsBytes = 64 << 10

// loadPushOptions reads the push vendors: Web Push (NOTIFY_WEBPUSH_*) and
// FCM (NOTIFY_FCM_*). Each is checked as its provider checks it, so that
// a mistake is a start-up error naming the variable; errors never show
// the VAPID private key or the service account's key.
func (c *config) loadPushOptions(get func(string) string) error {
	var err error
	if c.webPush, err = loadWebPush(get); err != nil {
		return err
	}
	if c.fcm, err = loadFCM(get); err != nil {
		return err
	}
	return nil
}

// loadWebPush reads NOTIFY_WEBPUSH_*; nil when none is set.
func loadWebPush(get func(string) string) (*webPushConfig, error) {
	w := &webPushConfig{
		publicKey:  get("NOTIFY_WEBPUSH_VAPID_PUBLIC_KEY"),
		privateKey: get("NOTIFY_WEBPUSH_VAPID_PRIVATE_KEY"),
		subscriber: get("NOTIFY_WEBPUSH_SUBSCRIBER"),
	}
	if *w == (webPushConfig{}) {
		return nil, nil
	}
	if err := pair("NOTIFY_WEBPUSH_VAPID_PUBLIC_KEY", w.publicKey, "NOTIFY_WEBPUSH_VAPID_PRIVATE_KEY", w.privateKey); err != nil {
		return nil, err
	}
	switch {
	case w.publicKey == "":
		return nil, fmt.Errorf("NOTIFY_WEBPUSH_SUBSCRIBER is Web Push's contact: set NOTIFY_WEBPUSH_VAPID_PUBLIC_KEY and NOTIFY_WEBPUSH_VAPID_PRIVATE_KEY too")
	case w.subscriber == "":
		return nil, fmt.Errorf("NOTIFY_WEBPUSH_SUBSCRIBER is required for Web Push: a mailto: URL (mailto:ops@example.com) or an https: URL, where push services reach you about your pushes")
	}
	// The provider checks the keys (one P-256 pair) and the subscriber;
	// it makes no request, and its errors never hold the private key.
	p, err := webpush.New(webpush.Config{VAPIDPublicKey: w.publicKey, VAPIDPrivateKey: w.privateKey, Subscriber: w.subscriber})
	if err != nil {
		return nil, webPushError(err)
	}
	_ = p.Close()
	return w, nil
}

// webPushError is the Web Push provider's configuration error as the
// gateway's user reads it: its fields named by their variables.
func webPushError(err error) error {
	text := strings.NewReplacer(
		"webpush: ", "",
		" (webpush.GenerateVAPIDKeys makes a pair)", " (web-push generate-vapid-keys makes a pair)",
		"Config.VAPIDPublicKey", "NOTIFY_WEBPUSH_VAPID_PUBLIC_KEY",
		"Config.VAPIDPrivateKey", "NOTIFY_WEBPUSH_VAPID_PRIVATE_KEY",
		"Config.Subscriber", "NOTIFY_WEBPUSH_SUBSCRIBER",
	).Replace(err.Error())
	if !strings.HasPrefix(text, "NOTIFY_") {
		text = "NOTIFY_WEBPUSH_*: " + text
	}
	return &userError{text: text, err: err}
}

// loadFCM reads NOTIFY_FCM_* and the key file; nil when none is set.
func loadFCM(get func(string) string) (*fcmConfig, error) {
	f := &fcmConfig{
		projectID:       get("NOTIFY_FCM_PROJECT_ID"),
		credentialsFile: get("NOTIFY_FCM_CREDENTIALS_FILE"),
		baseURL:         get("NOTIFY_FCM_URL"),
	}
	if f.projectID == "" && f.credentialsFile == "" && f.baseURL == "" {
		return nil, nil
	}
	if err := pair("NOTIFY_FCM_PROJECT_ID", f.projectID, "NOTIFY_FCM_CREDENTIALS_FILE", f.credentialsFile); err != nil {
		return nil, err
	}
	if f.projectID == "" {
		return nil, fmt.Errorf("NOTIFY_FCM_URL is FCM's base URL: set NOTIFY_FCM_PROJECT_ID and NOTIFY_FCM_CREDENTIALS_FILE too")
	}
	if err := checkVendorURL("NOTIFY_FCM_URL", f.baseURL, "FCM's base URL, "+fcm.DefaultBaseURL+" (the default)"); err != nil {
		return nil, err
	}
	key, err := readCredentials(f.credentialsFile)
	if err != nil {
		return nil, err
	}
	// The provider checks the project ID and the key (a service account's,
	// with an RSA private key); it makes no request, and its errors name
	// the key's fields, never their values.
	p, err := fcm.New(fcm.Config{ProjectID: f.projectID, CredentialsJSON: key, BaseURL: f.baseURL})
	if err != nil {
		return nil, fcmError(err)
	}
	_ = p.Close()
	f.credentials = key
	return f, nil
}

// readCredentials reads the service account's key file. Its errors name
// the file, never what it holds.
func readCredentials(name string) ([]byte, error) {
	fi, err := os.Stat(name)
	switch {
	case err != nil:
		return nil, fmt.Errorf("NOTIFY_FCM_CREDENTIALS_FILE: %w", err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("NOTIFY_FCM_CREDENTIALS_FILE: %s is not a file: want the service account's JSON key", name)
	case fi.Size() > maxCredentialsBytes:
		return nil, fmt.Errorf("NOTIFY_FCM_CREDENTIALS_FILE: %s is over %d bytes: want the service account's JSON key", name, maxCredentialsBytes)
	}
	key, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("NOTIFY_FCM_CREDENTIALS_FILE: %w", err)
	}
	if len(strings.TrimSpace(string(key))) == 0 {
		return nil, fmt.Errorf("NOTIFY_FCM_CREDENTIALS_FILE: %s is empty: want the service account's JSON key", name)
	}
	return key, nil
}

// fcmError is the FCM provider's configuration error as the gateway's
// user reads it: its fields named by their variables.
func fcmError(err error) error {
	text := strings.NewReplacer(
		"fcm: ", "",
		"Config.ProjectID", "NOTIFY_FCM_PROJECT_ID",
		"Config.CredentialsJSON", "NOTIFY_FCM_CREDENTIALS_FILE",
		"Config.BaseURL", "NOTIFY_FCM_URL",
	).Replace(err.Error())
	if !strings.HasPrefix(text, "NOTIFY_") {
		text = "NOTIFY_FCM_*: " + text
	}
	return &userError{text: text, err: err}
}
