package cloudchat

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/record"
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

// templateOf builds the template object of t, or an InvalidArgument
// error naming the field and the rule. The vendor refuses parameter text
// with a line break, a tab or more than four spaces in a row (error 100 /
// 132018), so such values are refused here, before any request: the
// send is certainly not accepted, and the Notifier refunds its charge.
func templateOf(t *chat.Template) (*templateBody, error) {
	var fe record.FieldErrors
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
		if b.Index < 0 || b.Index >= chat.MaxTemplateButtons {
			fe.Addf(field, "cloudchat: the button index must be 0 to %d, not %d", chat.MaxTemplateButtons-1, b.Index)
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
	if err := notify.InvalidFields(fe); err != nil {
		return nil, err
	}
	return tb, nil
}

// header returns the header parameter of t, if it has one.
func header(t *chat.Template, fe *record.FieldErrors) (parameter, bool) {
	switch {
	case t.HeaderText != "" && t.HeaderURL != "":
		fe.Add("header_url", "cloudchat: a template has a text or a media header, not both")
		return parameter{}, false
	case t.HeaderText != "":
		if t.HeaderName != "" && !chat.ValidParamName(t.HeaderName) {
			fe.Addf("header_name", "cloudchat: a parameter name is lower-case letters, digits and '_', not %q", t.HeaderName)
		}
		checkParamText("header_text", t.HeaderText, chat.MaxHeaderText, fe)
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
func bodyParams(t *chat.Template, fe *record.FieldErrors) []parameter {
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
			if !chat.ValidParamName(k) {
				fe.Addf("variables", "cloudchat: a parameter name is lower-case letters, digits and '_', not %q", k)
			}
			checkParamText("variables."+k, t.NamedParams[k], chat.MaxParamText, fe)
			out[i] = parameter{Type: "text", Name: k, Text: t.NamedParams[k]}
		}
		return out
	}
	out := make([]parameter, len(t.Params))
	for i, v := range t.Params {
		checkParamText("variables."+strconv.Itoa(i+1), v, chat.MaxParamText, fe)
		out[i] = parameter{Type: "text", Text: v}
	}
	return out
}

// buttonParam returns the parameter of one button.
func buttonParam(b chat.Button, field string, fe *record.FieldErrors) (parameter, bool) {
	if rule := chat.ButtonValueRule(b); rule != "" {
		fe.Add(field, "cloudchat: the button "+rule)
		return parameter{}, false
	}
	switch b.Kind {
	case chat.ButtonQuickReply:
		return parameter{Type: "payload", Payload: b.Value}, true
	case chat.ButtonCopyCode:
		return parameter{Type: "coupon_code", CouponCode: b.Value}, true
	}
	return parameter{Type: "text", Text: b.Value}, true // a URL button's suffix
}

// checkParamText applies the vendor's rules for parameter text
// (chat.ParamTextRule).
func checkParamText(field, v string, max int, fe *record.FieldErrors) {
	if rule := chat.ParamTextRule(v, max); rule != "" {
		fe.Add(field, "cloudchat: a template parameter "+rule)
	}
}
