package pushchannel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/record"
)

// Kind is the push channel's kind.
const Kind notify.Kind = "push"

// The limits of a push notification's text, in characters.
const (
	MaxTitle = 65
	MaxBody  = 240
)

// Request asks for one push notification.
type Request struct {
	Account string `json:"-"`
	// Token is the device's registration token: 32 to 4096 characters of
	// letters, digits and -_:. (the recipient).
	Token string `json:"token"`
	// Title and Body are the notification's text; Body is required.
	Title string `json:"title"`
	Body  string `json:"body"`
	// Domain is the calling application's domain, recorded with the message.
	Domain         string `json:"domain"`
	IdempotencyKey string `json:"idempotency_key"`
}

// Kind implements notify.Request.
func (*Request) Kind() notify.Kind { return Kind }

// AccountID implements notify.Request.
func (r *Request) AccountID() string { return r.Account }

// Key implements notify.Request.
func (r *Request) Key() string { return r.IdempotencyKey }

// Fingerprint implements notify.Request: every content field,
// length-prefixed so that no two field lists hash alike.
func (r *Request) Fingerprint(h hash.Hash) {
	for _, f := range []string{"push", strings.TrimSpace(r.Token), r.Title, r.Body, r.Domain} {
		fmt.Fprintf(h, "%d:%s", len(f), f)
	}
}

// Message is a push envelope's content (notify.Envelope.Content).
type Message struct {
	Title, Body string
}

// Channel prepares and delivers push notifications through one provider.
// It is safe for concurrent use.
type Channel struct {
	provider notify.Provider
}

// New returns a push channel that sends through p.
func New(p notify.Provider) *Channel { return &Channel{provider: p} }

// Kind implements notify.Channel.
func (c *Channel) Kind() notify.Kind { return Kind }

// Prepare implements notify.Channel: it checks every field at once and
// names each bad one.
func (c *Channel) Prepare(_ context.Context, _ *notify.Account, req notify.Request) (*notify.Envelope, error) {
	r, ok := req.(*Request)
	if !ok || r == nil {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "pushchannel: a %T is not a push request", req)
	}
	var fe record.FieldErrors
	token := strings.TrimSpace(r.Token)
	if token == "" {
		fe.Add("token", "is required")
	} else if why := tokenRule(token); why != "" {
		fe.Add("token", why)
	}
	checkText(&fe, "title", r.Title, MaxTitle, false)
	checkText(&fe, "body", r.Body, MaxBody, true)
	if err := notify.InvalidFields(fe); err != nil {
		return nil, err
	}
	return &notify.Envelope{
		Kind:     Kind,
		To:       token,
		Provider: c.provider.Name(),
		Units:    1,
		Class:    record.Transactional,
		Domain:   r.Domain,
		Content:  &Message{Title: r.Title, Body: r.Body},
	}, nil
}

// Recipient implements notify.Channel: a device token is its own
// canonical form, trimmed (tokens are case-sensitive).
func (c *Channel) Recipient(to string) (string, error) {
	token := strings.TrimSpace(to)
	if why := tokenRule(token); why != "" {
		return "", notify.InvalidField("to", why)
	}
	return token, nil
}

// tokenRule is the rule token breaks, or "".
func tokenRule(token string) string {
	if len(token) < 32 || len(token) > 4096 || strings.IndexFunc(token, notTokenRune) >= 0 {
		return "must be 32 to 4096 letters, digits or -_:."
	}
	return ""
}

func notTokenRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_:.", r))
}

func checkText(fe *record.FieldErrors, field, s string, max int, required bool) {
	switch {
	case strings.TrimSpace(s) == "":
		if required {
			fe.Add(field, "is required")
		}
	case !utf8.ValidString(s):
		fe.Add(field, "must be valid UTF-8")
	case utf8.RuneCountInString(s) > max:
		fe.Addf(field, "must be at most %d characters", max)
	}
}

// Deliver implements notify.Channel: one attempt through the provider.
func (c *Channel) Deliver(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	return c.provider.Send(ctx, env)
}

// Prices prices push notifications at Push minor units each and every
// other kind by Next. It is safe for concurrent use when Next is.
type Prices struct {
	Next notify.Pricer
	Push int64
}

// Price implements notify.Pricer.
func (p *Prices) Price(acct *notify.Account, env *notify.Envelope) (notify.Money, error) {
	if env.Kind == Kind {
		return notify.Money{Minor: p.Push * int64(max(env.Units, 1)), Currency: acct.Currency}, nil
	}
	return p.Next.Price(acct, env)
}

// Decode is the push channel's httpapi.Decoder: the JSON of a Request,
// unknown fields refused, the Idempotency-Key and X-Domain headers used
// where the body leaves them out.
func Decode(body []byte, account string, h httpapi.Header) (notify.Request, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	r := &Request{}
	if err := dec.Decode(r); err != nil {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "pushchannel: the body is not a push request: %v", err)
	}
	if dec.More() {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "pushchannel: the body holds more than one JSON value")
	}
	r.Account = account
	if r.IdempotencyKey == "" {
		r.IdempotencyKey = h.IdempotencyKey
	}
	if r.Domain == "" {
		r.Domain = h.Domain
	}
	return r, nil
}

// Provider sends push notifications to the push service. It is safe for
// concurrent use.
type Provider struct {
	base, key string
	client    *http.Client
}

// NewProvider returns a provider for the push service at base (such as
// https://push.example.com), authenticating with key; client nil means
// http.DefaultClient.
func NewProvider(base, key string, client *http.Client) *Provider {
	if client == nil {
		client = http.DefaultClient
	}
	return &Provider{base: strings.TrimSuffix(base, "/"), key: key, client: client}
}

// Name implements notify.Provider.
func (p *Provider) Name() string { return "push" }

// Send implements notify.Provider, classifying the answer into the three
// outcomes: an id is accepted; the service's own error object is a
// certain refusal (busy: Unavailable, 429: RateLimited, else Rejected);
// anything else after the request was written is unknown.
func (p *Provider) Send(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	msg, ok := env.Content.(*Message)
	if !ok {
		return nil, notify.InvalidField("body", "the envelope carries no push message")
	}
	payload, err := json.Marshal(map[string]string{"token": env.To, "title": msg.Title, "body": msg.Body,
		"ref": notify.MessageRef(env.Account.ID, env.ID)})
	if err != nil {
		return nil, notify.WithCode(notify.CodeInternal, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.base+"/v1/send", bytes.NewReader(payload))
	if err != nil {
		return nil, notify.WithCode(notify.CodeInternal, err)
	}
	req.Header.Set("Authorization", "Bearer "+p.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err // may have been written: unknown
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return nil, err // a cut answer: unknown
	}
	var out struct {
		ID    string `json:"id"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, notify.Errorf(notify.CodeOutcomeUnknown, "push: HTTP %d with a body that is not the service's", resp.StatusCode)
	}
	switch {
	case resp.StatusCode == http.StatusOK && out.ID != "":
		return &notify.Result{Provider: p.Name(), ProviderMessageID: out.ID}, nil
	case out.Error != nil && resp.StatusCode == http.StatusTooManyRequests:
		return nil, notify.Errorf(notify.CodeRateLimited, "push: %s", out.Error.Code)
	case out.Error != nil && resp.StatusCode >= 500:
		return nil, notify.Errorf(notify.CodeUnavailable, "push: %s", out.Error.Code)
	case out.Error != nil:
		return nil, notify.Errorf(notify.CodeRejected, "push: %s", out.Error.Code)
	}
	return nil, notify.WithCode(notify.CodeOutcomeUnknown, errors.New("push: an answer without an id or an error"))
}
