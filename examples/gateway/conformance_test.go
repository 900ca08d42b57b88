package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
)

// TestGatewayDLTRoute: by default the dlt route takes the client's
// operator-registered template and entity IDs, registered on the demo
// account or not, as the API documents it, and the message reaches the
// provider with them; NOTIFY_DLT=strict refuses a template the account
// has not registered, before any charge.
func TestGatewayDLTRoute(t *testing.T) {
	const tpl, entity = "1107000000000000001", "1201000000000000002"
	body := `{"to":"9876543210","route":"dlt","sender_id":"ACMEIN","dlt_template_id":"` + tpl +
		`","dlt_entity_id":"` + entity + `","message":"Your parcel 4711 is out for delivery."}`

	g := start(t, map[string]string{"NOTIFY_BALANCE": "10"})
	a := g.post(t, "/sms", g.key, body)
	if a.status != 200 || a.body["success"] != true {
		t.Fatalf("unregistered template by default: %d %s", a.status, a.raw)
	}
	line := g.out.waitFor(t, "dlt_template_id="+tpl)
	if !strings.Contains(line, "dlt_entity_id="+entity) || !strings.Contains(line, "sms-log") {
		t.Errorf("the provider did not get the IDs: %s", line)
	}
	// Without the entity ID an unregistered template cannot be sent.
	a = g.post(t, "/sms", g.key, strings.Replace(body, `"dlt_entity_id":"`+entity+`",`, "", 1))
	if a.status != 400 || errCode(a) != "invalid_argument" {
		t.Errorf("unregistered template without its entity: %d %s", a.status, a.raw)
	}

	strict := start(t, map[string]string{"NOTIFY_BALANCE": "10", "NOTIFY_DLT": "strict"})
	a = strict.post(t, "/sms", strict.key, body)
	fields, _ := a.body["error"].(map[string]any)["fields"].(map[string]any)
	if a.status != 400 || errCode(a) != "invalid_argument" || fields["dlt_template_id"] == nil {
		t.Fatalf("NOTIFY_DLT=strict, unregistered template: %d %s", a.status, a.raw)
	}
	if got := strict.balanceMinor(t); got != 1000 {
		t.Errorf("the refusal moved the balance to %d", got)
	}
	// The registered template still goes, in either mode.
	registered := `{"to":"9876543210","route":"dlt","sender_id":"ACMEIN","dlt_template_id":"` + demoDLTTemplate +
		`","message":"Dear Asha, your order 4711 has shipped."}`
	if a := strict.post(t, "/sms", strict.key, registered); a.status != 200 {
		t.Errorf("NOTIFY_DLT=strict, registered template: %d %s", a.status, a.raw)
	}
}

// TestGatewaySMSEndpointURL: NOTIFY_SMS_URL set to the vendor's documented
// bulk SMS endpoint sends there, not to the endpoint's path twice; the
// base URL still works.
func TestGatewaySMSEndpointURL(t *testing.T) {
	vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key-1"})
	t.Cleanup(vendor.Close)
	target, _ := url.Parse(vendor.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	paths := make(chan string, 4)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths <- r.URL.Path
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)

	for _, smsURL := range []string{front.URL + "/dev/bulkV2", front.URL} {
		g := start(t, map[string]string{"NOTIFY_SMS_URL": smsURL, "NOTIFY_SMS_KEY": "vendor-key-1"})
		if a := g.post(t, "/sms", g.key, `{"to":"9876543210","message":"hi"}`); a.status != 200 {
			t.Fatalf("NOTIFY_SMS_URL=%s: %d %s", smsURL, a.status, a.raw)
		}
		if got := <-paths; got != "/dev/bulkV2" {
			t.Errorf("NOTIFY_SMS_URL=%s: the vendor saw %s, want /dev/bulkV2", smsURL, got)
		}
	}
	if vendor.Accepted() != 2 {
		t.Errorf("the vendor accepted %d messages, want 2", vendor.Accepted())
	}
}

// mediaDNS resolves intra.example.com to a private address, makes
// flaky.example.com fail as a DNS server in trouble would (SERVFAIL), and
// everything else to a public address.
type mediaDNS struct{}

func (mediaDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	switch host {
	case "intra.example.com":
		return []netip.Addr{netip.MustParseAddr("10.20.30.40")}, nil
	case "flaky.example.com":
		return nil, &net.DNSError{Err: "server misbehaving", Name: host, Server: "10.0.0.53:53", IsTemporary: true}
	}
	return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
}

// TestGatewayMediaURLRefusals: a media URL whose host resolves to a
// private address is a 400 that names the rule and not the address (the
// API must not tell clients what internal names resolve to); a resolver
// in trouble is a 503 the client may retry, not the client's fault.
// Neither is charged, and neither names the guard's package.
func TestGatewayMediaURLRefusals(t *testing.T) {
	g := startWith(t, map[string]string{"NOTIFY_BALANCE": "10"}, deps{resolver: mediaDNS{}})
	for _, tt := range []struct {
		host   string
		status int
		code   string
		want   string
	}{
		{"intra.example.com", 400, "invalid_argument", `host \"intra.example.com\" resolves to a private address`},
		{"flaky.example.com", 503, "unavailable", "try again later"},
	} {
		a := g.post(t, "/messenger/send", g.key,
			`{"to":"9876543210","message":"Your invoice","media_url":"https://`+tt.host+`/invoice.pdf?sig=s3cret","file_name":"Invoice.pdf"}`)
		if a.status != tt.status || errCode(a) != tt.code || !strings.Contains(a.raw, tt.want) {
			t.Errorf("%s: %d %s, want %d %s saying %s", tt.host, a.status, a.raw, tt.status, tt.code, tt.want)
		}
		for _, leak := range []string{"10.20.30.40", "10.0.0.53", "netguard", "s3cret"} {
			if strings.Contains(a.raw, leak) {
				t.Errorf("%s: the answer contains %q: %s", tt.host, leak, a.raw)
			}
		}
	}
	if got := g.balanceMinor(t); got != 1000 {
		t.Errorf("refused media moved the balance to %d", got)
	}
}

// TestGatewayDatabaseErrorWording: a database the gateway cannot reach is
// reported under the variable to fix, in the store's words but without
// its package prefix, and without the password.
func TestGatewayDatabaseErrorWording(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: the connection is refused
	env := map[string]string{"NOTIFY_DATABASE_URL": "postgres://u:secretpw@" + addr + "/db?sslmode=disable&connect_timeout=5"}
	err = runWith(context.Background(), func(k string) string { return env[k] }, &strings.Builder{}, deps{})
	if err == nil || !strings.HasPrefix(err.Error(), "NOTIFY_DATABASE_URL: ") ||
		strings.Contains(err.Error(), "pgstore") || strings.Contains(err.Error(), "secretpw") {
		t.Fatalf("unreachable database: %v", err)
	}
	if notify.CodeOf(err) != notify.CodeUnavailable {
		t.Errorf("unreachable database: code %s, want the store's unavailable kept in the chain", notify.CodeOf(err))
	}
}
