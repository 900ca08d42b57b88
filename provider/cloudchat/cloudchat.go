package cloudchat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/internal/rules"
	"github.com/notifykit/notify/provider/vendorhttp"
)

// Defaults of Config.
const (
	DefaultBaseURL     = "https://graph.facebook.com"
	DefaultVersion     = "v25.0"
	DefaultName        = "cloudchat"
	DefaultCountryCode = "91"
	DefaultTimeout     = 30 * time.Second
)

// maxResponse bounds how much of a vendor answer is read.
const maxResponse = 1 << 20

// Config configures a Provider.
type Config struct {
	// PhoneNumberID is the ID of the sending business phone number (digits,
	// not the phone number itself). Required.
	PhoneNumberID string
	// Token is the access token, sent as a Bearer token. It never appears
	// in errors. Required.
	Token string
	// BaseURL is where the API is, in any of these forms:
	//
	//   - its root, such as https://graph.facebook.com, under which the
	//     provider calls /{Version}/{PhoneNumberID}/messages (Send) and
	//     /{Version}/{PhoneNumberID} (CheckHealth);
	//   - the root with the version, https://graph.facebook.com/v25.0;
	//   - the root with the version and phone number ID, or the whole
	//     messages endpoint as the vendor documents it,
	//     https://graph.facebook.com/v25.0/{PhoneNumberID}/messages.
	//
	// A version in the URL is the one used when Version is empty, and must
	// equal Version otherwise; a phone number ID in the URL must equal
	// PhoneNumberID. A trailing slash makes no difference. It must be an
	// absolute http or https URL without user info (the token goes in
	// Token, never in the URL). Default DefaultBaseURL
	// (https://graph.facebook.com).
	BaseURL string
	// Version is the API version path segment. Default: the version in
	// BaseURL if it has one, else DefaultVersion (v25.0).
	Version string
	// CountryCode is put before the 10-digit national numbers of
	// envelopes. Default "91".
	CountryCode string
	// HTTPClient sends the requests. Default: a client with a 30s timeout
	// that never follows a redirect (vendorhttp.NewClient; the caller's
	// context bounds each send too), whose idle connections Close
	// releases.
	HTTPClient *http.Client
	// Name is the provider's name in receipts and timeouts. Default
	// "cloudchat".
	Name string
}

// Provider sends chat envelopes through the cloud messaging API. Create one
// with New; it is safe for concurrent use and holds no goroutines.
type Provider struct {
	name     string
	endpoint string // {base}/{version}/{phone id}
	token    string
	cc       string
	conn     *vendorhttp.Conn
}

// digits reports whether s is 1-32 ASCII digits.
func digits(s string) bool { return len(s) <= 32 && rules.Digits(s) }

// validVersion accepts "v25" and "v25.0".
func validVersion(v string) bool {
	major, minor, dot := strings.Cut(strings.TrimPrefix(v, "v"), ".")
	return strings.HasPrefix(v, "v") && digits(major) && len(major) <= 3 &&
		(!dot || digits(minor) && len(minor) <= 3)
}

// New returns a Provider for cfg. It fails on a missing PhoneNumberID or
// Token, a Token with control characters (a pasted line break), a
// PhoneNumberID that is not digits, a bad Version, a BaseURL that is not
// an absolute http(s) URL, or a BaseURL whose version or phone number ID
// disagrees with Version or PhoneNumberID.
func New(cfg Config) (*Provider, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	root, urlVersion, urlPhone := splitEndpoint(cfg.BaseURL)
	var problems []string
	switch {
	case urlVersion == "":
	case cfg.Version == "":
		cfg.Version = urlVersion
	case cfg.Version != urlVersion:
		problems = append(problems, fmt.Sprintf("BaseURL names API version %s but Version is %s", urlVersion, cfg.Version))
	}
	if urlPhone != "" && urlPhone != cfg.PhoneNumberID {
		problems = append(problems, fmt.Sprintf("BaseURL is the endpoint of phone number ID %s, not of PhoneNumberID %q", urlPhone, cfg.PhoneNumberID))
	}
	if cfg.Version == "" {
		cfg.Version = DefaultVersion
	}
	if cfg.CountryCode == "" {
		cfg.CountryCode = DefaultCountryCode
	}
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if !digits(cfg.PhoneNumberID) {
		problems = append(problems, "PhoneNumberID must be the numeric ID of the sending phone number")
	}
	if cfg.Token == "" {
		problems = append(problems, "Token is required")
	} else if strings.IndexFunc(cfg.Token, unicode.IsControl) >= 0 {
		problems = append(problems, "Token must not contain control characters such as line breaks")
	}
	if !validVersion(cfg.Version) {
		problems = append(problems, "Version must look like v25.0")
	}
	if !digits(cfg.CountryCode) || len(cfg.CountryCode) > 4 {
		problems = append(problems, "CountryCode must be 1-4 digits")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		problems = append(problems, "BaseURL must be an absolute http(s) URL without user info")
	}
	if len(problems) > 0 {
		return nil, errors.New("cloudchat: " + strings.Join(problems, "; "))
	}
	return &Provider{
		name:     cfg.Name,
		endpoint: root + "/" + cfg.Version + "/" + cfg.PhoneNumberID,
		token:    cfg.Token,
		cc:       cfg.CountryCode,
		conn:     vendorhttp.NewConn(cfg.HTTPClient, DefaultTimeout),
	}, nil
}

// splitEndpoint splits a Config.BaseURL into the API's root (without a
// trailing slash) and the version and phone number ID its path ends in,
// if any: the path may end in /{version}, /{version}/{phone number ID} or
// /{version}/{phone number ID}/messages, the endpoint as the vendor
// documents it. Anything else is all root, so that a proxy's own path
// prefix is kept. A URL that does not parse is returned as the root, for
// New to refuse.
func splitEndpoint(raw string) (root, version, phone string) {
	root = strings.TrimRight(raw, "/")
	u, err := url.Parse(root)
	if err != nil || u.RawQuery != "" || u.Fragment != "" {
		return root, "", ""
	}
	segs := strings.Split(u.Path, "/")
	n := len(segs)
	switch {
	case n >= 4 && strings.EqualFold(segs[n-1], "messages") && digits(segs[n-2]) && validVersion(segs[n-3]):
		version, phone, segs = segs[n-3], segs[n-2], segs[:n-3]
	case n >= 3 && digits(segs[n-1]) && validVersion(segs[n-2]):
		version, phone, segs = segs[n-2], segs[n-1], segs[:n-2]
	case n >= 2 && validVersion(segs[n-1]):
		version, segs = segs[n-1], segs[:n-1]
	default:
		return root, "", ""
	}
	u.Path, u.RawPath = strings.Join(segs, "/"), ""
	return strings.TrimRight(u.String(), "/"), version, phone
}

// Name returns Config.Name.
func (p *Provider) Name() string { return p.name }

// Close releases the idle connections of the default HTTP client; a
// client given in Config is left alone. Send keeps working after Close,
// opening new connections.
func (p *Provider) Close() error { return p.conn.Close() }

// The request body; see the package documentation.
// maxCallbackData is the vendor's bound on biz_opaque_callback_data.
const maxCallbackData = 512

type message struct {
	MessagingProduct string        `json:"messaging_product"`
	RecipientType    string        `json:"recipient_type"`
	To               string        `json:"to"`
	Type             string        `json:"type"`
	Text             *textBody     `json:"text,omitempty"`
	Template         *templateBody `json:"template,omitempty"`
	Document         *mediaBody    `json:"document,omitempty"`
	Image            *mediaBody    `json:"image,omitempty"`
	Video            *mediaBody    `json:"video,omitempty"`
	// CallbackData comes back in status webhooks: notify.MessageRef of
	// the message, which names it even when the send's answer was lost.
	CallbackData string `json:"biz_opaque_callback_data,omitempty"`
}

type textBody struct {
	PreviewURL bool   `json:"preview_url"`
	Body       string `json:"body"`
}

type mediaBody struct {
	Link     string `json:"link"`
	Caption  string `json:"caption,omitempty"`
	Filename string `json:"filename,omitempty"`
}

// build turns env into the request body, or an InvalidArgument error.
func (p *Provider) build(env *notify.Envelope) (*message, error) {
	if env == nil || chat.MessageOf(env) == nil {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "cloudchat: the envelope has no chat content")
	}
	to := env.To
	if len(to) == 10 {
		to = p.cc + to
	}
	to = strings.TrimPrefix(to, "+")
	if !digits(to) {
		return nil, notify.InvalidField("to", "cloudchat: must be a phone number")
	}
	m := &message{MessagingProduct: "whatsapp", RecipientType: "individual", To: to}
	if env.Account != nil && env.ID != "" {
		if ref := notify.MessageRef(env.Account.ID, env.ID); len(ref) <= maxCallbackData {
			m.CallbackData = ref
		}
	}
	c := chat.MessageOf(env)
	switch {
	case c.Template != nil:
		tb, err := templateOf(c.Template)
		if err != nil {
			return nil, err
		}
		m.Type, m.Template = "template", tb
	case c.Media != nil:
		if c.Media.URL == "" {
			return nil, notify.InvalidField("media_url", "cloudchat: is required for a media message")
		}
		mb := &mediaBody{Link: c.Media.URL, Caption: c.Text}
		switch c.Media.Kind {
		case chat.MediaImage:
			m.Type, m.Image = "image", mb
		case chat.MediaVideo:
			m.Type, m.Video = "video", mb
		default:
			mb.Filename = c.Media.FileName
			m.Type, m.Document = "document", mb
		}
	case c.Text != "":
		m.Type, m.Text = "text", &textBody{Body: c.Text}
	default:
		return nil, notify.InvalidField("message", "cloudchat: the envelope has no text, template or media")
	}
	return m, nil
}

// Send posts env to the messages endpoint, once. See the package
// documentation for how errors are classified.
func (p *Provider) Send(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	m, err := p.build(env)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(m)
	if err != nil {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "cloudchat: the envelope cannot be encoded as a request: %v", err)
	}
	status, header, data, err := p.do(ctx, http.MethodPost, p.endpoint+"/messages", body)
	if err != nil {
		return nil, err
	}
	otp := ""
	if chat.MessageOf(env) != nil {
		otp = chat.MessageOf(env).OTP
	}
	if status < 200 || status > 299 {
		return nil, classify(status, header, data, otp)
	}
	var out struct {
		Messages []struct {
			ID string `json:"id"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(data, &out); err != nil || len(out.Messages) == 0 || out.Messages[0].ID == "" {
		// The vendor said yes without the ID: the message may be on its
		// way, so this must not be retried.
		return nil, vendorhttp.Unknownf("cloudchat", "HTTP %d without a message ID", status)
	}
	return &notify.Result{Provider: p.name, ProviderMessageID: out.Messages[0].ID, Route: string(chat.GatewayCloud)}, nil
}

// CheckHealth is the readiness check of notify.Provider: it reads the sending phone
// number's record, which needs a valid token and phone number ID. The read
// sends nothing, so no error of it is of unknown outcome: those that would
// be for a send are CodeUnavailable.
func (p *Provider) CheckHealth(ctx context.Context) error {
	status, header, data, err := p.do(ctx, http.MethodGet, p.endpoint+"?fields=id", nil)
	if err != nil {
		return vendorhttp.ReadOnly(err)
	}
	if status < 200 || status > 299 {
		return vendorhttp.ReadOnly(classify(status, header, data, ""))
	}
	return nil
}

// do makes one request and reads the answer; provider/vendorhttp
// classifies its errors (CodeUnavailable only when the request was
// certainly not written, CodeOutcomeUnknown once it may have been).
func (p *Provider) do(ctx context.Context, method, target string, body []byte) (int, http.Header, []byte, error) {
	ans, err := p.conn.Do(ctx, vendorhttp.Request{Name: "cloudchat", Method: method, URL: target,
		URLConfig: "cloudchat Config.BaseURL", Body: body, Header: http.Header{"Authorization": {"Bearer " + p.token}},
		Limit: maxResponse})
	if err != nil {
		return 0, nil, nil, err
	}
	return ans.Status, ans.Header, ans.Body, nil
}

// Interface guards
var (
	_ notify.Provider = (*Provider)(nil)
	_ io.Closer       = (*Provider)(nil)
)
