package chat_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"reflect"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/record"
)

// TestTemplateValues: a template_name request's named parameters, header
// text and button values reach the prepared Template as given; they need
// a template_name that is not the authentication template and exclude
// positional variables; and the fingerprint covers each of them.
func TestTemplateValues(t *testing.T) {
	r := newRig(t, nil)
	req := &chat.Request{To: "9876543210", TemplateName: "order_update",
		NamedParams: map[string]string{"first_name": "Asha"}, HeaderText: "Order 4711", HeaderName: "order_id",
		Buttons: []chat.Button{{Kind: chat.ButtonURL, Index: 0, Value: "4711"}}}
	env, err := r.ch.Prepare(context.Background(), account(""), req)
	if err != nil {
		t.Fatal(err)
	}
	tpl := chat.MessageOf(env).Template
	want := &chat.Template{Name: "order_update", Language: "en_US", NamedParams: req.NamedParams, HeaderText: "Order 4711",
		HeaderName: "order_id", Buttons: req.Buttons}
	if !reflect.DeepEqual(tpl, want) {
		t.Fatalf("template %+v, want %+v", tpl, want)
	}

	for _, c := range []struct {
		name  string
		req   chat.Request
		field string
	}{
		{"no template_name", chat.Request{To: "9876543210", Message: "hi", HeaderText: "x"}, "template_name"},
		{"the authentication template", chat.Request{To: "9876543210", TemplateName: "otp_code", OTP: "482915",
			Buttons: []chat.Button{{Kind: chat.ButtonURL, Value: "x"}}}, "template_name"},
		{"named and positional", chat.Request{To: "9876543210", TemplateName: "order_update",
			NamedParams: map[string]string{"a": "1"}, Variables: record.Vars{"1": "x"}}, "variables"},
	} {
		_, err := r.ch.Prepare(context.Background(), account(""), &c.req)
		var e *notify.Error
		if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument || len(e.Fields) != 1 || e.Fields[0].Field != c.field {
			t.Errorf("%s: %v, want InvalidArgument on %s", c.name, err, c.field)
		}
	}

	sum := func(r chat.Request) [32]byte {
		h := sha256.New()
		r.Fingerprint(h)
		return [32]byte(h.Sum(nil))
	}
	base := sum(*req)
	for name, edit := range map[string]func(*chat.Request){
		"named":       func(r *chat.Request) { r.NamedParams = map[string]string{"first_name": "Ravi"} },
		"header text": func(r *chat.Request) { r.HeaderText = "Order 4712" },
		"header name": func(r *chat.Request) { r.HeaderName = "order" },
		"button kind": func(r *chat.Request) { r.Buttons = []chat.Button{{Kind: chat.ButtonCopyCode, Value: "4711"}} },
		"button idx":  func(r *chat.Request) { r.Buttons = []chat.Button{{Kind: chat.ButtonURL, Index: 1, Value: "4711"}} },
		"button val":  func(r *chat.Request) { r.Buttons = []chat.Button{{Kind: chat.ButtonURL, Value: "4712"}} },
		"no buttons":  func(r *chat.Request) { r.Buttons = nil },
	} {
		c := *req
		edit(&c)
		if sum(c) == base {
			t.Errorf("the fingerprint does not cover the %s", name)
		}
	}
	// A request without template values keeps the fingerprint it had.
	plain := chat.Request{To: "9876543210", TemplateName: "order_update", Variables: record.Vars{"1": "x"}}
	withEmpty := plain
	withEmpty.NamedParams, withEmpty.Buttons = map[string]string{}, []chat.Button{}
	if sum(plain) != sum(withEmpty) {
		t.Error("empty template values change the fingerprint")
	}
}
