package outbox

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/mask"
	"github.com/notifykit/notify/wallet"
)

//go:embed assets
var assets embed.FS

// keepAlive is how often an idle event stream gets a comment, so that
// proxies and browsers do not drop it.
const keepAlive = 25 * time.Second

// pages holds the parsed templates and the static assets.
type pages struct {
	base   string
	tmpl   *template.Template
	static http.Handler
}

func newPages(base string) (*pages, error) {
	funcs := template.FuncMap{
		"money":    func(m notify.Money) string { return wallet.Format(m) },
		"clock":    func(t time.Time) string { return t.Format("15:04:05") },
		"stamp":    func(t time.Time) string { return t.Format(time.RFC3339) },
		"segments": segments,
		"pair":     func(text string, m *Message) textOf { return textOf{text, m} },
		"header":   headerText,
		"named":    sortedParams,
		"add1":     func(i int) int { return i + 1 },
		"filename": mediaName,
		"shortTo":  shortTo,
		"device":   pushDevice,
		"ttl":      ttlText,
	}
	t, err := template.New("outbox").Funcs(funcs).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, err
	}
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	return &pages{base: base, tmpl: t,
		static: http.StripPrefix(base+"/assets/", http.FileServer(http.FS(sub)))}, nil
}

// view is what the page templates read.
type view struct {
	Base     string
	To       string
	Kind     string
	Kinds    []string
	Query    string
	Messages []*Message
	Selected *Message
}

// ServeHTTP serves the page and its parts under the base path (see the
// package doc); other paths are 404, methods other than GET and HEAD 405.
func (o *Outbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, o.base)
	switch {
	case !ok:
		http.NotFound(w, r)
	case rest == "" || rest == "/":
		o.render(w, r, "page")
	case rest == "/list":
		o.render(w, r, "list")
	case rest == "/events":
		o.events(w, r)
	case strings.HasPrefix(rest, "/mail/"):
		o.mailHTML(w, r, strings.TrimPrefix(rest, "/mail/"))
	case strings.HasPrefix(rest, "/assets/") && path.Clean(rest) == rest:
		w.Header().Set("X-Content-Type-Options", "nosniff")
		o.page.static.ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

// render writes the page, or its list alone, for the request's filter.
func (o *Outbox) render(w http.ResponseWriter, r *http.Request, name string) {
	q := r.URL.Query()
	v := view{Base: o.base, To: q.Get("to"), Kind: q.Get("kind"),
		Kinds: []string{string(sms.Kind), string(email.Kind), string(chat.Kind), string(push.Kind)}}
	keep := url.Values{}
	for _, k := range []string{"to", "kind"} {
		if q.Get(k) != "" {
			keep.Set(k, q.Get(k))
		}
	}
	v.Query = keep.Encode()
	for _, m := range o.Messages(Filter{To: v.To, Kind: notify.Kind(v.Kind)}) {
		v.Messages = append(v.Messages, &m)
	}
	if id := q.Get("id"); id != "" {
		if m, ok := o.Message(id); ok {
			v.Selected = &m
		}
	}
	var buf bytes.Buffer
	if err := o.page.tmpl.ExecuteTemplate(&buf, name, &v); err != nil {
		http.Error(w, "outbox: rendering failed", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	// The page runs only its own script; e-mail HTML lives in a frame of
	// its own, served by mailHTML.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; frame-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	_, _ = w.Write(buf.Bytes())
}

// mailHTML serves an e-mail's HTML part for the page's iframe, codes
// masked unless ?reveal=1 asks for them and the message went through
// development providers alone (Message.Development). The frame is sandboxed without scripts by the
// page and by this answer's policy, so mail HTML cannot run code or reach
// the page; it may load images, as a mail client would.
func (o *Outbox) mailHTML(w http.ResponseWriter, r *http.Request, id string) {
	m, ok := o.Message(id)
	if !ok || m.Email == nil || m.Email.HTML == "" {
		http.NotFound(w, r)
		return
	}
	body := m.Email.HTML
	switch {
	case !m.Development:
		// A real vendor's: every code masked, in markup as well (a link
		// may carry one), at the cost of a colour that looks like one.
		body = mask.Replace(body, m.OTP, m.MaskedDigits, codeMask)
	case r.URL.Query().Get("reveal") != "1":
		body = maskHTML(body, &m)
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; img-src https: http: data:; style-src 'unsafe-inline' https:; "+
		"font-src https: data:; frame-ancestors 'self'; base-uri 'none'; form-action 'none'; "+
		"sandbox allow-same-origin allow-popups allow-popups-to-escape-sandbox")
	_, _ = w.Write([]byte(body))
}

// events streams "change" events, one after any number of changes, until
// the client leaves or Close is called.
func (o *Outbox) events(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	select {
	case <-o.closed:
		w.WriteHeader(http.StatusNoContent) // EventSource does not reconnect after a 204
		return
	default:
	}
	changed, stop := o.subscribe()
	defer stop()
	// The client retries 2s after a drop; "ready" lets it catch up on what
	// changed while it was away.
	if _, err := w.Write([]byte("retry: 2000\nevent: ready\ndata: {}\n\n")); err != nil || rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		var msg string
		select {
		case <-r.Context().Done():
			return
		case <-o.closed:
			return
		case <-changed:
			msg = "event: change\ndata: {}\n\n"
		case <-tick.C:
			msg = ": keep-alive\n\n"
		}
		if _, err := w.Write([]byte(msg)); err != nil || rc.Flush() != nil {
			return
		}
	}
}

// textOf is a text to show with the message it belongs to, whose codes
// it masks.
type textOf struct {
	Text string
	M    *Message
}

// headerText is a received header field's value to show with m's codes
// masked: the subject as the parts are; any other field only where it
// holds the declared code, since the digits of a Date or a Message-ID are
// no codes.
func headerText(h Header, m *Message) textOf {
	if strings.EqualFold(h.Name, "Subject") {
		return textOf{h.Value, m}
	}
	return textOf{h.Value, &Message{OTP: m.OTP}}
}

// param is a template variable as the page shows it.
type param struct{ Name, Value string }

// sortedParams returns a template's variables: positional ones as {{1}},
// {{2}}, ..., named ones by name.
func sortedParams(t *chat.Template) []param {
	var out []param
	for i, p := range t.Params {
		out = append(out, param{"{{" + strconv.Itoa(i+1) + "}}", p})
	}
	names := make([]string, 0, len(t.NamedParams))
	for k := range t.NamedParams {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out = append(out, param{"{{" + k + "}}", t.NamedParams[k]})
	}
	return out
}

// mediaName is the file name of a chat file: its own, else the URL's last
// path segment.
func mediaName(m *chat.Media) string {
	if m.FileName != "" {
		return m.FileName
	}
	if u, err := url.Parse(m.URL); err == nil && path.Base(u.Path) != "/" && path.Base(u.Path) != "." {
		return path.Base(u.Path)
	}
	return m.URL
}

// shortTo is a message's recipient as the list shows it: as it is, but
// for a push's, which may run to kilobytes: a Web Push endpoint as its
// host and the end of its path, an FCM token as its start and end. The
// list's entry carries the whole recipient in its title, and the
// message's page shows it whole.
func shortTo(m *Message) string {
	if m.Push == nil {
		return m.To
	}
	const head, tail = 12, 8
	if u, err := url.Parse(m.To); err == nil && u.Scheme == "https" && u.Host != "" {
		p := strings.TrimSuffix(u.EscapedPath(), "/")
		if len(p) <= tail+1 {
			return u.Host + p
		}
		return u.Host + "/…" + p[len(p)-tail:]
	}
	if len(m.To) <= head+tail+1 {
		return m.To
	}
	return m.To[:head] + "…" + m.To[len(m.To)-tail:]
}

// pushDevice says what a push's recipient is: a Web Push subscription
// (with its push service's host) or an FCM registration token.
func pushDevice(m *Message) string {
	if u, err := url.Parse(m.To); err == nil && u.Scheme == "https" && u.Host != "" {
		return "Web Push subscription, push service " + u.Hostname()
	}
	return "FCM registration token"
}

// ttlText is a push's TTL as the page shows it: in the largest whole
// unit, with its seconds ("28 days (2419200 s)").
func ttlText(d time.Duration) string {
	s := int64(d / time.Second)
	unit := func(n int64, name string) string {
		if n != 1 {
			name += "s"
		}
		return strconv.FormatInt(n, 10) + " " + name + " (" + strconv.FormatInt(s, 10) + " s)"
	}
	switch {
	case s <= 0:
		return d.String()
	case s%86400 == 0:
		return unit(s/86400, "day")
	case s%3600 == 0:
		return unit(s/3600, "hour")
	case s%60 == 0:
		return unit(s/60, "minute")
	}
	return strconv.FormatInt(s, 10) + " s"
}
