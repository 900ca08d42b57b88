package main

import (
	"encoding/json"
	"testing"
)

// TestGatewayNamedTemplate: a chat send with "template" reaches the cloud
// fake as the approved order_shipped template, its named parameters,
// header text and button values on the wire; the fake checks them against
// the approved template and takes the message. The same values with
// positional variables as well are refused before any charge.
func TestGatewayNamedTemplate(t *testing.T) {
	g, vendor, _ := reportingGateway(t, nil)
	before := g.balanceMinor(t)
	a := g.post(t, "/messenger/send", g.key, `{"to":"9000000001","template_name":"order_shipped",
		"template":{"named":{"customer_name":"Asha","order_id":"4711"},"header":{"text":"Order 4711","name":"order_ref"},
		"buttons":[{"index":0,"type":"url","value":"o/4711"},{"index":1,"type":"quick_reply","value":"STOP-4711"}]}}`)
	if a.status != 200 || a.body["status"] != "sent" || a.body["gateway"] != "cloud" {
		t.Fatalf("%d %s", a.status, a.raw)
	}
	acc := vendor.Accepted()
	if len(acc) != 1 {
		t.Fatalf("the vendor took %d messages, want 1", len(acc))
	}
	raw, _ := json.Marshal(acc[0].Body["template"])
	want := `{"components":[` +
		`{"parameters":[{"parameter_name":"order_ref","text":"Order 4711","type":"text"}],"type":"header"},` +
		`{"parameters":[{"parameter_name":"customer_name","text":"Asha","type":"text"},{"parameter_name":"order_id","text":"4711","type":"text"}],"type":"body"},` +
		`{"index":"0","parameters":[{"text":"o/4711","type":"text"}],"sub_type":"url","type":"button"},` +
		`{"index":"1","parameters":[{"payload":"STOP-4711","type":"payload"}],"sub_type":"quick_reply","type":"button"}],` +
		`"language":{"code":"en_US"},"name":"order_shipped"}`
	if string(raw) != want {
		t.Fatalf("template on the wire\n got %s\nwant %s", raw, want)
	}
	cost := int64(a.body["cost_minor"].(float64))
	if spent := before - g.balanceMinor(t); cost == 0 || spent != cost {
		t.Fatalf("the wallet paid %d, the answer says %d", spent, cost)
	}

	bad := g.post(t, "/messenger/send", g.key, `{"to":"9000000001","template_name":"order_shipped","variables":["x"],
		"template":{"named":{"customer_name":"Asha"},"buttons":[{"index":0,"type":"url","value":"a b"}]}}`)
	fields, _ := bad.body["error"].(map[string]any)["fields"].(map[string]any)
	if bad.status != 400 || fields["template.named"] == nil || fields["variables"] == nil || fields["template.buttons.0.value"] == nil {
		t.Fatalf("%d %s", bad.status, bad.raw)
	}
	if len(vendor.Accepted()) != 1 || before-g.balanceMinor(t) != cost {
		t.Fatal("a refused request reached the vendor or the wallet")
	}
}
