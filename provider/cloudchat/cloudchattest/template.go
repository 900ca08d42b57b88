package cloudchattest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Errors the vendor answers for template messages that do not fit the
// approved template. Texts as the vendor words them (its error code
// reference and answers quoted in its community forums).
func paramCount(where string, got, want int) Error {
	return Error{400, 132000, "(#132000) Number of parameters does not match the expected number of params",
		fmt.Sprintf("%s: number of localizable_params (%d) does not match the expected number of params (%d)", where, got, want)}
}

func formatMismatch(details string) Error {
	return Error{400, 132012, "(#132012) Parameter format does not match format in the created template", details}
}

func missingButton(index int, kind string) Error {
	return Error{400, 131008, "(#131008) Required parameter is missing",
		fmt.Sprintf("Button at index %d of type %s requires a parameter", index, strings.ToUpper(kind[:1])+kind[1:])}
}

// checkTemplate checks a template message's components against the
// approved template, as the vendor does.
func checkTemplate(tpl Template, comps []any) (Error, bool) {
	var body []map[string]any
	var head map[string]any
	buttons := map[int]map[string]any{}
	for _, c := range comps {
		cm, _ := c.(map[string]any)
		params, _ := cm["parameters"].([]any)
		switch cm["type"] {
		case "body":
			for _, p := range params {
				pm, _ := p.(map[string]any)
				body = append(body, pm)
			}
		case "header":
			if len(params) != 1 {
				return invalidParam("a header takes one parameter"), true
			}
			head, _ = params[0].(map[string]any)
		case "button":
			idx, err := strconv.Atoi(fmt.Sprint(cm["index"]))
			if err != nil || idx < 0 || idx > 9 {
				return invalidParam("button index must be 0 to 9"), true
			}
			kind, _ := cm["sub_type"].(string)
			if tpl.Buttons[idx] != kind {
				return formatMismatch(fmt.Sprintf("button at index %d is not of type %s", idx, kind)), true
			}
			if len(params) != 1 {
				return invalidParam("a button takes one parameter"), true
			}
			pm, _ := params[0].(map[string]any)
			buttons[idx] = pm
		default:
			return invalidParam("unknown component type"), true
		}
	}
	if e, bad := checkHeader(tpl, head); bad {
		return e, true
	}
	if e, bad := checkBody(tpl, body); bad {
		return e, true
	}
	for idx, kind := range tpl.Buttons {
		pm, ok := buttons[idx]
		if !ok {
			if kind == "quick_reply" {
				continue // the button's text is its payload
			}
			return missingButton(idx, kind), true
		}
		want := map[string]string{"url": "text", "quick_reply": "payload", "copy_code": "coupon_code"}[kind]
		if v, _ := pm[want].(string); pm["type"] != want || v == "" {
			return formatMismatch(fmt.Sprintf("button at index %d takes a %s parameter", idx, want)), true
		}
	}
	return Error{}, false
}

func checkHeader(tpl Template, head map[string]any) (Error, bool) {
	switch {
	case tpl.Header == "" && head != nil:
		return paramCount("header", 1, 0), true
	case tpl.Header == "":
		return Error{}, false
	case head == nil:
		return paramCount("header", 0, 1), true
	}
	kind, _ := head["type"].(string)
	if kind != tpl.Header {
		return formatMismatch(fmt.Sprintf("header: expected %s, got %s", tpl.Header, kind)), true
	}
	if kind == "text" {
		return checkText(head)
	}
	media, _ := head[kind].(map[string]any)
	if link, _ := media["link"].(string); !strings.HasPrefix(link, "https://") {
		return invalidParam("header media needs an https link"), true
	}
	return Error{}, false
}

func checkBody(tpl Template, body []map[string]any) (Error, bool) {
	want := tpl.Body
	if tpl.Named != nil {
		want = len(tpl.Named)
	}
	if len(body) != want {
		return paramCount("body", len(body), want), true
	}
	seen := map[string]bool{}
	for _, pm := range body {
		if pm["type"] != "text" {
			return formatMismatch("body parameters must be text"), true
		}
		name, named := pm["parameter_name"].(string)
		switch {
		case tpl.Named == nil && named:
			return formatMismatch("the template takes positional parameters, not parameter_name"), true
		case tpl.Named != nil && (!slices.Contains(tpl.Named, name) || seen[name]):
			return formatMismatch(fmt.Sprintf("body: unknown or repeated parameter_name %q", name)), true
		}
		seen[name] = true
		if e, bad := checkText(pm); bad {
			return e, true
		}
	}
	return Error{}, false
}

// checkText applies the vendor's rules for parameter text.
func checkText(pm map[string]any) (Error, bool) {
	text, _ := pm["text"].(string)
	if strings.TrimSpace(text) == "" || strings.ContainsAny(text, "\n\t") || strings.Contains(text, "     ") {
		return Error{400, 100, "(#100) Invalid parameter",
			"Param text cannot have new-line/tab characters or more than 4 consecutive spaces"}, true
	}
	return Error{}, false
}
