package httpapi

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/record"
)

// A chat send's body may carry "template" (beyond the spec): the values
// of a template_name template that positional variables cannot give,
// in one object whose keys are all optional:
//
//	"template": {"named": {"first_name": "Asha"},
//	             "header": {"text": "Order 4711", "name": "order_id"},
//	             "buttons": [{"index": 0, "type": "url", "value": "4711"}]}
//
// named are the body parameters of a template approved with named
// parameters (chat.Request.NamedParams), instead of "variables"; header
// fills a text header's variable (HeaderText, and HeaderName in a
// template with named parameters); buttons fill the template's buttons by
// index (chat.Button). Every value is checked here, by the cloud vendor's
// rules, before anything is charged; a bad one is named by its path:
// template.named.first_name, template.header.text,
// template.buttons.1.value. Unknown keys are refused at every level.

// templateKeys, headerKeys and buttonKeys are the keys of the template
// object and of its parts.
var (
	templateKeys = []string{"named", "header", "buttons"}
	headerKeys   = []string{"text", "name"}
	buttonKeys   = []string{"index", "type", "value"}
)

// maxNamedParams bounds the named parameters of one request; the values'
// own rules are the vendor's, written once in channel/chat
// (ParamTextRule, ValidParamName, ButtonValueRule).
const maxNamedParams = 100

// templateValues are the decoded "template" of a chat body.
type templateValues struct {
	named              map[string]string
	headerText, header string
	buttons            []chat.Button
}

// given reports whether v holds any value.
func (v *templateValues) given() bool {
	return len(v.named) > 0 || v.headerText != "" || v.header != "" || len(v.buttons) > 0
}

// decodeTemplate decodes the "template" of a chat body (raw, as sent),
// adding every bad field to fe.
func decodeTemplate(fe *record.FieldErrors, raw json.RawMessage) templateValues {
	var v templateValues
	obj, ok := objectOf(fe, "template", raw, templateKeys)
	if !ok {
		return v
	}
	if r, ok := obj["named"]; ok {
		v.named = decodeNamed(fe, r)
	}
	if r, ok := obj["header"]; ok {
		if h, ok := objectOf(fe, "template.header", r, headerKeys); ok {
			v.headerText = paramText(fe, "template.header.text", h["text"], chat.MaxHeaderText, true)
			v.header = stringOf(fe, "template.header.name", h["name"])
			if v.header != "" && !chat.ValidParamName(v.header) {
				fe.Add("template.header.name", "must be 1 to 64 lower-case letters, digits and '_'")
			}
		}
	}
	if r, ok := obj["buttons"]; ok {
		v.buttons = decodeButtons(fe, r)
	}
	return v
}

// objectOf decodes raw as a JSON object whose keys are among known,
// naming an unknown key as name.key (its known keys are still read). null
// is absent, and not an object is an error: ok false.
func objectOf(fe *record.FieldErrors, name string, raw json.RawMessage, known []string) (map[string]json.RawMessage, bool) {
	if isNull(raw) {
		return nil, false
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		fe.Add(name, "must be an object with "+strings.Join(known, ", "))
		return nil, false
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !slices.Contains(known, k) {
			fe.Add(name+"."+shortKey([]byte(k)), "is an unknown key; "+name+" takes "+strings.Join(known, ", "))
		}
	}
	return obj, true
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// stringOf reads a JSON string (or a whole number) at name; absent or null
// is "".
func stringOf(fe *record.FieldErrors, name string, raw json.RawMessage) string {
	if isNull(raw) {
		return ""
	}
	var v value
	_ = json.Unmarshal(raw, &v) // never fails on valid JSON
	return v.str(fe, name, true)
}

// paramText reads a template parameter's text and applies the vendor's
// rules (chat.ParamTextRule): it is required when required is set, and
// checked when given.
func paramText(fe *record.FieldErrors, name string, raw json.RawMessage, max int, required bool) string {
	given := !isNull(raw)
	s := stringOf(fe, name, raw)
	switch {
	case !given && required:
		fe.Add(name, "is required")
	case given:
		if rule := chat.ParamTextRule(s, max); rule != "" {
			fe.Add(name, rule)
		}
	}
	return s
}

// decodeNamed reads template.named: an object of parameter names to
// their text.
func decodeNamed(fe *record.FieldErrors, raw json.RawMessage) map[string]string {
	if isNull(raw) {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		fe.Add("template.named", `must be an object of parameter names to their text: {"first_name": "Asha"}`)
		return nil
	}
	if len(obj) > maxNamedParams {
		fe.Addf("template.named", "at most %d parameters, got %d", maxNamedParams, len(obj))
		return nil
	}
	named := make(map[string]string, len(obj))
	for k, r := range obj {
		name := "template.named." + shortKey([]byte(k))
		if !chat.ValidParamName(k) {
			fe.Add(name, "is not a parameter name: 1 to 64 lower-case letters, digits and '_'")
			continue
		}
		named[k] = paramText(fe, name, r, chat.MaxParamText, true)
	}
	return named
}

// decodeButtons reads template.buttons: an array of {index, type, value}.
func decodeButtons(fe *record.FieldErrors, raw json.RawMessage) []chat.Button {
	if isNull(raw) {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		fe.Add("template.buttons", `must be an array of buttons: [{"index": 0, "type": "url", "value": "4711"}]`)
		return nil
	}
	if len(items) > chat.MaxTemplateButtons {
		fe.Addf("template.buttons", "at most %d buttons, got %d", chat.MaxTemplateButtons, len(items))
		return nil
	}
	var out []chat.Button
	seen := map[int]int{}
	for i, item := range items {
		prefix := "template.buttons." + strconv.Itoa(i)
		obj, ok := objectOf(fe, prefix, item, buttonKeys)
		if !ok {
			if isNull(item) {
				fe.Add(prefix, "must be a button: index, type and value")
			}
			continue
		}
		b := chat.Button{Index: -1}
		switch idx := stringOf(fe, prefix+".index", obj["index"]); {
		case isNull(obj["index"]):
			fe.Add(prefix+".index", "is required: the button's position in the template, 0 to 9")
		case len(idx) != 1 || idx[0] < '0' || idx[0] > '9':
			fe.Add(prefix+".index", "must be a whole number from 0 to 9")
		default:
			b.Index = int(idx[0] - '0')
			if j, dup := seen[b.Index]; dup {
				fe.Addf(prefix+".index", "repeats template.buttons.%d.index", j)
			}
			seen[b.Index] = i
		}
		switch kind := stringOf(fe, prefix+".type", obj["type"]); chat.ButtonKind(kind) {
		case chat.ButtonURL, chat.ButtonQuickReply, chat.ButtonCopyCode:
			b.Kind = chat.ButtonKind(kind)
		case "":
			fe.Add(prefix+".type", "is required: url, quick_reply or copy_code")
		default:
			fe.Add(prefix+".type", "must be url, quick_reply or copy_code")
		}
		b.Value = stringOf(fe, prefix+".value", obj["value"])
		switch {
		case isNull(obj["value"]) || b.Value == "":
			fe.Add(prefix+".value", "is required: the URL's suffix, the quick reply's payload or the code")
		case b.Kind != "":
			if rule := chat.ButtonValueRule(b); rule != "" {
				fe.Add(prefix+".value", rule)
			}
		}
		out = append(out, b)
	}
	return out
}
