package adminkit

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/record"
)

// apiKeys matches the API keys of answers, which are random.
var apiKeys = regexp.MustCompile(`nk_[a-z2-7]+`)

// wantRaw checks an answer byte for byte, its API key written nk_X.
func wantRaw(t *testing.T, r *reply, status int, raw string) {
	t.Helper()
	if got := apiKeys.ReplaceAllString(r.raw, "nk_X"); r.status != status || got != raw+"\n" {
		t.Errorf("got %d %s\nwant %d %s", r.status, got, status, raw)
	}
}

const inr = `"currency":{"code":"INR","symbol":"₹","exponent":2}`

// TestAccountAnswersKeepTheirBytes: the SMS and chat fields of an account
// (vendor_id, primary_gateway, sender_ids, dlt_templates), which the
// account keeps in its channel settings, are read and answered byte for
// byte as they were when they were fields of the account, and stored as
// the channels' settings.
func (k kit) testAccountAnswersKeepTheirBytes(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newServer(t, b)
		ctx := context.Background()
		r := s.admin(t, "POST", "/admin/v1/accounts", `{"id":"acme","name":"Acme Ltd","vendor_id":"ACMEIN",
			"sender_ids":["ACMEIN","ACMEOT"],"primary_gateway":"qr","price_plan":"gold","opening_balance":"100.00",
			"dlt_templates":[{"id":"1107","entity_id":"1201","content":"Code {#var#} é <>&"},{"id":"1108","content":"Hi","message_id":"55"}]}`)
		acme := `"id":"acme","name":"Acme Ltd","vendor_id":"ACMEIN",` + inr + `,"primary_gateway":"qr","price_plan":"gold",` +
			`"sender_ids":["ACMEIN","ACMEOT"],"disabled":false,"dlt_templates":[{"id":"1107","entity_id":"1201",` +
			`"content":"Code {#var#} é \u003c\u003e\u0026"},{"id":"1108","entity_id":"","content":"Hi","message_id":"55"}],` +
			`"region":"IN","countries":["IN"]`
		wantRaw(t, r, 201, `{"success":true,"data":{`+acme+`,"balance":"100.00","balance_minor":10000,"api_key":"nk_X"}}`)
		wantRaw(t, s.admin(t, "GET", "/admin/v1/accounts/acme", ""), 200,
			`{"success":true,"data":{`+acme+`,"balance":"100.00","balance_minor":10000}}`)
		wantRaw(t, s.admin(t, "GET", "/admin/v1/accounts?limit=1", ""), 200,
			`{"success":true,"data":{"accounts":[{`+acme+`}]}}`)

		a, err := b.Store.Account(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		set, err := sms.SettingsOf(a)
		if err != nil || set.SenderID != "ACMEIN" || strings.Join(set.SenderIDs, ",") != "ACMEIN,ACMEOT" ||
			!reflect.DeepEqual(set.DLTTemplates, []sms.DLTTemplate{{ID: "1107", EntityID: "1201", Content: "Code {#var#} é <>&"},
				{ID: "1108", Content: "Hi", MessageID: "55"}}) {
			t.Errorf("stored SMS settings %+v, %v", set, err)
		}
		if c, err := chat.SettingsOf(a); err != nil || c.PrimaryGateway != chat.GatewayQR {
			t.Errorf("stored chat settings %+v, %v", c, err)
		}

		// A DLT template changed: the other SMS settings and the chat
		// settings stay.
		wantRaw(t, s.admin(t, "PUT", "/admin/v1/accounts/acme/dlt-templates/1107", `{"content":"Replaced"}`), 200,
			`{"success":true,"data":{"account":"acme","dlt_templates":[{"id":"1107","entity_id":"","content":"Replaced"},`+
				`{"id":"1108","entity_id":"","content":"Hi","message_id":"55"}]}}`)
		wantRaw(t, s.admin(t, "DELETE", "/admin/v1/accounts/acme/dlt-templates/1108", ""), 200,
			`{"success":true,"data":{"account":"acme","dlt_templates":[{"id":"1107","entity_id":"","content":"Replaced"}]}}`)
		wantRaw(t, s.admin(t, "POST", "/admin/v1/accounts/acme/disable", ""), 200,
			`{"success":true,"data":{"id":"acme","name":"Acme Ltd","vendor_id":"ACMEIN",`+inr+`,"primary_gateway":"qr",`+
				`"price_plan":"gold","sender_ids":["ACMEIN","ACMEOT"],"disabled":true,"dlt_templates":[{"id":"1107",`+
				`"entity_id":"","content":"Replaced"}],"region":"IN","countries":["IN"],"balance":"100.00","balance_minor":10000}}`)

		// An account made without SMS or chat fields has no settings and
		// answers them empty.
		wantRaw(t, s.admin(t, "POST", "/admin/v1/accounts", `{"id":"beta"}`), 201,
			`{"success":true,"data":{"id":"beta","name":"beta","vendor_id":"",`+inr+`,"primary_gateway":"","price_plan":"",`+
				`"sender_ids":[],"disabled":false,"dlt_templates":[],"region":"IN","countries":["IN"],"balance":"0.00","balance_minor":0,"api_key":"nk_X"}}`)
		if a, err := b.Store.Account(ctx, "beta"); err != nil || len(a.Settings) != 0 {
			t.Errorf("beta's settings: %v, %v", a, err)
		}
		wantRaw(t, s.admin(t, "GET", "/admin/v1/accounts/beta/dlt-templates", ""), 200,
			`{"success":true,"data":{"account":"beta","dlt_templates":[]}}`)
		wantRaw(t, s.admin(t, "PUT", "/admin/v1/accounts/beta/dlt-templates/77", `{"entity_id":"1","content":"Your code {#var#}"}`), 201,
			`{"success":true,"data":{"account":"beta","dlt_templates":[{"id":"77","entity_id":"1","content":"Your code {#var#}"}]}}`)
		wantRaw(t, s.admin(t, "DELETE", "/admin/v1/accounts/beta/dlt-templates/77", ""), 200,
			`{"success":true,"data":{"account":"beta","dlt_templates":[]}}`)
	})
}

// TestSettingsSetElsewhere: an account whose settings were written
// through the channels (sms.SetSettings, chat.SetSettings), not through
// the admin API, is answered with them; a change of its DLT templates
// keeps its other settings, of every kind, as they were.
func (k kit) testSettingsSetElsewhere(t *testing.T) {
	b := k.nb(t)
	admin := b.Store
	acct := &notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()}
	if err := sms.SetSettings(acct, sms.Settings{SenderID: "ACMEIN", SenderIDs: []string{"ACMEIN"},
		DLTTemplates: []sms.DLTTemplate{{ID: "1107", EntityID: "1201", Content: "Code {#var#}"}}}); err != nil {
		t.Fatal(err)
	}
	if err := chat.SetSettings(acct, chat.Settings{PrimaryGateway: chat.GatewayCloud}); err != nil {
		t.Fatal(err)
	}
	const mail = notify.Kind("email")
	acct.Settings[mail] = json.RawMessage(`{"from": "x@example.com"}`)
	if err := admin.CreateAccount(context.Background(), acct, "nk_acme", notify.Money{Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, b)
	wantRaw(t, s.admin(t, "GET", "/admin/v1/accounts/acme", ""), 200,
		`{"success":true,"data":{"id":"acme","name":"Acme","vendor_id":"ACMEIN",`+inr+`,"primary_gateway":"cloud",`+
			`"price_plan":"","sender_ids":["ACMEIN"],"disabled":false,"dlt_templates":[{"id":"1107","entity_id":"1201",`+
			`"content":"Code {#var#}"}],"region":"IN","countries":["IN"],"balance":"0.00","balance_minor":0}}`)
	want(t, s.admin(t, "PUT", "/admin/v1/accounts/acme/dlt-templates/1108", `{"content":"Hi"}`), 201, "")
	a, err := admin.Account(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	set, err := sms.SettingsOf(a)
	if err != nil || set.SenderID != "ACMEIN" || len(set.SenderIDs) != 1 || len(set.DLTTemplates) != 2 || set.DLTTemplates[1].ID != "1108" {
		t.Errorf("SMS settings after the PUT: %+v, %v", set, err)
	}
	for _, kind := range []notify.Kind{chat.Kind, mail} {
		if !sameJSON(a.Settings[kind], acct.Settings[kind]) {
			t.Errorf("%s settings changed: %s, was %s", kind, a.Settings[kind], acct.Settings[kind])
		}
	}
}

// TestUndecodableSettings: an account whose stored SMS or chat settings
// are not the JSON of the channel's Settings is the store's trouble: the
// answer is the store failure's (500 internal, a plain sentence with the
// request ID), the log has the details, and a change of its DLT
// templates stores nothing.
func (k kit) testUndecodableSettings(t *testing.T) {
	b := k.nb(t)
	admin := b.Store
	broken := map[string]map[notify.Kind]json.RawMessage{
		"smsbroken":  {sms.Kind: json.RawMessage(`{"sender_ids":"ACMEIN"}`)},
		"chatbroken": {chat.Kind: json.RawMessage(`{"primary_gateway":7}`)},
	}
	for id, settings := range broken {
		if err := admin.CreateAccount(context.Background(), &notify.Account{ID: id, Currency: record.INR(), Settings: settings}, "nk_"+id,
			notify.Money{Currency: record.INR()}); err != nil {
			t.Fatal(err)
		}
	}
	s := newServer(t, b)
	internal := func(what string, r *reply) {
		t.Helper()
		want(t, r, 500, "internal")
		wantPlain(t, what, r, "decode", "unmarshal", "sender_ids\":", "sms:", "chat:")
		if logs := s.logs.String(); !strings.Contains(logs, "do not decode") || !strings.Contains(logs, r.header.Get("X-Request-ID")) {
			t.Errorf("%s: the log lacks the details or the request ID:\n%s", what, logs)
		}
	}
	internal("list", s.admin(t, "GET", "/admin/v1/accounts", ""))
	for id := range broken {
		internal("GET "+id, s.admin(t, "GET", "/admin/v1/accounts/"+id, ""))
	}
	const dlt = "/admin/v1/accounts/smsbroken/dlt-templates"
	internal("GET dlt", s.admin(t, "GET", dlt, ""))
	internal("PUT dlt", s.admin(t, "PUT", dlt+"/1107", `{"content":"Code {#var#}"}`))
	internal("DELETE dlt", s.admin(t, "DELETE", dlt+"/1107", ""))
	// Disabling changes no settings: it is made, though the answer, the
	// account, cannot be written.
	internal("disable", s.admin(t, "POST", "/admin/v1/accounts/smsbroken/disable", ""))
	a, err := admin.Account(context.Background(), "smsbroken")
	if err != nil || !a.Disabled || len(a.Settings) != 1 || !sameJSON(a.Settings[sms.Kind], []byte(`{"sender_ids":"ACMEIN"}`)) {
		t.Errorf("smsbroken after the changes: %+v, %v", a, err)
	}
	// The DLT templates need only the SMS settings.
	wantRaw(t, s.admin(t, "GET", "/admin/v1/accounts/chatbroken/dlt-templates", ""), 200,
		`{"success":true,"data":{"account":"chatbroken","dlt_templates":[]}}`)
}

// sameJSON reports whether a and b are the same JSON value: a store keeps
// an account's settings as JSON and may re-encode them (record.Account).
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
