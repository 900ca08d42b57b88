package fcmtest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// kind is the JSON type a field of FCM's schema takes, as Google's
// proto-JSON parser reads it.
type kind int

const (
	kString    kind = iota
	kBool           // true or false
	kInt            // an integer, or a string of one
	kEnum           // one of the names in enum
	kDuration       // google.protobuf.Duration: "3.5s"
	kObject         // a message: the fields in fields, no others
	kStringMap      // map<string, string>
	kStruct         // google.protobuf.Struct: any JSON object
	kStrings        // repeated string
)

// field is one field of the schema.
type field struct {
	kind   kind
	typ    string           // the proto type Google's errors name
	fields map[string]field // kObject's fields, by their proto (snake_case) names
	enum   []string         // kEnum's names
}

func str() field { return field{kind: kString, typ: "TYPE_STRING"} }

func obj(typ string, fields map[string]field) field {
	return field{kind: kObject, typ: "type.googleapis.com/google.firebase.fcm.v1." + typ, fields: fields}
}

// sendSchema is the body of messages.send: {"validate_only", "message"},
// with the fields of FCM HTTP v1's Message that a sender may set. A name
// outside it is refused as Google refuses it.
var sendSchema = field{kind: kObject, typ: "SendMessageRequest", fields: map[string]field{
	"validate_only": {kind: kBool, typ: "TYPE_BOOL"},
	"message": obj("Message", map[string]field{
		"name":      str(),
		"token":     str(),
		"topic":     str(),
		"condition": str(),
		"data":      {kind: kStringMap, typ: "TYPE_STRING"},
		"notification": obj("Notification", map[string]field{
			"title": str(), "body": str(), "image": str(),
		}),
		"android": obj("AndroidConfig", map[string]field{
			"collapse_key":            str(),
			"priority":                {kind: kEnum, typ: "type.googleapis.com/google.firebase.fcm.v1.AndroidMessagePriority", enum: []string{"NORMAL", "HIGH"}},
			"ttl":                     {kind: kDuration, typ: "type.googleapis.com/google.protobuf.Duration"},
			"restricted_package_name": str(),
			"data":                    {kind: kStringMap, typ: "TYPE_STRING"},
			"direct_boot_ok":          {kind: kBool, typ: "TYPE_BOOL"},
			"fcm_options":             obj("AndroidFcmOptions", map[string]field{"analytics_label": str()}),
			"notification": obj("AndroidNotification", map[string]field{
				"title": str(), "body": str(), "icon": str(), "color": str(), "sound": str(), "tag": str(),
				"click_action": str(), "body_loc_key": str(), "body_loc_args": {kind: kStrings, typ: "TYPE_STRING"},
				"title_loc_key": str(), "title_loc_args": {kind: kStrings, typ: "TYPE_STRING"}, "channel_id": str(),
				"ticker": str(), "sticky": {kind: kBool, typ: "TYPE_BOOL"}, "event_time": str(),
				"local_only": {kind: kBool, typ: "TYPE_BOOL"}, "default_sound": {kind: kBool, typ: "TYPE_BOOL"},
				"notification_count": {kind: kInt, typ: "TYPE_INT32"}, "visibility": str(), "image": str(),
			}),
		}),
		"webpush": obj("WebpushConfig", map[string]field{
			"headers":      {kind: kStringMap, typ: "TYPE_STRING"},
			"data":         {kind: kStringMap, typ: "TYPE_STRING"},
			"notification": {kind: kStruct, typ: "type.googleapis.com/google.protobuf.Struct"},
			"fcm_options":  obj("WebpushFcmOptions", map[string]field{"link": str(), "analytics_label": str()}),
		}),
		"apns": obj("ApnsConfig", map[string]field{
			"headers":     {kind: kStringMap, typ: "TYPE_STRING"},
			"payload":     {kind: kStruct, typ: "type.googleapis.com/google.protobuf.Struct"},
			"fcm_options": obj("ApnsFcmOptions", map[string]field{"analytics_label": str(), "image": str()}),
		}),
		"fcm_options": obj("FcmOptions", map[string]field{"analytics_label": str()}),
	}),
}}

// violation is a field Google's parser refuses: the path of the field
// (or of the object holding an unknown name) and Google's text.
type violation struct{ field, text string }

var durationRule = regexp.MustCompile(`^-?[0-9]+(\.[0-9]{1,9})?s$`)

// check walks v, the value at path, against f, as Google's proto-JSON
// parser does: unknown names, wrong types and malformed values are
// refused; null is the field's default. Names are taken in snake_case or
// lowerCamelCase, as proto-JSON takes them.
func check(path string, v any, f field) *violation {
	if v == nil {
		return nil
	}
	bad := func() *violation {
		raw, _ := json.Marshal(v)
		return &violation{path, fmt.Sprintf("Invalid value at '%s' (%s), %s", path, f.typ, raw)}
	}
	switch f.kind {
	case kString:
		if _, ok := v.(string); !ok {
			return bad()
		}
	case kBool:
		if _, ok := v.(bool); !ok {
			return bad()
		}
	case kInt:
		switch n := v.(type) {
		case json.Number:
			if _, err := n.Int64(); err != nil {
				return bad()
			}
		case string:
			if _, err := json.Number(n).Int64(); err != nil {
				return bad()
			}
		default:
			return bad()
		}
	case kEnum:
		s, ok := v.(string)
		if !ok || !slices.Contains(f.enum, s) {
			return bad()
		}
	case kDuration:
		s, ok := v.(string)
		if !ok || !durationRule.MatchString(s) {
			return bad()
		}
	case kStruct:
		if _, ok := v.(map[string]any); !ok {
			return bad()
		}
	case kStrings:
		list, ok := v.([]any)
		if !ok {
			return bad()
		}
		for i, item := range list {
			if _, ok := item.(string); !ok {
				return check(fmt.Sprintf("%s[%d]", path, i), item, str())
			}
		}
	case kStringMap:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if _, ok := m[k].(string); !ok && m[k] != nil {
				return check(fmt.Sprintf("%s[%d].value", path, i), m[k], str())
			}
		}
	case kObject:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			sub, ok := f.fields[snake(k)]
			if !ok {
				at := ""
				if path != "" {
					at = " at '" + path + "'"
				}
				return &violation{path, fmt.Sprintf("Invalid JSON payload received. Unknown name %q%s: Cannot find field.", k, at)}
			}
			if vi := check(join(path, snake(k)), m[k], sub); vi != nil {
				return vi
			}
		}
	}
	return nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// snake returns a lowerCamelCase name in snake_case ("fcmOptions" to
// "fcm_options"); a snake_case name is returned as it is.
func snake(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// field returns m's field of the given proto name, spelt in snake_case or
// lowerCamelCase.
func get(m map[string]any, name string) any {
	if v, ok := m[name]; ok {
		return v
	}
	parts := strings.Split(name, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return m[strings.Join(parts, "")]
}
