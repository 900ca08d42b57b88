package httpapi_test

import (
	"reflect"
	"testing"

	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/internal/httpapienv"
)

// TestChatTemplateValues: "template" carries a template_name template's
// named parameters, header text and button values to the cloud provider.
func TestChatTemplateValues(t *testing.T) {
	e := httpapienv.New(t)
	body := `{"to":"9876543210","template_name":"order_update","language":"en",
		"template":{"named":{"first_name":"Asha","order_id":4711},"header":{"text":"Order 4711","name":"order_ref"},
		"buttons":[{"index":0,"type":"url","value":"o/4711"},{"index":1,"type":"quick_reply","value":"STOP"}]}}`
	r := e.Post(t, "/api/v1/messenger/send", body, map[string]string{"Idempotency-Key": "tpl-1"})
	if r.Status != 200 || r.Body["gateway"] != "cloud" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	sent := e.Cloud.Sent()
	if len(sent) != 1 {
		t.Fatalf("%d cloud messages, want 1", len(sent))
	}
	got := chat.MessageOf(sent[0]).Template
	want := &chat.Template{Name: "order_update", Language: "en", NamedParams: map[string]string{"first_name": "Asha", "order_id": "4711"},
		HeaderText: "Order 4711", HeaderName: "order_ref",
		Buttons: []chat.Button{{Kind: chat.ButtonURL, Index: 0, Value: "o/4711"}, {Kind: chat.ButtonQuickReply, Index: 1, Value: "STOP"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("template\n got %+v\nwant %+v", got, want)
	}
	// The key covers the values: the same key with another one is a conflict.
	other := `{"to":"9876543210","template_name":"order_update","language":"en",
		"template":{"named":{"first_name":"Ravi","order_id":4711},"header":{"text":"Order 4711","name":"order_ref"},
		"buttons":[{"index":0,"type":"url","value":"o/4711"},{"index":1,"type":"quick_reply","value":"STOP"}]}}`
	httpapienv.WantError(t, e.Post(t, "/api/v1/messenger/send", other, map[string]string{"Idempotency-Key": "tpl-1"}), 409, "conflict")
	again := e.Post(t, "/api/v1/send-messenger", body, map[string]string{"Idempotency-Key": "tpl-1"})
	if again.Status != 200 || again.Body["message_id"] != r.Body["message_id"] || e.Cloud.Len() != 1 {
		t.Fatalf("repeat: %d %s", again.Status, again.Raw)
	}
	// Positional variables work as before.
	if r := e.Post(t, "/api/v1/messenger/send", `{"to":"9876543210","template_name":"order_update","variables":["Asha","4711"]}`, nil); r.Status != 200 {
		t.Fatalf("variables: %d %s", r.Status, r.Raw)
	}
	if p := chat.MessageOf(e.Cloud.Sent()[1]).Template.Params; !reflect.DeepEqual(p, []string{"Asha", "4711"}) {
		t.Fatalf("params %v", p)
	}
}

func TestChatTemplateValuesRefused(t *testing.T) {
	e := httpapienv.New(t)
	const pre = `{"to":"9876543210","template_name":"order_update",`
	for _, c := range []struct {
		body   string
		fields []string
	}{
		{pre + `"template":[]}`, []string{"template"}},
		{pre + `"template":{"named":{"First":"x","ok":""},"extra":1}}`, []string{"template.named.First", "template.named.ok", "template.extra"}},
		{pre + `"template":{"named":{"a":"x\ty","b":"     five","c":{}}}}`, []string{"template.named.a", "template.named.b", "template.named.c"}},
		{pre + `"template":{"named":{"a":"x"}},"variables":["y"]}`, []string{"template.named", "variables"}},
		{pre + `"template":{"header":{"name":"x"}}}`, []string{"template.header.text"}},
		{pre + `"template":{"header":{"text":"` + string(make([]byte, 0)) + `0123456789012345678901234567890123456789012345678901234567890","name":"Bad Name","url":"x"}}}`,
			[]string{"template.header.text", "template.header.name", "template.header.url"}},
		{pre + `"header_url":"https://cdn.example.com/a.png","template":{"header":{"text":"x"}}}`, []string{"template.header"}},
		{pre + `"template":{"buttons":[{"index":0,"type":"url","value":"a"},{"index":0,"type":"link","value":"b"},` +
			`{"index":10,"type":"copy_code","value":"0123456789abcdef"},{"type":"url","value":"a b","x":1},null,7]}}`,
			[]string{"template.buttons.1.index", "template.buttons.1.type", "template.buttons.2.index", "template.buttons.2.value",
				"template.buttons.3.index", "template.buttons.3.value", "template.buttons.3.x", "template.buttons.4", "template.buttons.5"}},
		{pre + `"template":{"buttons":[{},{},{},{},{},{},{},{},{},{},{}]}}`, []string{"template.buttons"}},
		{`{"to":"9876543210","message":"hi","template":{"named":{"a":"x"}}}`, []string{"template"}},
		{pre + `"template":{"named":{"a":"x"},"named":{"a":"y"}}}`, []string{"template.named"}},
	} {
		before := e.Sent()
		r := e.Post(t, "/api/v1/messenger/send", c.body, nil)
		if r.Status != 400 || r.ErrCode() != "invalid_argument" {
			t.Errorf("%s: %d %s", c.body, r.Status, r.Raw)
			continue
		}
		f := r.ErrFields()
		for _, name := range c.fields {
			if f[name] == nil {
				t.Errorf("%s: no error on %q: %s", c.body, name, r.Raw)
			}
		}
		if len(f) != len(c.fields) {
			t.Errorf("%s: fields %v, want %v", c.body, f, c.fields)
		}
		wantNothingMoved(t, e, before, httpapienv.OpeningBal)
	}
}
