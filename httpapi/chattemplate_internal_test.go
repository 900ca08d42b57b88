package httpapi

import (
	"testing"
	"unicode/utf8"

	"github.com/notifykit/notify/channel/chat"
)

// FuzzDecodeChatTemplate: chat bodies with "template" decode without a
// panic into InvalidArgument errors, or into values that keep the rules
// the decoder promises.
func FuzzDecodeChatTemplate(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		`{"to":"9876543210","template_name":"t","template":{"named":{"first_name":"Asha"}}}`,
		`{"to":"9876543210","template_name":"t","template":{"header":{"text":"x","name":"n"},"buttons":[{"index":0,"type":"url","value":"v"}]}}`,
		`{"to":"9876543210","template_name":"t","template":{"buttons":[{"index":"1","type":"copy_code","value":12},null,{}]}}`,
		`{"to":"9876543210","template":{"named":[],"header":"x","buttons":{}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := decodeChat(body, "", Header{})
		checkDecodeErr(t, body, err)
		if err != nil {
			return
		}
		if r.TemplateName == "" && (len(r.NamedParams) > 0 || r.HeaderText != "" || len(r.Buttons) > 0) {
			t.Fatalf("template values without template_name: %+v", r)
		}
		for k, v := range r.NamedParams {
			if !chat.ValidParamName(k) || v == "" || utf8.RuneCountInString(v) > chat.MaxParamText {
				t.Fatalf("named parameter %q=%q passed", k, v)
			}
		}
		seen := map[int]bool{}
		for _, b := range r.Buttons {
			if b.Index < 0 || b.Index > 9 || seen[b.Index] || b.Value == "" || b.Kind == "" {
				t.Fatalf("button %+v passed", b)
			}
			seen[b.Index] = true
		}
	})
}
