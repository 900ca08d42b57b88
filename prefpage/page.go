package prefpage

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/nilness"
	"github.com/notifykit/notify/internal/wants"
	"github.com/notifykit/notify/store"
)

// Recipients puts a recipient of a channel in that channel's canonical
// form, the one key its choices are kept by. *notify.Notifier is one
// (notify.Notifier.Recipient): give the page the Notifier whose ledger
// keeps the preferences, so that a choice made on the page is found by
// the sends it must stop.
type Recipients interface {
	Recipient(kind notify.Kind, to string) (string, error)
}

// Config configures a Page. Secret, Preferences and Recipients are
// required.
type Config struct {
	// Secret makes and opens the links' tokens: at least MinSecretLen
	// random bytes, the same on every instance that serves the page,
	// kept out of the database. Changing it voids every link.
	Secret []byte
	// Preferences keeps the categories the page shows and the choices
	// it writes: the Notifier's ledger (every store.Ledger is one).
	Preferences store.Preferences
	// Recipients puts the link's recipient in each channel's form.
	Recipients Recipients
	// Title heads the page, as the recipient knows the sender ("Acme");
	// default "Your message preferences".
	Title string
	// Logger records the page's store failures (never a recipient);
	// default slog.Default().
	Logger *slog.Logger
	// Now is the clock; default time.Now. Tests set it.
	Now func() time.Time
}

// Page is the page a recipient opens from a link (Link) to choose which
// categories of an account's messages reach them on which channels. It
// is an http.Handler for one path, mounted where the links point:
//
//	GET  ?t=<token>   the form: a row per category, a box per channel,
//	                  checked where the recipient gets the messages now
//	POST t=<token>&…  the form sent back: each box shown is a choice,
//	                  written with store.Preferences.SetChoice; the form
//	                  again, saying it was saved
//
// A critical category is shown checked and cannot be changed. A link
// altered, forged or made with another secret is answered 403, an
// expired one 410, each with a page that says so and changes nothing.
// Answers are never cached and send no Referer, so the token goes no
// further than the page; the page runs no script. Safe for concurrent
// use.
type Page struct {
	sealer     *sealer
	prefs      store.Preferences
	recipients Recipients
	title      string
	log        *slog.Logger
	now        func() time.Time
}

// New returns a Page, or an error naming the first bad field of cfg.
func New(cfg Config) (*Page, error) {
	switch {
	case cfg.Preferences == nil:
		return nil, errors.New("prefpage: Config.Preferences is required")
	case nilness.Is(cfg.Recipients):
		return nil, errors.New("prefpage: Config.Recipients is required")
	}
	s, err := newSealer(cfg.Secret)
	if err != nil {
		return nil, fmt.Errorf("prefpage: Config.Secret: %w", err)
	}
	p := &Page{sealer: s, prefs: cfg.Preferences, recipients: cfg.Recipients, title: cfg.Title, log: cfg.Logger, now: cfg.Now}
	if p.title == "" {
		p.title = "Your message preferences"
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	if p.now == nil {
		p.now = time.Now
	}
	return p, nil
}

// Token returns the token of a link granting g, for a URL the page
// answers: "https://app.example/preferences?t=" + token. Each channel of
// g puts g.To in its form (an error naming the channel for one that
// refuses it); an empty account, no channel, a channel named twice, or
// an expiry not after now or beyond MaxTTL is an error. The token carries
// the grant sealed: it shows neither the account nor the recipient.
func (p *Page) Token(g Grant) (string, error) {
	now := p.now()
	switch {
	case g.Account == "":
		return "", errors.New("prefpage: a link needs an account")
	case len(g.Channels) == 0:
		return "", errors.New("prefpage: a link needs at least one channel")
	case !g.Expires.After(now):
		return "", errors.New("prefpage: a link must expire after now")
	case g.Expires.Sub(now) > MaxTTL:
		return "", fmt.Errorf("prefpage: a link may be good for %v at most", MaxTTL)
	}
	c := claim{Account: g.Account, Expires: g.Expires.Unix()}
	for i, kind := range g.Channels {
		if slices.Contains(g.Channels[:i], kind) {
			return "", fmt.Errorf("prefpage: the channel %q is named twice", kind)
		}
		to, err := p.recipients.Recipient(kind, g.To)
		if err != nil {
			return "", fmt.Errorf("prefpage: the %s channel: %w", kind, err)
		}
		c.To = append(c.To, recipient{Kind: kind, To: to})
	}
	return p.sealer.seal(c)
}

// maxForm bounds a POST's body: a form of a few hundred boxes.
const maxForm = 64 << 10

// ServeHTTP answers the page's GET and POST.
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	var token string
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		token = r.URL.Query().Get("t")
	case http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			p.refuse(w, http.StatusBadRequest, "This form could not be read. Open the link again.")
			return
		}
		token = r.PostForm.Get("t")
	default:
		h.Set("Allow", "GET, HEAD, POST")
		p.refuse(w, http.StatusMethodNotAllowed, "This page only shows and saves your choices.")
		return
	}
	c, err := p.sealer.open(token, p.now())
	switch {
	case errors.Is(err, ErrExpiredLink):
		p.refuse(w, http.StatusGone, "This link has expired. Ask for a new one from the messages you receive.")
		return
	case err != nil:
		p.refuse(w, http.StatusForbidden, "This link is not valid. Open it again from the message you received.")
		return
	}
	saved := false
	if r.Method == http.MethodPost {
		if err := p.save(r.Context(), c, r.PostForm); err != nil {
			p.failed(w, err)
			return
		}
		saved = true
	}
	v, err := p.view(r.Context(), c, token, saved)
	if err != nil {
		p.failed(w, err)
		return
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	_ = pageHTML.Execute(w, v) // a failed write is the client gone
}

// failed answers a store failure: 503, the cause logged without the
// recipient.
func (p *Page) failed(w http.ResponseWriter, err error) {
	p.log.Error("prefpage: the preferences could not be read or written", "error", err)
	p.refuse(w, http.StatusServiceUnavailable, "Your choices could not be shown or saved just now. Please try again in a minute.")
}

// refuse answers status with a page that says why.
func (p *Page) refuse(w http.ResponseWriter, status int, why string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = pageHTML.Execute(w, view{Title: p.title, Refusal: why})
}

// view is what the page shows.
type view struct {
	Title    string
	Refusal  string // set: the page says only this
	Token    string
	Channels []string
	Rows     []row
	Saved    bool
}

// row is one category: its label and a box per channel.
type row struct {
	Name, Label string
	Critical    bool
	Boxes       []box
}

// box is one category on one channel.
type box struct {
	Field   string // the form's field: "c:<category>:<channel>"
	Channel string
	Checked bool
}

// view reads the account's categories and the recipient's choices on
// each channel of c.
func (p *Page) view(ctx context.Context, c claim, token string, saved bool) (view, error) {
	cats, err := p.prefs.Categories(ctx, c.Account)
	if err != nil {
		return view{}, err
	}
	choices := make([]map[string]bool, len(c.To))
	for i, r := range c.To {
		if choices[i], err = p.prefs.Choices(ctx, c.Account, r.Kind, r.To); err != nil {
			return view{}, err
		}
	}
	v := view{Title: p.title, Token: token, Saved: saved}
	for _, r := range c.To {
		v.Channels = append(v.Channels, channelLabel(r.Kind))
	}
	for _, cat := range cats {
		rw := row{Name: cat.Name, Label: cat.Description, Critical: cat.Critical}
		if rw.Label == "" {
			rw.Label = cat.Name
		}
		for i, r := range c.To {
			allowed, chose := choices[i][cat.Name]
			rw.Boxes = append(rw.Boxes, box{Field: field(cat.Name, r.Kind), Channel: channelLabel(r.Kind),
				Checked: wants.Gets(cat, allowed, chose)})
		}
		v.Rows = append(v.Rows, rw)
	}
	return v, nil
}

// save writes a choice for every box the form showed: checked is
// allowed, unchecked declined. A category the form did not show (defined
// after the page was opened) and a critical one are left alone; one
// removed since is skipped.
func (p *Page) save(ctx context.Context, c claim, form map[string][]string) error {
	shown := form["shown"]
	cats, err := p.prefs.Categories(ctx, c.Account)
	if err != nil {
		return err
	}
	for _, cat := range cats {
		if cat.Critical {
			continue
		}
		for _, r := range c.To {
			f := field(cat.Name, r.Kind)
			if !slices.Contains(shown, f) {
				continue
			}
			allowed := len(form[f]) > 0
			err := p.prefs.SetChoice(ctx, c.Account, r.Kind, r.To, cat.Name, allowed)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
	}
	return nil
}

// field names the form's box of category on kind.
func field(category string, kind notify.Kind) string { return "c:" + category + ":" + string(kind) }

// channelLabel names a channel for people.
func channelLabel(kind notify.Kind) string {
	switch kind {
	case "sms":
		return "SMS"
	case "chat":
		return "Chat"
	case "email":
		return "E-mail"
	case "push":
		return "Push"
	}
	return string(kind)
}

var pageHTML = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>{{.Title}}</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}th,td{padding:.5rem;border-bottom:1px solid #ddd;text-align:left}
td.box,th.box{text-align:center}.note{color:#555;font-size:.9rem}#saved{background:#e6f4ea;padding:.5rem 1rem}
button{font:inherit;padding:.5rem 1.5rem;margin-top:1rem}
</style></head><body>
<h1>{{.Title}}</h1>
{{if .Refusal}}<p id="refusal">{{.Refusal}}</p>{{else}}
{{if .Saved}}<p id="saved" role="status">Your choices are saved.</p>{{end}}
<p>Choose which messages reach you, and how.</p>
<form method="post">
<input type="hidden" name="t" value="{{.Token}}">
<table><thead><tr><th>Messages</th>{{range .Channels}}<th class="box">{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr data-category="{{.Name}}"><td>{{.Label}}{{if .Critical}}<div class="note">Always sent: these keep your account safe.</div>{{end}}</td>
{{- $critical := .Critical}}{{range .Boxes}}<td class="box">{{if $critical}}<input type="checkbox" checked disabled aria-label="{{.Channel}}">{{else}}<input type="hidden" name="shown" value="{{.Field}}"><input type="checkbox" name="{{.Field}}" value="on" aria-label="{{.Channel}}"{{if .Checked}} checked{{end}}>{{end}}</td>{{end}}</tr>
{{else}}<tr><td colspan="9">There is nothing to choose yet.</td></tr>{{end}}
</tbody></table>
<button type="submit">Save my choices</button>
</form>{{end}}
</body></html>
`))
