package outbox

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/mask"
	"github.com/notifykit/notify/record"
)

// Defaults of the options.
const (
	DefaultCapacity = 500
	DefaultMaxBytes = 64 << 20
	DefaultBasePath = "/outbox"
)

// Status is where a message stands, as the outbox last heard.
type Status string

// The statuses. StatusSending is a message accepted and charged whose
// provider has not answered yet; StatusReceived an e-mail an SMTP server
// handed over (AddMail) that no observed send matches.
const (
	StatusSending   Status = "sending"
	StatusSent      Status = "sent"
	StatusFailed    Status = "failed"
	StatusUnknown   Status = "unknown"
	StatusDelivered Status = "delivered"
	StatusRead      Status = "read"
	StatusReceived  Status = "received"
)

// Message is what the outbox knows of one message: a snapshot, which the
// caller owns. Exactly one of SMS, Chat, Email and Push is set, for a
// message of those channels.
type Message struct {
	ID      string
	Account string
	Kind    notify.Kind
	// To is the normalised recipient.
	To       string
	Provider string
	Status   Status
	// Price is what the message was charged when accepted; Cost what stays
	// charged now (zero after a refund).
	Price notify.Money
	Cost  notify.Money
	// Error is the failure, for a failed or unknown message.
	Error     string
	CreatedAt time.Time
	UpdatedAt time.Time
	// OTP is the message's declared one-time code, if any (an SMS's, a
	// chat message's or an e-mail's OTP, of up to 10 digits for e-mail);
	// MaskedDigits says every run of 4 to 8 digits of the message may be a
	// code too, because it carries one (Envelope.CarriesOTP), which a
	// template may have put anywhere. The page hides both, until clicked
	// for a Development message and for good otherwise, in an e-mail's
	// subject, headers and parts too, by the logs''
	// rule for codes (internal/mask), and nothing else: unlike the logs,
	// which may be kept and read by others, it does not guess at codes a
	// message did not declare, so a chat template's order number or year
	// shows as sent.
	OTP          string
	MaskedDigits bool
	// Development says the message went through development providers
	// alone (WithDevelopmentProviders): a log, memory, an in-process SMTP
	// server, which reach no one. Only then may the page show its codes;
	// a real vendor's message has them masked on the server, in every
	// page, fragment and mail frame the handler serves, with no way to
	// reveal them there.
	Development bool

	SMS   *sms.Message
	Chat  *chat.Message
	Email *Mail
	// Push is a push notification's content: title, body, data, link,
	// image, TTL and urgency. Its Keys are not kept: a Web Push
	// subscription's authentication secret is not the page's to show.
	// To is the subscription's endpoint or the FCM token.
	Push *push.Message
}

// Mail is an e-mail's content: as the channel prepared it, and as the SMTP
// server received it once AddMail matched it (Received set).
type Mail struct {
	Subject  string
	FromName string
	ReplyTo  string
	// Cc and Bcc are the further recipients. Bcc, which no delivered
	// header carries, comes from the prepared message, or from the
	// received one's envelope recipients that its To and Cc headers do
	// not name.
	Cc, Bcc []string
	HTML    string
	Text    string
	// Received says the fields below come from the message an SMTP server
	// received; HTML and Text are then its parts as received.
	Received bool
	// Headers are the received header fields, in order, encoded words
	// decoded.
	Headers     []Header
	Attachments []Attachment
	// Size is the received message's size in bytes.
	Size int
}

// Header is one header field.
type Header struct{ Name, Value string }

// Attachment describes an attachment; its content is not kept.
type Attachment struct {
	FileName    string
	ContentType string
	// Size is the file's size in bytes; 0 for a file still to be
	// fetched from Source.
	Size int
	// Source is the host of the URL a prepared attachment is fetched
	// from when sent, or empty (the whole URL is not kept: its query may
	// hold a token).
	Source string
}

// Option configures an Outbox in New.
type Option func(*Outbox) error

// WithCapacity sets how many messages the outbox keeps; older ones are
// forgotten. Default DefaultCapacity.
func WithCapacity(n int) Option {
	return func(o *Outbox) error {
		if n <= 0 {
			return errors.New("outbox.WithCapacity: must be positive")
		}
		o.capacity = n
		return nil
	}
}

// WithMaxBytes bounds the content the outbox keeps (bodies, texts and
// headers, counted in bytes); the oldest messages are forgotten to stay
// under it, though the newest is always kept. Default DefaultMaxBytes.
func WithMaxBytes(n int) Option {
	return func(o *Outbox) error {
		if n <= 0 {
			return errors.New("outbox.WithMaxBytes: must be positive")
		}
		o.maxBytes = n
		return nil
	}
}

// WithBasePath sets the path the handler is mounted at, which its links
// and the page's script use. Default DefaultBasePath.
func WithBasePath(p string) Option {
	return func(o *Outbox) error {
		if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.ContainsAny(p, "?#\"'<> ") {
			return errors.New("outbox.WithBasePath: want a clean path such as /outbox")
		}
		o.base = p
		return nil
	}
}

// WithDevelopmentProviders names the providers (Envelope.Provider) whose
// messages reach no one: a log (provider/logprovider), memory
// (provider/memprovider), an in-process SMTP server (smtptest). The page
// reveals the one-time codes of their messages on a click. Every other
// message's codes, a real vendor's, are masked on the server and cannot
// be revealed on the page: its readers need not see live codes of real
// people. Default: none, so no code can be revealed until the providers
// are named; a message that falls over to a provider not named loses its
// reveal.
func WithDevelopmentProviders(names ...string) Option {
	return func(o *Outbox) error {
		for _, n := range names {
			if n == "" {
				return errors.New("outbox.WithDevelopmentProviders: empty provider name")
			}
			o.dev[n] = true
		}
		return nil
	}
}

// WithClock sets the clock that stamps messages; for tests. Default
// time.Now.
func WithClock(now func() time.Time) Option {
	return func(o *Outbox) error {
		if now == nil {
			return errors.New("outbox.WithClock: nil clock")
		}
		o.now = now
		return nil
	}
}

// Outbox keeps the latest messages and serves them; create one with New.
// It is safe for concurrent use.
type Outbox struct {
	capacity int
	maxBytes int
	base     string
	now      func() time.Time
	page     *pages
	// dev are the development providers (WithDevelopmentProviders).
	dev map[string]bool

	mu sync.Mutex
	// order holds the kept messages, oldest first; byID finds them.
	order []*entry
	byID  map[string]*entry
	bytes int
	// subs are the event streams to wake on a change; each channel has
	// room for one wake-up, so a slow page never blocks Observe.
	subs   map[chan struct{}]struct{}
	closed chan struct{}
}

// entry is a kept message and its size in the byte budget.
type entry struct {
	m    Message
	size int
}

// New returns an empty Outbox.
func New(opts ...Option) (*Outbox, error) {
	o := &Outbox{
		capacity: DefaultCapacity,
		maxBytes: DefaultMaxBytes,
		base:     DefaultBasePath,
		now:      time.Now,
		byID:     make(map[string]*entry),
		subs:     make(map[chan struct{}]struct{}),
		closed:   make(chan struct{}),
		dev:      make(map[string]bool),
	}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	p, err := newPages(o.base)
	if err != nil {
		return nil, err
	}
	o.page = p
	return o, nil
}

// Observe records the events of a Notifier (notify.WithObserver): an
// accepted message is added with its content, later events move its
// status and cost. Events of messages it does not hold are ignored.
func (o *Outbox) Observe(_ context.Context, e notify.Event) {
	if e.Type == record.StatePending {
		if e.Envelope != nil && e.Envelope.ID != "" {
			m := fromEnvelope(e.Envelope, o.now())
			m.Development = o.dev[m.Provider]
			o.add(m)
		}
		return
	}
	if e.Receipt == nil {
		return
	}
	o.mu.Lock()
	en, ok := o.byID[e.Receipt.MessageID]
	if ok {
		m := &en.m
		m.Status = statusOf(e.Type, m.Status)
		m.Cost = e.Receipt.Cost
		m.Provider = nonEmpty(e.Receipt.Provider, m.Provider)
		m.Development = m.Development && o.dev[m.Provider] // a real vendor had it too
		if e.Receipt.Error != "" {
			m.Error = e.Receipt.Error
		}
		m.UpdatedAt = o.now()
	}
	o.mu.Unlock()
	if ok {
		o.wake()
	}
}

// statusOf is the status an event moves a message to. A delivery report
// that arrives late never moves a read message back.
func statusOf(t record.State, was Status) Status {
	switch t {
	case record.StateSent:
		if was == StatusDelivered || was == StatusRead {
			return was
		}
		return StatusSent
	case record.StateFailed:
		return StatusFailed
	case record.StateUnknown:
		return StatusUnknown
	case record.StateDelivered:
		if was == StatusRead {
			return was
		}
		return StatusDelivered
	case record.StateRead:
		return StatusRead
	}
	return was
}

func nonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// fromEnvelope copies what the page shows of env: the content structs are
// copied, their slices shared (an Envelope never changes once delivered).
// The declared code stays when AddMail replaces an e-mail's content with
// the mail as received, which it masks alike.
func fromEnvelope(env *notify.Envelope, now time.Time) Message {
	m := Message{ID: env.ID, Kind: env.Kind, To: env.To, Provider: env.Provider,
		Status: StatusSending, Price: env.Price, Cost: env.Price,
		CreatedAt: now, UpdatedAt: now, OTP: mask.Declared(env), MaskedDigits: env.CarriesOTP}
	if env.Account != nil {
		m.Account = env.Account.ID
	}
	switch {
	case sms.MessageOf(env) != nil:
		s := *sms.MessageOf(env)
		m.SMS = &s
	case chat.MessageOf(env) != nil:
		c := *chat.MessageOf(env)
		if c.Template != nil {
			t := *c.Template
			c.Template = &t
		}
		if c.Media != nil {
			md := *c.Media
			c.Media = &md
		}
		m.Chat = &c
	case email.MessageOf(env) != nil:
		e := email.MessageOf(env)
		m.Email = &Mail{Subject: e.Subject, FromName: e.FromName, ReplyTo: e.ReplyTo, HTML: e.HTML, Text: e.Text,
			Cc: e.Cc, Bcc: e.Bcc}
		for _, a := range e.Attachments {
			pa := Attachment{FileName: a.FileName, ContentType: a.ContentType, Size: len(a.Data)}
			if u, err := url.Parse(a.URL); err == nil && a.URL != "" {
				pa.Source = u.Hostname()
			}
			m.Email.Attachments = append(m.Email.Attachments, pa)
		}
	case push.MessageOf(env) != nil:
		p := *push.MessageOf(env)
		p.Keys = push.Keys{}
		m.Push = &p
	}
	return m
}

// add keeps m as the newest message, replacing one of the same ID, and
// forgets the oldest ones beyond the capacity and the byte budget.
func (o *Outbox) add(m Message) {
	en := &entry{m: m, size: sizeOf(&m)}
	o.mu.Lock()
	if old, ok := o.byID[m.ID]; ok {
		o.remove(old)
	}
	o.order = append(o.order, en)
	o.byID[m.ID] = en
	o.bytes += en.size
	for len(o.order) > 1 && (len(o.order) > o.capacity || o.bytes > o.maxBytes) {
		o.remove(o.order[0])
	}
	o.mu.Unlock()
	o.wake()
}

// remove forgets en; o.mu is held. The oldest goes in constant time
// (the slice's array is reclaimed as append moves it); any other, only
// replaced by a message of the same ID, by a shift.
func (o *Outbox) remove(en *entry) {
	if len(o.order) > 0 && o.order[0] == en {
		o.order[0] = nil // not kept alive by the array
		o.order = o.order[1:]
	} else if i := slices.Index(o.order, en); i >= 0 {
		o.order = slices.Delete(o.order, i, i+1)
	}
	delete(o.byID, en.m.ID)
	o.bytes -= en.size
}

// sizeOf is m's weight in the byte budget: its texts, bodies and headers.
func sizeOf(m *Message) int {
	n := 256 + len(m.To) + len(m.Error)
	switch {
	case m.SMS != nil:
		n += len(m.SMS.Text)
	case m.Chat != nil:
		n += len(m.Chat.Text)
		if t := m.Chat.Template; t != nil {
			for _, p := range t.Params {
				n += len(p)
			}
			for k, v := range t.NamedParams {
				n += len(k) + len(v)
			}
		}
	case m.Email != nil:
		e := m.Email
		n += len(e.Subject) + len(e.HTML) + len(e.Text)
		for _, list := range [2][]string{e.Cc, e.Bcc} {
			for _, a := range list {
				n += len(a)
			}
		}
		for _, a := range e.Attachments {
			n += 64 + len(a.FileName) + len(a.ContentType) + len(a.Source)
		}
		for _, h := range e.Headers {
			n += len(h.Name) + len(h.Value)
		}
	case m.Push != nil:
		p := m.Push
		n += len(p.Title) + len(p.Body) + len(p.Link) + len(p.Image) + len(p.Urgency)
		for k, v := range p.Data {
			n += len(k) + len(v)
		}
	}
	return n
}

// Filter selects messages in Messages.
type Filter struct {
	// To keeps the messages whose recipient contains it, ignoring case.
	To string
	// Kind keeps the messages of that kind; empty keeps all.
	Kind notify.Kind
	// Limit bounds how many are returned; 0 means all.
	Limit int
}

// Messages returns snapshots of the kept messages that f selects, newest
// first.
func (o *Outbox) Messages(f Filter) []Message {
	to := strings.ToLower(f.To)
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []Message
	for i := len(o.order) - 1; i >= 0; i-- {
		m := &o.order[i].m
		if f.Kind != "" && m.Kind != f.Kind || to != "" && !strings.Contains(strings.ToLower(m.To), to) {
			continue
		}
		out = append(out, snapshot(m))
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
	}
	return out
}

// Message returns a snapshot of the message with the ID, if kept.
func (o *Outbox) Message(id string) (Message, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	en, ok := o.byID[id]
	if !ok {
		return Message{}, false
	}
	return snapshot(&en.m), true
}

// snapshot copies m so that later moves do not show through; the content
// it points to never changes once kept.
func snapshot(m *Message) Message { return *m }

// subscribe returns a channel woken after each change, and the function
// that ends the subscription.
func (o *Outbox) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	o.mu.Lock()
	o.subs[ch] = struct{}{}
	o.mu.Unlock()
	return ch, func() {
		o.mu.Lock()
		delete(o.subs, ch)
		o.mu.Unlock()
	}
}

// wake tells every subscriber that something changed, without blocking:
// one pending wake-up covers any number of changes.
func (o *Outbox) wake() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for ch := range o.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Close ends the event streams being served, so that an http.Server's
// Shutdown, which waits for them, can finish; the page's script
// reconnects when the server is back. Later requests for the stream are
// answered at once with no events. Close is idempotent; the outbox keeps
// recording.
func (o *Outbox) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	select {
	case <-o.closed:
	default:
		close(o.closed)
	}
}
