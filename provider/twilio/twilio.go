package twilio

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/rules"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/record"
)

// Defaults and limits of Config and Send.
const (
	// DefaultBaseURL is Twilio's REST API.
	DefaultBaseURL = "https://api.twilio.com"
	// DefaultName is the provider's name when Config.Name is empty.
	DefaultName = "twilio"
	// DefaultTimeout bounds one request of the default HTTP client; the
	// caller's context bounds it too.
	DefaultTimeout = 15 * time.Second
	// MaxBodyLen is the longest message body Twilio takes, in characters
	// (its error 21617 past it).
	MaxBodyLen = 1600
	// RefParam is the query parameter that Send adds to
	// Config.StatusCallback for each message: notify.MessageRef of the
	// envelope's account and message ID, which Webhook reads back, so that
	// a callback finds a message whose send's answer was lost.
	RefParam = "notify_ref"
)

// APIVersion is the version of Twilio's REST API the provider speaks, the
// first segment of its paths.
const APIVersion = "2010-04-01"

// maxAnswer bounds the answers read; Twilio's are about 1 KB.
const maxAnswer = 64 << 10

// Config configures a Provider.
type Config struct {
	// AccountSID is the Twilio account's SID: "AC" and 32 hex digits.
	// Messages are created under it. Required.
	AccountSID string
	// AuthToken is the account's auth token, the password of HTTP basic
	// authentication with AccountSID as the user. Set it, or APIKeySID
	// and APIKeySecret, not both. It never appears in errors.
	AuthToken string
	// APIKeySID ("SK" and 32 hex digits) and APIKeySecret are an API key
	// of the account, used as the user and password of basic
	// authentication instead of AccountSID and AuthToken. The secret never
	// appears in errors. Default: none; AuthToken is used.
	APIKeySID    string
	APIKeySecret string
	// From is the sender: an SMS-capable Twilio number in E.164
	// (+14155550100), a short code (3 to 8 digits) or an alphanumeric
	// sender ID (1 to 11 of A-Z, a-z, 0-9, space, '+', '-', '_' and '&',
	// with at least one letter). From or MessagingServiceSID is required;
	// with both, Twilio sends from From with the service's settings.
	From string
	// MessagingServiceSID is a Messaging Service ("MG" and 32 hex digits)
	// whose sender pool Twilio picks the sender from. Default: none.
	MessagingServiceSID string
	// StatusCallback is the absolute http(s) URL where Twilio posts each
	// message's status changes (Webhook takes them). Send adds RefParam
	// to its query. Default: none, no callbacks (a Messaging Service's own
	// status callback URL still applies): without one, Twilio sends no
	// status updates, and a sent message stays sent.
	StatusCallback string
	// BaseURL is where the API is: an http(s) URL without user info or
	// query, under which Send posts to /2010-04-01/Accounts/{AccountSID}/
	// Messages.json. A trailing slash or /2010-04-01 is ignored. Default
	// DefaultBaseURL (https://api.twilio.com).
	BaseURL string
	// HTTPClient sends the requests. Default:
	// vendorhttp.NewClient(DefaultTimeout): 15s per whole request and
	// nothing shorter for the answer, bounded dial and TLS handshake, no
	// redirects followed, on a transport of its own whose idle
	// connections Close releases.
	HTTPClient *http.Client
	// Name is the provider's name in receipts, timeouts and delivery
	// reports. Default DefaultName ("twilio").
	Name string
}

// Provider sends SMS envelopes through Twilio Programmable Messaging.
// Create one with New; it is safe for concurrent use and holds no
// goroutines.
type Provider struct {
	name     string
	endpoint string // {base}/2010-04-01/Accounts/{sid}/Messages.json
	account  string // {base}/2010-04-01/Accounts/{sid}.json, which CheckHealth reads
	numbers  string // the account's IncomingPhoneNumbers, page of one: CheckHealth's probe of an API key
	apiKey   bool   // the credentials are an API key, not the auth token
	auth     string // the Authorization header: Basic, of the user and password
	from     string
	service  string
	callback string
	conn     *vendorhttp.Conn
}

// New returns a Provider for cfg. It fails, naming the field and never
// repeating a secret, when AccountSID is missing or not "AC" and 32 hex
// digits; when neither AuthToken nor APIKeySID with APIKeySecret is set,
// or both are, or a secret holds control characters; when APIKeySID is
// not "SK" and 32 hex digits; when neither From nor MessagingServiceSID
// is set, From is not a sender Twilio takes or MessagingServiceSID not
// "MG" and 32 hex digits; when StatusCallback is not an absolute http(s)
// URL; or when BaseURL is not an http(s) URL without user info or query.
func New(cfg Config) (*Provider, error) {
	if !validSID(cfg.AccountSID, "AC") {
		return nil, errors.New(`twilio: Config.AccountSID is required: "AC" and 32 hex digits`)
	}
	user, pass := cfg.AccountSID, cfg.AuthToken
	switch {
	case cfg.APIKeySID != "" || cfg.APIKeySecret != "":
		switch {
		case cfg.AuthToken != "":
			return nil, errors.New("twilio: set Config.AuthToken or Config.APIKeySID and APIKeySecret, not both")
		case !validSID(cfg.APIKeySID, "SK"):
			return nil, errors.New(`twilio: Config.APIKeySID must be "SK" and 32 hex digits`)
		case cfg.APIKeySecret == "":
			return nil, errors.New("twilio: Config.APIKeySecret is required with Config.APIKeySID")
		case hasControl(cfg.APIKeySecret):
			return nil, errors.New("twilio: Config.APIKeySecret must not contain control characters such as line breaks")
		}
		user, pass = cfg.APIKeySID, cfg.APIKeySecret
	case cfg.AuthToken == "":
		return nil, errors.New("twilio: Config.AuthToken (or Config.APIKeySID and APIKeySecret) is required")
	case hasControl(cfg.AuthToken):
		return nil, errors.New("twilio: Config.AuthToken must not contain control characters such as line breaks")
	}
	switch {
	case cfg.From == "" && cfg.MessagingServiceSID == "":
		return nil, errors.New("twilio: Config.From or Config.MessagingServiceSID is required")
	case cfg.From != "" && !ValidSender(cfg.From):
		return nil, errors.New("twilio: Config.From must be an E.164 number (+ and 7 to 15 digits), a short code (3 to 8 digits) or an alphanumeric sender ID (1 to 11 of A-Z, a-z, 0-9, space, +, -, _, &, with a letter)")
	case cfg.MessagingServiceSID != "" && !validSID(cfg.MessagingServiceSID, "MG"):
		return nil, errors.New(`twilio: Config.MessagingServiceSID must be "MG" and 32 hex digits`)
	}
	if cfg.StatusCallback != "" {
		u, err := url.Parse(cfg.StatusCallback)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" || strings.Contains(u.Hostname(), "_") {
			return nil, errors.New("twilio: Config.StatusCallback must be an absolute http(s) URL whose host has no underscore")
		}
	}
	base, err := vendorhttp.CheckBaseURL("twilio", cfg.BaseURL, DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	base = vendorhttp.TrimEndpoint(base, "/"+APIVersion)
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	root := base + "/" + APIVersion + "/Accounts/" + cfg.AccountSID
	p := &Provider{
		name:     cfg.Name,
		endpoint: root + "/Messages.json",
		account:  root + ".json",
		numbers:  root + "/IncomingPhoneNumbers.json?PageSize=1",
		apiKey:   cfg.APIKeySID != "",
		auth:     "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass)),
		from:     cfg.From,
		service:  cfg.MessagingServiceSID,
		callback: cfg.StatusCallback,
		conn:     vendorhttp.NewConn(cfg.HTTPClient, DefaultTimeout),
	}
	return p, nil
}

// Name returns Config.Name.
func (p *Provider) Name() string { return p.name }

// Close releases the idle connections of the default HTTP client; a
// client given in Config is left alone. Send keeps working after Close,
// opening new connections.
func (p *Provider) Close() error { return p.conn.Close() }

// Send creates one message, once, and returns its SID ("SM" and 32 hex
// digits) as the ProviderMessageID. The body is the sms.Message's Text on
// every route (on the otp route the whole OTP text). An envelope Twilio
// could not take (no SMS content, a To that is not E.164, an empty text or
// one over MaxBodyLen characters) is CodeInvalidArgument and sends
// nothing; other errors are classified as the package documentation
// describes.
func (p *Provider) Send(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	form, otp, err := p.form(env)
	if err != nil {
		return nil, err
	}
	ans, err := p.call(ctx, http.MethodPost, p.endpoint, []byte(form.Encode()))
	if err != nil {
		return nil, err
	}
	sid, err := decodeAnswer(ans.Status, ans.Header, ans.Body, otp)
	if err != nil {
		return nil, err
	}
	return &notify.Result{Provider: p.name, ProviderMessageID: sid}, nil
}

// form builds the request's parameters for env, and returns the OTP it
// carries (to keep it out of errors).
func (p *Provider) form(env *notify.Envelope) (url.Values, string, error) {
	m := sms.MessageOf(env)
	if m == nil {
		return nil, "", notify.InvalidField("message", "twilio sends SMS envelopes only")
	}
	var fe record.FieldErrors
	if !phone.IsE164(env.To) {
		fe.Add("to", "must be an E.164 number: +, then 7 to 15 digits")
	}
	switch n := utf8.RuneCountInString(m.Text); {
	case strings.TrimSpace(m.Text) == "":
		fe.Add("message", "is required")
	case n > MaxBodyLen:
		fe.Addf("message", "is %d characters, over Twilio's limit of %d", n, MaxBodyLen)
	}
	if err := notify.InvalidFields(fe); err != nil {
		return nil, "", err
	}
	v := url.Values{"To": {env.To}, "Body": {m.Text}}
	if p.from != "" {
		v.Set("From", p.from)
	}
	if p.service != "" {
		v.Set("MessagingServiceSid", p.service)
	}
	if p.callback != "" {
		v.Set("StatusCallback", callbackURL(p.callback, env))
	}
	return v, m.OTP, nil
}

// callbackURL is base with RefParam, the envelope's notify.MessageRef,
// added to its query, before any fragment (Twilio reads connection
// overrides, such as #rc=2, from it). The rest of base is kept byte for
// byte: Twilio signs the URL as it was given.
func callbackURL(base string, env *notify.Envelope) string {
	if env.Account == nil || env.Account.ID == "" || env.ID == "" {
		return base
	}
	rest, frag, hasFrag := strings.Cut(base, "#")
	sep := "?"
	if strings.Contains(rest, "?") {
		sep = "&"
		if strings.HasSuffix(rest, "?") || strings.HasSuffix(rest, "&") {
			sep = ""
		}
	}
	out := rest + sep + RefParam + "=" + url.QueryEscape(notify.MessageRef(env.Account.ID, env.ID))
	if hasFrag {
		out += "#" + frag
	}
	return out
}

// call sends one request, a form when body is not nil, through the vendor
// kit, which reads the whole answer and classifies a transport failure:
// CodeUnavailable when the request was certainly not written whole,
// CodeOutcomeUnknown once it may have been.
func (p *Provider) call(ctx context.Context, method, target string, body []byte) (*vendorhttp.Answer, error) {
	r := vendorhttp.Request{Name: "twilio", Method: method, URL: target, URLConfig: "twilio Config.BaseURL",
		Header: http.Header{"Authorization": {p.auth}}, Limit: maxAnswer}
	if body != nil {
		r.Body, r.ContentType = body, "application/x-www-form-urlencoded"
	}
	return p.conn.Do(ctx, r)
}

// CheckHealth is the readiness check of notify.Provider: it fetches the
// account, GET {BaseURL}/2010-04-01/Accounts/{AccountSID}.json, with the
// credentials Send uses, and is nil when Twilio answers it with the
// account's "status" "active". A suspended or closed account is an error
// that says so (CodeRejected); so are credentials Twilio refuses (20003,
// or any 401 or 403: the error says to check them, never repeating them),
// and any other answer. The read sends nothing, so no error of it is of
// unknown outcome: a 5xx, a timeout or a lost answer is CodeUnavailable,
// and an ended ctx stays visible to errors.Is.
//
// Only the auth token and a Main API key may read the Account resource:
// Twilio refuses a Standard key there with 20003. With Config.APIKeySID set, CheckHealth then
// checks the key on a resource every key reads, a page of one of the
// account's IncomingPhoneNumbers, and is nil when Twilio answers it: the
// key works, though the account's status is not known.
func (p *Provider) CheckHealth(ctx context.Context) error {
	ans, err := p.call(ctx, http.MethodGet, p.account, nil)
	if err != nil {
		return vendorhttp.ReadOnly(err)
	}
	err = decodeAccount(ans.Status, ans.Header, ans.Body)
	var te *Error
	if p.apiKey && errors.As(err, &te) && te.Code == codeAuthenticate {
		if ans, err = p.call(ctx, http.MethodGet, p.numbers, nil); err == nil {
			_, err = readAnswer(ans.Status, ans.Header, ans.Body, "")
			err = refused(ans.Status, err)
		}
	}
	return vendorhttp.ReadOnly(err)
}

// ValidSender reports whether s is a From Twilio takes for SMS: an E.164
// number, a short code (3 to 8 digits) or an alphanumeric sender ID (1 to
// 11 of A-Z, a-z, 0-9, space, '+', '-', '_' and '&', with at least one
// letter). Whether the account may send from it is Twilio's to say.
func ValidSender(s string) bool {
	if phone.IsE164(s) || (len(s) >= 3 && len(s) <= 8 && rules.Digits(s)) {
		return true
	}
	if s == "" || len(s) > 11 || strings.TrimSpace(s) != s {
		return false
	}
	letter := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
			letter = true
		case c >= '0' && c <= '9', c == ' ', c == '+', c == '-', c == '_', c == '&':
		default:
			return false
		}
	}
	return letter
}

// validSID reports whether s is prefix and 32 hex digits.
func validSID(s, prefix string) bool {
	if len(s) != len(prefix)+32 || !strings.HasPrefix(s, prefix) {
		return false
	}
	for i := len(prefix); i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
		default:
			return false
		}
	}
	return true
}

func hasControl(s string) bool { return strings.IndexFunc(s, unicode.IsControl) >= 0 }

// Interface guards
var (
	_ notify.Provider = (*Provider)(nil)
	_ io.Closer       = (*Provider)(nil)
)
