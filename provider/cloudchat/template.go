package cloudchat

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
)

// The template object of a message body, as the vendor documents it
// (developers.facebook.com/docs/whatsapp/cloud-api/reference/messages,
// "template object", and .../guides/send-message-templates): components
// "header", "body" and one "button" component per button that takes a
// value.
type templateBody struct {
	Name       string      `json:"name"`
	Language   language    `json:"language"`
	Components []component `json:"components,omitempty"`
}

type language struct {
	Code string `json:"code"`
}

type component struct {
	Type string `json:"type"`
	// SubType and Index are for buttons; the vendor documents the index
	// as a string.
	SubType    string      `json:"sub_type,omitempty"`
	Index      string      `json:"index,omitempty"`
	Parameters []parameter `json:"parameters"`
}

type parameter struct {
	Type string `json:"type"`
	// Name is the parameter's name in a template approved with named
	// parameters.
	Name       string     `json:"parameter_name,omitempty"`
	Text       string     `json:"text,omitempty"`
	Payload    string     `json:"payload,omitempty"`
	CouponCode string     `json:"coupon_code,omitempty"`
	Image      *mediaBody `json:"image,omitempty"`
	Document   *mediaBody `json:"document,omitempty"`
	Video      *mediaBody `json:"video,omitempty"`
}

// Vendor bounds on template values.
const (
	maxButtons    = 10 // a template has at most 10 buttons
	maxParamRunes = 1024
	maxURLSuffix  = 2000
	maxPayload    = 128
	maxCoupon     = 15
)

// templateOf builds the template object of t, or an InvalidArgument
// error naming the field and the rule. The vendor refuses parameter text
// with a line break, a tab or more than four spaces in a row (error 100 /
// 132018), so such values are refused here, before any request: the
// send is certainly not accepted, and the Notifier refunds its charge.
func templateOf(t *chat.Template) (*templateBody, error) {
	var fe notify.FieldErrors
	if t.Name == "" {
		fe.Add("template_name", "cloudchat: a template needs a name")
	}
	lang := t.Language
	if lang == "" {
		lang = "en_US"
	}
	tb := &templateBody{Name: t.Name, Language: language{Code: lang}}
	if h, ok := header(t, &fe); ok {
		tb.Components = append(tb.Components, component{Type: "header", Parameters: []parameter{h}})
	}
	if body := bodyParams(t, &fe); len(body) > 0 {
		tb.Components = append(tb.Components, component{Type: "body", Parameters: body})
	}
	seen := make(map[int]bool, len(t.Buttons))
	for i, b := range t.Buttons {
		field := "buttons." + strconv.Itoa(i)
		if b.Index < 0 || b.Index >= maxButtons {
			fe.Addf(field, "cloudchat: the button index must be 0 to %d, not %d", maxButtons-1, b.Index)
			continue
		}
		if seen[b.Index] {
			fe.Addf(field, "cloudchat: button %d is given twice", b.Index)
			continue
		}
		seen[b.Index] = true
		p, ok := buttonParam(b, field, &fe)
		if !ok {
			continue
		}
		tb.Components = append(tb.Components, component{Type: "button", SubType: string(b.Kind),
			Index: strconv.Itoa(b.Index), Parameters: []parameter{p}})
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	return tb, nil
}

// header returns the header parameter of t, if it has one.
func header(t *chat.Template, fe *notify.FieldErrors) (parameter, bool) {
	switch {
	case t.HeaderText != "" && t.HeaderURL != "":
		fe.Add("header_url", "cloudchat: a template has a text or a media header, not both")
		return parameter{}, false
	case t.HeaderText != "":
		if t.HeaderName != "" && !paramName(t.HeaderName) {
			fe.Addf("header_name", "cloudchat: a parameter name is lower-case letters, digits and '_', not %q", t.HeaderName)
		}
		checkParamText("header_text", t.HeaderText, 60, fe) // the vendor's header limit
		return parameter{Type: "text", Name: t.HeaderName, Text: t.HeaderText}, true
	case t.HeaderURL != "":
		h := parameter{Type: string(t.HeaderKind)}
		link := &mediaBody{Link: t.HeaderURL}
		switch t.HeaderKind {
		case chat.MediaDocument:
			h.Document = link
		case chat.MediaVideo:
			h.Video = link
		case chat.MediaImage, "":
			h.Type, h.Image = string(chat.MediaImage), link
		default:
			fe.Add("header_url", fmt.Sprintf("cloudchat: unknown header kind %q", t.HeaderKind))
		}
		return h, true
	}
	return parameter{}, false
}

// bodyParams returns the body parameters of t: positional, or named in
// the order of their names (the vendor matches them by name; the order
// keeps requests reproducible).
func bodyParams(t *chat.Template, fe *notify.FieldErrors) []parameter {
	if len(t.Params) > 0 && len(t.NamedParams) > 0 {
		fe.Add("variables", "cloudchat: a template takes positional or named parameters, not both")
		return nil
	}
	if len(t.NamedParams) > 0 {
		names := make([]string, 0, len(t.NamedParams))
		for k := range t.NamedParams {
			names = append(names, k)
		}
		slices.Sort(names)
		out := make([]parameter, len(names))
		for i, k := range names {
			if !paramName(k) {
				fe.Addf("variables", "cloudchat: a parameter name is lower-case letters, digits and '_', not %q", k)
			}
			checkParamText("variables."+k, t.NamedParams[k], maxParamRunes, fe)
			out[i] = parameter{Type: "text", Name: k, Text: t.NamedParams[k]}
		}
		return out
	}
	out := make([]parameter, len(t.Params))
	for i, v := range t.Params {
		checkParamText("variables."+strconv.Itoa(i+1), v, maxParamRunes, fe)
		out[i] = parameter{Type: "text", Text: v}
	}
	return out
}

// buttonParam returns the parameter of one button.
func buttonParam(b chat.Button, field string, fe *notify.FieldErrors) (parameter, bool) {
	n := len([]rune(b.Value))
	switch b.Kind {
	case chat.ButtonURL:
		if b.Value == "" || n > maxURLSuffix || strings.ContainsAny(b.Value, " \t\r\n") {
			fe.Addf(field, "cloudchat: a URL button's value is 1 to %d characters without spaces", maxURLSuffix)
			return parameter{}, false
		}
		return parameter{Type: "text", Text: b.Value}, true
	case chat.ButtonQuickReply:
		if b.Value == "" || n > maxPayload {
			fe.Addf(field, "cloudchat: a quick-reply payload is 1 to %d characters", maxPayload)
			return parameter{}, false
		}
		return parameter{Type: "payload", Payload: b.Value}, true
	case chat.ButtonCopyCode:
		if b.Value == "" || n > maxCoupon {
			fe.Addf(field, "cloudchat: a copy-code button's code is 1 to %d characters", maxCoupon)
			return parameter{}, false
		}
		return parameter{Type: "coupon_code", CouponCode: b.Value}, true
	}
	fe.Addf(field, "cloudchat: the button kind must be url, quick_reply or copy_code, not %q", b.Kind)
	return parameter{}, false
}

// checkParamText applies the vendor's rules for parameter text.
func checkParamText(field, v string, max int, fe *notify.FieldErrors) {
	switch {
	case strings.TrimSpace(v) == "":
		fe.Add(field, "cloudchat: a template parameter must not be empty")
	case strings.ContainsAny(v, "\n\t\r"):
		fe.Add(field, "cloudchat: a template parameter must not hold line breaks or tabs")
	case strings.Contains(v, "     "):
		fe.Add(field, "cloudchat: a template parameter must not hold more than four spaces in a row")
	case len([]rune(v)) > max:
		fe.Addf(field, "cloudchat: a template parameter is at most %d characters", max)
	}
}

// paramName reports whether s is a valid named-parameter name.
func paramName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
