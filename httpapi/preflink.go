package httpapi

import (
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/prefpage"
	"github.com/notifykit/notify/record"
)

// WithPreferenceLinks serves POST BasePath+"/preferences/link", beyond the
// spec: a signed, expiring link to page (package prefpage), served at
// pageURL, where one recipient of the API key's account manages their own
// choices. An app puts it in its messages ("manage what you receive").
//
//	POST /preferences/link  {"to", "channels":["sms","chat"], "expires_in": 2592000}
//	                        -> {"success":true, "url":"https://…/preferences?t=…", "expires_at":"…"}
//
// to is a recipient as the preference routes take it (a number also in
// the national form of the account's region); channels are the columns the
// page shows, each a channel the Notifier sends on that takes to (400
// naming channels.N otherwise); expires_in is in seconds, default 30 days,
// at most prefpage.MaxTTL. The link's token shows neither the account nor
// the recipient. pageURL is the page's public URL, without a query
// ("https://acme.example/preferences"); empty: the request's own host,
// over HTTPS when the request came over TLS, at "/preferences". A nil page
// is an error.
func WithPreferenceLinks(page *prefpage.Page, pageURL string) Option {
	return func(h *Handler) error {
		if page == nil {
			return errors.New("WithPreferenceLinks: nil page")
		}
		if strings.ContainsAny(pageURL, "?#") {
			return errors.New("WithPreferenceLinks: the page's URL must have no query or fragment")
		}
		h.links, h.linkURL = page, pageURL
		return nil
	}
}

// defaultLinkTTL is how long a link is good for when the request does
// not say: a month, long enough for a message read late.
const defaultLinkTTL = 30 * 24 * time.Hour

// preferenceLinkBody is the JSON of POST /preferences/link.
type preferenceLinkBody struct {
	To        value   `json:"to"`
	Channels  []value `json:"channels"`
	ExpiresIn value   `json:"expires_in"`
}

var preferenceLinkKeys = bodyKeys(reflect.TypeFor[preferenceLinkBody]())

// preferenceLinkAnswer is its answer.
type preferenceLinkAnswer struct {
	Success   bool      `json:"success"`
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
}

// preferenceLink answers POST /preferences/link.
func (h *Handler) preferenceLink(x *exchange, r *http.Request, acct *notify.Account) {
	var w preferenceLinkBody
	if !h.readObject(x, r, &w, preferenceLinkKeys) {
		return
	}
	var fe record.FieldErrors
	var to string
	var kinds []notify.Kind
	if len(w.Channels) == 0 {
		fe.Add("channels", "is required: the channels the page shows, such as [\"sms\",\"chat\"]")
	}
	for i := range w.Channels {
		// Each channel's form of the recipient, read as the preference
		// routes read it; the page's token takes the first form, which
		// every channel of one recipient accepts (a number is E.164 on
		// SMS and chat alike).
		var cfe record.FieldErrors
		kind, key := h.preferenceRecipient(&cfe, acct, &w.Channels[i], &w.To)
		for _, f := range cfe {
			if f.Field == "channel" {
				f.Field = "channels." + strconv.Itoa(i)
			}
			if !hasField(fe, f.Field) {
				fe = append(fe, f)
			}
		}
		if key != "" && to == "" {
			to = key
		}
		kinds = append(kinds, kind)
	}
	ttl := defaultLinkTTL
	if s := w.ExpiresIn.str(&fe, "expires_in", true); s != "" && !fe.Has("expires_in") {
		secs, err := strconv.ParseInt(s, 10, 64)
		if err != nil || secs < 60 || secs > int64(prefpage.MaxTTL/time.Second) {
			fe.Add("expires_in", "must be a whole number of seconds from 60 to 7776000 (90 days)")
		} else {
			ttl = time.Duration(secs) * time.Second
		}
	}
	if refuseFields(x, r, fe) {
		return
	}
	expires := time.Now().Add(ttl).Truncate(time.Second)
	token, err := h.links.Token(prefpage.Grant{Account: acct.ID, To: to, Channels: kinds, Expires: expires})
	if err != nil {
		// The channels took the recipient one by one; what is left is a
		// channel named twice, or a recipient one took and another did not.
		writeErr(x, r, notify.InvalidField("channels", "must be distinct channels that all take the recipient"), nil)
		return
	}
	writeVerificationJSON(x, r, preferenceLinkAnswer{Success: true, URL: h.pageURL(r) + "?t=" + token, ExpiresAt: expires.UTC()})
}

// pageURL is the preference page's public URL: WithPreferenceLinks's, or
// the request's host's /preferences.
func (h *Handler) pageURL(r *http.Request) string {
	if h.linkURL != "" {
		return h.linkURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/preferences"
}
