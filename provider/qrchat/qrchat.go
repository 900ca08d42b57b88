package qrchat

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/notifykit/notify/record"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/internal/netguard"
	"github.com/notifykit/notify/internal/rules"
	"github.com/notifykit/notify/provider/vendorhttp"
)

// Defaults of Config.
const (
	DefaultSession       = "default"
	DefaultName          = "qrchat"
	DefaultCountryCode   = "91"
	DefaultStatusTTL     = 10 * time.Second
	DefaultTimeout       = 30 * time.Second
	DefaultMediaMaxBytes = 16 << 20
	DefaultMediaTimeout  = 30 * time.Second
)

// maxResponse bounds how much of a gateway answer is read.
const maxResponse = 1 << 20

// Edition is the WAHA edition the gateway runs, which decides whether it
// can send media.
type Edition string

// The editions.
const (
	// EditionPlus is WAHA Plus, which sends images, videos and documents.
	EditionPlus Edition = "plus"
	// EditionCore is WAHA Core, the free edition: it sends text only and
	// answers every image, video or document with HTTP 422 ("... is
	// available only in Plus version"). What a Core provider does with a
	// media envelope is Config.CoreMedia.
	EditionCore Edition = "core"
)

// CoreMediaMode is what a provider for WAHA Core (EditionCore) does with
// an envelope that has media.
type CoreMediaMode string

// The modes of Config.CoreMedia.
const (
	// MediaRefuse refuses every media envelope in Send before anything
	// is fetched or sent: CodeInvalidArgument naming media_url, so that
	// nothing is charged. The chat channel can tell beforehand with
	// Provider.SupportsMedia.
	MediaRefuse CoreMediaMode = "refuse"
	// MediaAsLink sends a media envelope as text through /api/sendText:
	// the caption, a line break and the media URL as the envelope has it
	// (its query included: it must be fit for the recipient to open).
	// The file is not fetched, and the text is sent with linkPreview
	// false, so that the gateway does not fetch the URL either (a link
	// preview would make it fetch from inside the operator's network);
	// the recipient's app opens it.
	MediaAsLink CoreMediaMode = "link"
)

// Resolver looks up host names for the media fetch; *net.Resolver
// implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config configures a Provider.
type Config struct {
	// BaseURL is where the gateway is: its root, such as
	// http://waha:3000, under which the provider calls /api/sendText,
	// /api/sendImage, /api/sendVideo, /api/sendFile and
	// /api/sessions/{session}. The same
	// root followed by /api, or by one of those send endpoints
	// (http://waha:3000/api/sendText), is accepted too and means that
	// root. A trailing slash makes no difference. It must be an absolute
	// http or https URL without user info (the key goes in APIKey, never
	// in the URL). Required.
	BaseURL string
	// APIKey is sent as X-Api-Key; empty sends none. It never appears in
	// errors. Default empty.
	APIKey string
	// Session is the gateway session to send from. Default "default".
	Session string
	// CountryCode is put before 10-digit national numbers in chat IDs.
	// Default "91".
	CountryCode string
	// HTTPClient talks to the gateway (not to media servers). Default: a
	// client with a 30s timeout that never follows a redirect
	// (vendorhttp.NewClient), whose idle connections Close releases.
	HTTPClient *http.Client
	// Name is the provider's name in receipts and timeouts. Default
	// "qrchat".
	Name string
	// StatusTTL is how long a WORKING session status is trusted before it
	// is asked again; negative asks before every send. Default 10s.
	StatusTTL time.Duration

	// Edition is the WAHA edition of the gateway: EditionPlus or
	// EditionCore. A Plus provider whose gateway answers a media send
	// with WAHA Core's HTTP 422 ("available only in Plus version") gets
	// CodeRejected with a message that says to set EditionCore. Default
	// EditionPlus.
	Edition Edition
	// CheckNumber, when true, asks the gateway whether the recipient's
	// number is on the chat network before each send (GET
	// /api/contacts/check-exists?phone=...&session=..., one more request
	// per send). A number that is not is CodeRejected on the field "to",
	// and nothing is sent; a check that fails (no answer, a 5xx, an
	// unreadable answer) is CodeUnavailable, and nothing is sent either;
	// a refused API key is CodeRejected. The send goes to the chat ID the
	// answer names, which may differ from the number's own (the network
	// keeps some countries' numbers in another form). Default false: the
	// gateway takes a message for a number that is not on the network
	// and it is never delivered (devlikeapro/waha#2083).
	CheckNumber bool
	// CoreMedia is what an EditionCore provider does with media
	// envelopes: MediaRefuse or MediaAsLink. It is not used with
	// EditionPlus. Default MediaRefuse.
	CoreMedia CoreMediaMode

	// MediaMaxBytes is the largest media file fetched. Default 16 MiB.
	MediaMaxBytes int64
	// MediaTimeout bounds each media fetch. Default 30s.
	MediaTimeout time.Duration
	// Resolver resolves media hosts, for the dial-time address check.
	// Default net.DefaultResolver.
	Resolver Resolver

	// AllowMediaAddr, when set, lets the media fetch dial addresses the
	// guard refuses. It exists only for tests that serve media from
	// loopback; production code must leave it nil. Default nil.
	AllowMediaAddr func(netip.Addr) bool
	// MediaTLSConfig is the TLS configuration of media fetches, for tests
	// that trust a test server's certificate. Default nil: system roots.
	MediaTLSConfig *tls.Config
}

// Provider sends chat envelopes through a QR-session gateway. Create one
// with New; it is safe for concurrent use. It holds no goroutines
// between calls: a media send runs one, which writes the request's body
// as the file arrives, and ends it before Send returns.
type Provider struct {
	name    string
	base    string
	key     string
	session string
	cc      string
	conn    *vendorhttp.Conn
	ttl     time.Duration
	guard   *netguard.Guard
	edition Edition
	coreMed CoreMediaMode
	check   bool

	mu        sync.Mutex
	workingTo time.Time // the session was WORKING; trusted until then
}

// New returns a Provider for cfg. It fails on a missing or bad BaseURL, an
// APIKey with control characters (a pasted line break), a session name
// that is not letters, digits, '-' and '_', or a bad CountryCode.
func New(cfg Config) (*Provider, error) {
	if cfg.Session == "" {
		cfg.Session = DefaultSession
	}
	if cfg.CountryCode == "" {
		cfg.CountryCode = DefaultCountryCode
	}
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if cfg.StatusTTL == 0 {
		cfg.StatusTTL = DefaultStatusTTL
	}
	if cfg.MediaMaxBytes <= 0 {
		cfg.MediaMaxBytes = DefaultMediaMaxBytes
	}
	if cfg.MediaTimeout <= 0 {
		cfg.MediaTimeout = DefaultMediaTimeout
	}
	if cfg.Edition == "" {
		cfg.Edition = EditionPlus
	}
	if cfg.CoreMedia == "" {
		cfg.CoreMedia = MediaRefuse
	}
	var problems []string
	u, err := url.Parse(cfg.BaseURL)
	if cfg.BaseURL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		problems = append(problems, "BaseURL must be an absolute http(s) URL without user info")
	}
	if strings.IndexFunc(cfg.APIKey, unicode.IsControl) >= 0 {
		problems = append(problems, "APIKey must not contain control characters such as line breaks")
	}
	if !sessionName(cfg.Session) {
		problems = append(problems, "Session must be 1-64 letters, digits, '-' or '_'")
	}
	if !digits(cfg.CountryCode) || len(cfg.CountryCode) > 4 {
		problems = append(problems, "CountryCode must be 1-4 digits")
	}
	if cfg.Edition != EditionPlus && cfg.Edition != EditionCore {
		problems = append(problems, `Edition must be EditionPlus ("plus") or EditionCore ("core")`)
	}
	if cfg.CoreMedia != MediaRefuse && cfg.CoreMedia != MediaAsLink {
		problems = append(problems, `CoreMedia must be MediaRefuse ("refuse") or MediaAsLink ("link")`)
	}
	if len(problems) > 0 {
		return nil, errors.New("qrchat: " + strings.Join(problems, "; "))
	}
	var resolver netguard.Resolver
	if cfg.Resolver != nil {
		resolver = cfg.Resolver
	}
	return &Provider{
		name:    cfg.Name,
		base:    vendorhttp.TrimEndpoint(cfg.BaseURL, copiedPaths...),
		key:     cfg.APIKey,
		session: cfg.Session,
		cc:      cfg.CountryCode,
		conn:    vendorhttp.NewConn(cfg.HTTPClient, DefaultTimeout),
		ttl:     cfg.StatusTTL,
		edition: cfg.Edition,
		coreMed: cfg.CoreMedia,
		check:   cfg.CheckNumber,
		guard: netguard.New(netguard.Config{
			Resolver:  resolver,
			Allow:     cfg.AllowMediaAddr,
			TLSConfig: cfg.MediaTLSConfig,
			MaxBytes:  cfg.MediaMaxBytes,
			Timeout:   cfg.MediaTimeout,
		}),
	}, nil
}

// copiedPaths are the paths a base URL copied from the gateway's
// documentation may end in, which the provider appends itself.
var copiedPaths = []string{"/api/sendText", "/api/sendImage", "/api/sendVideo", "/api/sendFile", "/api"}

func sessionName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func digits(s string) bool { return len(s) <= 32 && rules.Digits(s) }

// Name returns Config.Name.
func (p *Provider) Name() string { return p.name }

// Close releases the idle connections of the default HTTP client; a
// client given in Config is left alone. Send keeps working after Close,
// opening new connections.
func (p *Provider) Close() error { return p.conn.Close() }

// SupportsMedia reports whether the provider sends media as attachments:
// true for EditionPlus, false for EditionCore, whose provider refuses
// media envelopes (MediaRefuse) or sends them as links (MediaAsLink). It
// asks the gateway nothing, so a caller such as the chat channel may use
// it when it prepares a send, before anything is charged. Safe for
// concurrent use.
func (p *Provider) SupportsMedia() bool { return p.edition != EditionCore }

type fileBody struct {
	MIMEType string `json:"mimetype"`
	Filename string `json:"filename,omitempty"`
	Data     string `json:"data"`
}

// sendBody is the body of every send: MessageTextRequest (text),
// MessageImageRequest and MessageFileRequest (file, caption) and
// MessageVideoRequest (file, caption, asNote, convert) of WAHA's
// src/structures/chatting.dto.ts.
type sendBody struct {
	Session string    `json:"session"`
	ChatID  string    `json:"chatId"`
	Text    string    `json:"text,omitempty"`
	File    *fileBody `json:"file,omitempty"`
	Caption string    `json:"caption,omitempty"`
	// LinkPreview is set, to false, for media sent as links (MediaAsLink).
	LinkPreview *bool `json:"linkPreview,omitempty"`
	// AsNote and Convert are set, to false, for videos only: a plain
	// video (not a round "video note"), sent as it is (the media check
	// made sure it is a video).
	AsNote  *bool `json:"asNote,omitempty"`
	Convert *bool `json:"convert,omitempty"`
}

// sendPath returns the endpoint for media of kind: images and videos
// have their own, so that they arrive as an image or a playable video;
// documents and anything else go as files.
func sendPath(kind chat.MediaKind) string {
	switch kind {
	case chat.MediaImage:
		return "/api/sendImage"
	case chat.MediaVideo:
		return "/api/sendVideo"
	}
	return "/api/sendFile"
}

// chatID returns the gateway's chat ID of a recipient.
func (p *Provider) chatID(to string) (string, error) {
	if len(to) == 10 {
		to = p.cc + to
	}
	to = strings.TrimPrefix(to, "+")
	if !digits(to) {
		return "", notify.InvalidField("to", "qrchat: must be a phone number")
	}
	return to + "@c.us", nil
}

// Send sends env once: it checks the session, fetches media through the
// guard if there is any, then posts the message. See the package
// documentation for the errors.
func (p *Provider) Send(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	if err := ctx.Err(); err != nil {
		// Nothing was sent: a certain refusal that keeps the context's
		// error visible.
		return nil, notSent(err)
	}
	if env == nil || chat.MessageOf(env) == nil {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "qrchat: the envelope has no chat content")
	}
	c := chat.MessageOf(env)
	text, media, err := p.content(c)
	if err != nil {
		return nil, err
	}
	chatID, err := p.recipient(ctx, env.To)
	if err != nil {
		return nil, err
	}
	body := sendBody{Session: p.session, ChatID: chatID}
	var (
		status int
		header http.Header
		answer []byte
	)
	if media != nil {
		status, header, answer, err = p.postMedia(ctx, body, media, text)
	} else {
		status, header, answer, err = p.postText(ctx, body, text, c.Media != nil)
	}
	if err != nil {
		return nil, err
	}
	if status < 200 || status > 299 {
		e := p.classify(status, header, answer, c.OTP)
		if e.Code == notify.CodeUnavailable || e.Code == notify.CodeOutcomeUnknown {
			p.forget()
		}
		return nil, e
	}
	id := messageID(answer)
	if id == "" {
		return nil, vendorhttp.Unknownf("qrchat", "HTTP %d without a message ID", status)
	}
	return &notify.Result{Provider: p.name, ProviderMessageID: id, Route: string(chat.GatewayQR)}, nil
}

// content checks that c is something the QR gateway can send and returns
// the text and media to post. WAHA Core sends no media: there the media
// goes as a link in the text (MediaAsLink) and media is nil, or it is
// refused.
func (p *Provider) content(c *chat.Message) (string, *chat.Media, error) {
	switch {
	case c.Template != nil:
		return "", nil, notify.InvalidField("template_name", "qrchat: cloud templates need the cloud gateway")
	case c.Media == nil && c.Text == "":
		return "", nil, notify.InvalidField("message", "qrchat: the envelope has no text or media")
	case c.Media != nil && c.Media.URL == "":
		return "", nil, notify.InvalidField("media_url", "qrchat: is required for a media message")
	}
	media := c.Media
	text := c.Text
	if media != nil && p.edition == EditionCore {
		if p.coreMed != MediaAsLink {
			return "", nil, notify.InvalidField("media_url", "qrchat: the QR gateway runs WAHA Core, which sends no images, videos or documents (qrchat Config.Edition); send the message without media_url or through the cloud gateway")
		}
		text, media = mediaLinkText(c.Text, media.URL), nil
	}
	return text, media, nil
}

// recipient returns the chat ID to send to for to, after making sure the
// session is WORKING and, with Config.CheckNumber, asking the gateway
// whether the number is on the chat network (its answer gives the chat
// ID). Send asks before it fetches any media.
func (p *Provider) recipient(ctx context.Context, to string) (string, error) {
	chatID, err := p.chatID(to)
	if err != nil {
		return "", err
	}
	if err := p.ensureWorking(ctx); err != nil {
		return "", err
	}
	if p.check {
		if chatID, err = p.checkNumber(ctx, chatID); err != nil {
			return "", err
		}
	}
	return chatID, nil
}

// postMedia posts body with media, fetched through the guard, and text as
// its caption, to the endpoint of its kind; it returns the gateway's
// answer. An error that leaves the outcome unknown makes the session be
// asked about again next time.
func (p *Provider) postMedia(ctx context.Context, body sendBody, media *chat.Media, text string) (int, http.Header, []byte, error) {
	ms, err := p.openMedia(ctx, media)
	if err != nil {
		return 0, nil, nil, err
	}
	body.File = &fileBody{MIMEType: ms.mime, Filename: media.FileName}
	body.Caption = text
	path := sendPath(media.Kind)
	if media.Kind == chat.MediaVideo {
		no := false
		body.AsNote, body.Convert = &no, &no
	}
	ans, err := p.sendMedia(ctx, path, body, ms)
	if err != nil {
		if notify.OutcomeOf(err) == record.StateUnknown {
			p.forget() // the gateway may be in trouble: ask again next time
		}
		return 0, nil, nil, err
	}
	return ans.Status, ans.Header, ans.Body, nil
}

// postText posts body with text to /api/sendText and returns the
// gateway's answer; link says text stands for media (MediaAsLink), which
// is then sent without a link preview. A failed post makes the session
// be asked about again next time.
func (p *Provider) postText(ctx context.Context, body sendBody, text string, link bool) (int, http.Header, []byte, error) {
	if link {
		no := false
		body.LinkPreview = &no
	}
	body.Text = text
	data, err := json.Marshal(body)
	if err != nil {
		return 0, nil, nil, notify.Errorf(notify.CodeInvalidArgument, "qrchat: the envelope cannot be encoded as a request: %v", err)
	}
	status, header, answer, err := p.do(ctx, http.MethodPost, "/api/sendText", data)
	if err != nil {
		p.forget() // the gateway may be in trouble: ask again next time
		return 0, nil, nil, err
	}
	return status, header, answer, nil
}

// mediaLinkText is the text that stands for media on WAHA Core
// (MediaAsLink): the caption, then the URL on a line of its own.
func mediaLinkText(caption, url string) string {
	if caption == "" {
		return url
	}
	return caption + "\n" + url
}

// notSent is the error of a send that ended with ctx before the message
// was sent: certainly not accepted, with the context's error visible.
func notSent(cerr error) error {
	return &notify.Error{Code: notify.CodeUnavailable, Err: fmt.Errorf("qrchat: not sent: %w", cerr)}
}

// ensureWorking returns nil when the session is known to be WORKING.
func (p *Provider) ensureWorking(ctx context.Context) error {
	p.mu.Lock()
	ok := time.Now().Before(p.workingTo)
	p.mu.Unlock()
	if ok {
		return nil
	}
	if err := p.checkSession(ctx); err != nil {
		return err
	}
	if p.ttl > 0 {
		p.mu.Lock()
		p.workingTo = time.Now().Add(p.ttl)
		p.mu.Unlock()
	}
	return nil
}

func (p *Provider) forget() {
	p.mu.Lock()
	p.workingTo = time.Time{}
	p.mu.Unlock()
}

// checkSession asks the gateway for the session's status. The question
// sends no message, so every error is a certain refusal: a failure that
// would leave a send's outcome unknown is CodeUnavailable here.
func (p *Provider) checkSession(ctx context.Context) error {
	status, header, answer, err := p.do(ctx, http.MethodGet, "/api/sessions/"+url.PathEscape(p.session), nil)
	if err != nil {
		return vendorhttp.ReadOnly(err)
	}
	switch {
	case status == http.StatusNotFound:
		return notify.Errorf(notify.CodeUnavailable, "qrchat: session %q does not exist on the gateway (check qrchat Config.Session)", p.session)
	case status < 200 || status > 299:
		return vendorhttp.ReadOnly(p.classify(status, header, answer, ""))
	}
	var s struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(answer, &s); err != nil {
		return notify.Errorf(notify.CodeUnavailable, "qrchat: session status: unreadable answer")
	}
	if s.Status != "WORKING" {
		st := s.Status
		if st == "" {
			st = "unknown"
		}
		hint := ""
		switch st {
		case "SCAN_QR_CODE":
			hint = "; scan the QR code to link it"
		case "STOPPED", "FAILED":
			hint = "; restart it"
		}
		return notify.Errorf(notify.CodeUnavailable, "qrchat: session %q is %s, not WORKING%s", p.session, vendorhttp.Clip(st), hint)
	}
	return nil
}

// checkNumber asks the gateway whether the number of chatID is on the
// chat network (Config.CheckNumber) and returns the chat ID to send to.
// The question sends no message, so every failure is a certain refusal.
// The answer is WANumberExistResult of WAHA's
// src/structures/chatting.dto.ts: {"numberExists": bool, "chatId":
// "..."}, chatId absent when the number does not exist.
func (p *Provider) checkNumber(ctx context.Context, chatID string) (string, error) {
	phone := strings.TrimSuffix(chatID, "@c.us")
	q := url.Values{"phone": {phone}, "session": {p.session}}
	status, header, answer, err := p.do(ctx, http.MethodGet, "/api/contacts/check-exists?"+q.Encode(), nil)
	if err != nil {
		return "", vendorhttp.ReadOnly(err)
	}
	if status < 200 || status > 299 {
		e := p.classify(status, header, answer, "")
		if e.Code != notify.CodeRejected || (status != http.StatusUnauthorized && status != http.StatusForbidden) {
			msg, _ := errorMessage(answer)
			if msg != "" {
				msg = ": " + msg
			}
			e = notify.Errorf(notify.CodeUnavailable, "qrchat: checking the number failed: HTTP %d%s", status, msg)
		}
		return "", vendorhttp.ReadOnly(e)
	}
	var r struct {
		NumberExists *bool  `json:"numberExists"`
		ChatID       string `json:"chatId"`
	}
	if json.Unmarshal(answer, &r) != nil || r.NumberExists == nil {
		return "", notify.Errorf(notify.CodeUnavailable, "qrchat: checking the number failed: unreadable answer")
	}
	if !*r.NumberExists {
		return "", &notify.Error{Code: notify.CodeRejected, Fields: []record.FieldError{{Field: "to",
			Message: "qrchat: the number is not on the chat network (the gateway's check-exists said so); nothing was sent"}}}
	}
	if id, ok := checkedChatID(r.ChatID); ok {
		return id, nil
	}
	return chatID, nil
}

// checkedChatID returns the chat ID a check-exists answer names, in the
// form sends take, when it is one the provider can send to: digits at
// c.us (s.whatsapp.net, the NOWEB and GOWS form, is the same address) or
// at lid.
func checkedChatID(id string) (string, bool) {
	user, server, ok := strings.Cut(id, "@")
	if !ok || !digits(user) {
		return "", false
	}
	switch server {
	case "c.us", "s.whatsapp.net":
		return user + "@c.us", true
	case "lid":
		return id, true
	}
	return "", false
}

// CheckHealth is the readiness check of notify.Provider: nil when the session is
// WORKING.
func (p *Provider) CheckHealth(ctx context.Context) error { return p.checkSession(ctx) }

// do makes one request to the gateway and reads the answer;
// provider/vendorhttp classifies its errors (CodeUnavailable only when the
// request was certainly not written, CodeOutcomeUnknown once it may have
// been).
func (p *Provider) do(ctx context.Context, method, path string, body []byte) (int, http.Header, []byte, error) {
	ans, err := p.conn.Do(ctx, vendorhttp.Request{Name: "qrchat", Method: method, URL: p.base + path,
		URLConfig: "qrchat Config.BaseURL", Body: body, Header: p.header(), Limit: maxResponse})
	if err != nil {
		return 0, nil, nil, err
	}
	return ans.Status, ans.Header, ans.Body, nil
}

// header is what every request to the gateway carries: its API key.
func (p *Provider) header() http.Header {
	if p.key == "" {
		return nil
	}
	return http.Header{"X-Api-Key": {p.key}}
}

// classify turns an error answer into a *notify.Error, with the
// gateway's message (never its echo of the request) and otp removed. The
// gateway's own error answers are certain refusals, whatever the status:
// its answer about its session (the session is not WORKING, or is
// unknown), and an HTTP error it raised itself on a 5xx other than 500
// (its JSON with that statusCode). A 500 is not: the gateway reports its
// engine's failures as HTTP 500, and the engine may have sent the message
// before it failed, so that answer says the gateway does not know; the
// exceptions are the engine errors of engineRefusals, which refuse the
// recipient before anything is sent. A 5xx that is not the gateway's (a
// proxy's 502 or 504 page) says nothing of the gateway behind it.
func (p *Provider) classify(status int, header http.Header, data []byte, otp string) *notify.Error {
	msg, sessionState := errorMessage(data)
	if otp != "" {
		msg = strings.ReplaceAll(msg, otp, "[otp]")
	}
	if msg != "" {
		msg = ": " + msg
	}
	switch {
	case sessionState != "" && sessionState != "WORKING":
		return notify.Errorf(notify.CodeUnavailable, "qrchat: session %q is %s, not WORKING%s", p.session, vendorhttp.Clip(sessionState), msg)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return notify.Errorf(notify.CodeRejected, "qrchat: HTTP %d: the gateway refused the API key (check qrchat Config.APIKey)%s", status, msg)
	case status == http.StatusTooManyRequests:
		e := notify.Errorf(notify.CodeRateLimited, "qrchat: HTTP 429%s", msg)
		e.RetryAfter = vendorhttp.RetryAfter(header)
		return e
	case status == http.StatusUnprocessableEntity && strings.Contains(strings.ToLower(msg), "only in plus version"):
		// WAHA Core's answer to media (AvailableInPlusVersion).
		return notify.Errorf(notify.CodeRejected, "qrchat: HTTP 422: the gateway runs WAHA Core, which sends no media; set qrchat Config.Edition to EditionCore, and Config.CoreMedia to refuse media or send them as links%s", msg)
	case status == http.StatusNotFound && sessionState == "":
		return notify.Errorf(notify.CodeUnavailable, "qrchat: HTTP 404 (unknown session or endpoint)%s", msg)
	case status == http.StatusInternalServerError && msg != "":
		// WAHA's engine errors: a known refusal of the recipient is
		// certain (see engineRefusals); any other may come after the
		// engine sent the message.
		if why, ok := refusedByEngine(msg); ok {
			return notify.Errorf(notify.CodeRejected, "qrchat: HTTP 500: the gateway's engine refused the recipient (%s)%s", why, msg)
		}
		return vendorhttp.Unknownf("qrchat", "HTTP %d%s", status, msg)
	case status == http.StatusNotImplemented && raisedBy(data, status):
		return notify.Errorf(notify.CodeRejected, "qrchat: HTTP 501: the gateway's engine cannot do this%s", msg)
	case status > 500 && raisedBy(data, status):
		return notify.Errorf(notify.CodeUnavailable, "qrchat: HTTP %d from the gateway%s", status, msg)
	case status >= 500:
		return vendorhttp.Unknownf("qrchat", "HTTP %d%s", status, msg)
	}
	return notify.Errorf(notify.CodeRejected, "qrchat: HTTP %d%s", status, msg)
}

// raisedBy reports whether data is the error body the gateway writes for
// an HTTP error it raised itself, {"statusCode": status, "message", ...},
// rather than a page of something in front of it.
func raisedBy(data []byte, status int) bool {
	var b struct {
		StatusCode int `json:"statusCode"`
	}
	return json.Unmarshal(data, &b) == nil && b.StatusCode == status
}

// errorMessage extracts the readable part of an error answer: "error" (a
// string), "message" (a string or a list), or "exception.message"; and
// the session status when the answer is about the session.
func errorMessage(data []byte) (msg, sessionState string) {
	var b struct {
		Error     json.RawMessage `json:"error"`
		Message   json.RawMessage `json:"message"`
		Status    string          `json:"status"`
		Expected  []string        `json:"expected"`
		Exception *struct {
			Message string `json:"message"`
		} `json:"exception"`
	}
	if json.Unmarshal(data, &b) != nil {
		return "", ""
	}
	var parts []string
	var s string
	var list []string
	if json.Unmarshal(b.Error, &s) == nil && s != "" {
		parts = append(parts, s)
	}
	if json.Unmarshal(b.Message, &s) == nil && s != "" && (len(parts) == 0 || parts[0] != s) {
		parts = append(parts, s)
	} else if json.Unmarshal(b.Message, &list) == nil {
		parts = append(parts, list...)
	}
	if b.Exception != nil && b.Exception.Message != "" {
		parts = append(parts, b.Exception.Message)
	}
	if len(b.Expected) > 0 && b.Status != "" {
		sessionState = b.Status
	}
	return vendorhttp.Clip(strings.Join(parts, "; ")), sessionState
}

// messageID finds the message ID in a send answer, whatever the engine.
func messageID(data []byte) string {
	var b struct {
		ID  json.RawMessage `json:"id"`
		Key *struct {
			ID string `json:"id"`
		} `json:"key"`
		Data *struct {
			ID json.RawMessage `json:"id"`
		} `json:"_data"`
	}
	if json.Unmarshal(data, &b) != nil {
		return ""
	}
	if id := idOf(b.ID); id != "" {
		return id
	}
	if b.Key != nil && b.Key.ID != "" {
		return b.Key.ID
	}
	if b.Data != nil {
		return idOf(b.Data.ID)
	}
	return ""
}

// idOf reads an ID given as a string or as {"_serialized": ...}.
func idOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Serialized string `json:"_serialized"`
		ID         string `json:"id"`
	}
	if json.Unmarshal(raw, &o) == nil {
		if o.Serialized != "" {
			return o.Serialized
		}
		return o.ID
	}
	return ""
}

// Interface guards
var (
	_ notify.Provider = (*Provider)(nil)
	_ io.Closer       = (*Provider)(nil)
)
