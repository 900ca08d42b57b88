package main

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
)

// The vendors' settings of the configuration tests; the secrets are
// strings no error may repeat.
var (
	indianEnv = map[string]string{"NOTIFY_SMS_URL": "https://www.fast2sms.com", "NOTIFY_SMS_KEY": "sms-secret-9f1c"}
	twilioEnv = map[string]string{
		"NOTIFY_TWILIO_ACCOUNT_SID":  "AC0123456789abcdef0123456789abcdef",
		"NOTIFY_TWILIO_AUTH_TOKEN":   "twilio-secret-77e2",
		"NOTIFY_TWILIO_FROM":         "+15005550006",
		"NOTIFY_TWILIO_CALLBACK_URL": "https://notify.example.com/webhooks/twilio",
	}
	msg91Env = map[string]string{"NOTIFY_MSG91_AUTH_KEY": "msg91-secret-41d8"}
)

// envOf joins settings into one environment.
func envOf(sets ...map[string]string) func(string) string {
	env := map[string]string{}
	for _, s := range sets {
		maps.Copy(env, s)
	}
	return func(k string) string { return env[k] }
}

// noSecret fails the test when err repeats one of the test's secrets.
func noSecret(t *testing.T, name string, err error) {
	t.Helper()
	for _, s := range []string{"sms-secret", "twilio-secret", "msg91-secret", "key-secret", "hook-secret", "vonage-secret", "vonage-sig"} {
		if err != nil && strings.Contains(err.Error(), s) {
			t.Errorf("%s: %q repeats a secret", name, err)
		}
	}
}

// TestSMSRoutesSetting: NOTIFY_SMS_ROUTES is read rule by rule, in order;
// every mistake is an error naming the variable, the rule and the key.
func TestSMSRoutesSetting(t *testing.T) {
	for in, want := range map[string][]smsRule{
		"msg91: country=IN route=dlt,otp; smsgateway: country=IN; twilio": {
			{provider: "msg91", countries: []string{"IN"}, routes: []sms.Route{sms.RouteDLT, sms.RouteOTP}},
			{provider: "smsgateway", countries: []string{"IN"}},
			{provider: "twilio"},
		},
		"twilio: prefix=+1415,+1628 account=acme,demo.eu;\n twilio:;": {
			{provider: "twilio", prefixes: []string{"+1415", "+1628"}, accounts: []string{"acme", "demo.eu"}},
			{provider: "twilio"},
		},
		"  smsgateway:country=IN   route=sms  ": {{provider: "smsgateway", countries: []string{"IN"}, routes: []sms.Route{sms.RouteSMS}}},
	} {
		got, err := parseSMSRoutes(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if routesString(got) != routesString(want) || len(got) != len(want) {
			t.Errorf("%q: %s, want %s", in, routesString(got), routesString(want))
		}
	}
	for in, says := range map[string][]string{
		";":                                 {"no rule"},
		"twilio;;smsgateway: country=IN":    {"rule 2", "empty"},
		"sinch":                             {"rule 1", `"sinch" is not a provider`, "twilio or vonage"},
		"twilio; log":                       {"rule 2", `"log" is not a provider`},
		"twilio country=US":                 {"rule 1", "not a provider"},
		"twilio: country=us":                {"rule 1 (twilio)", "country", `"us"`},
		"twilio: country=USA":               {"rule 1 (twilio)", "country"},
		"twilio: country=*":                 {"rule 1 (twilio)", "country"},
		"twilio: country=US, GB":            {"rule 1 (twilio)", "country", "empty value"},
		"twilio: country=US,,GB":            {"rule 1 (twilio)", "country", "empty value"},
		"twilio: country=US,US":             {"rule 1 (twilio)", "country", "US is given twice"},
		"twilio: country=US country=GB":     {"rule 1 (twilio)", "country is given twice"},
		"twilio: country":                   {"rule 1 (twilio)", `"country"`, "key=value"},
		"twilio: region=US":                 {"rule 1 (twilio)", `"region" is not a key`},
		"twilio: prefix=1415":               {"rule 1 (twilio)", "prefix", `"1415"`},
		"twilio: prefix=+":                  {"rule 1 (twilio)", "prefix"},
		"twilio: prefix=+0123":              {"rule 1 (twilio)", "prefix"},
		"twilio: prefix=+1415x":             {"rule 1 (twilio)", "prefix"},
		"twilio: prefix=+1234567890123456":  {"rule 1 (twilio)", "prefix"},
		"twilio; msg91: route=flash":        {"rule 2 (msg91)", "route", `"flash"`},
		"twilio: account=acme account=demo": {"rule 1 (twilio)", "account is given twice"},
		"twilio: account=-acme":             {"rule 1 (twilio)", "account", `"-acme"`},
		"twilio: account=a/b":               {"rule 1 (twilio)", "account"},
	} {
		_, err := parseSMSRoutes(in)
		if err == nil {
			t.Errorf("%q: no error", in)
			continue
		}
		for _, s := range append([]string{"NOTIFY_SMS_ROUTES: "}, says...) {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%q: %q does not say %q", in, err, s)
			}
		}
	}
}

// TestSMSRoutesOfTheVendors: unset, the routes are the vendors' default
// order; set, each rule must name a configured vendor and give it only
// messages it can send.
func TestSMSRoutesOfTheVendors(t *testing.T) {
	otp := map[string]string{"NOTIFY_MSG91_OTP_TEMPLATE": "6808ca80d6fc054bef421352"}
	for _, tt := range []struct {
		name string
		env  func(string) string
		want string
	}{
		{"none: logged", envOf(), ""},
		{"the Indian vendor", envOf(indianEnv), "smsgateway: country=IN"},
		{"Twilio", envOf(twilioEnv), "twilio"},
		{"MSG91", envOf(msg91Env), "msg91: country=IN route=dlt"},
		{"all", envOf(indianEnv, twilioEnv, msg91Env), "msg91: country=IN route=dlt; smsgateway: country=IN; twilio"},
		{"all, with an OTP template", envOf(indianEnv, twilioEnv, msg91Env, otp), "msg91: country=IN route=dlt,otp; smsgateway: country=IN; twilio"},
		{"set", envOf(indianEnv, twilioEnv, map[string]string{"NOTIFY_SMS_ROUTES": "twilio: country=US; smsgateway: prefix=+9198,+9197; twilio"}),
			"twilio: country=US; smsgateway: prefix=+9198,+9197; twilio"},
		// Both international vendors: every message has the two, Twilio
		// first.
		{"Vonage", envOf(vonageEnv), "vonage"},
		{"Twilio and Vonage", envOf(twilioEnv, vonageEnv), "twilio; vonage"},
		{"all four", envOf(indianEnv, twilioEnv, vonageEnv, msg91Env), "msg91: country=IN route=dlt; smsgateway: country=IN; twilio; vonage"},
		{"the Indian vendor and Vonage", envOf(indianEnv, vonageEnv), "smsgateway: country=IN; vonage"},
		{"set, with Vonage", envOf(twilioEnv, vonageEnv, map[string]string{"NOTIFY_SMS_ROUTES": "vonage: country=GB,DE; twilio; vonage"}),
			"vonage: country=GB,DE; twilio; vonage"},
	} {
		c, err := loadConfig(tt.env)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got := routesString(c.smsRoutes); got != tt.want {
			t.Errorf("%s: routes %q, want %q", tt.name, got, tt.want)
		}
	}

	c, err := loadConfig(envOf(indianEnv, twilioEnv, map[string]string{"NOTIFY_SMS_ROUTES": "twilio"}))
	if err != nil || len(c.warnings) != 1 || !strings.Contains(c.warnings[0], "smsgateway") {
		t.Errorf("a configured vendor without a rule: %v, warnings %q", err, c.warnings)
	}
	c, err = loadConfig(envOf(twilioEnv, vonageEnv, map[string]string{"NOTIFY_SMS_ROUTES": "twilio"}))
	if err != nil || len(c.warnings) != 1 || !strings.Contains(c.warnings[0], "no rule for vonage") {
		t.Errorf("Vonage configured without a rule: %v, warnings %q", err, c.warnings)
	}

	for _, tt := range []struct {
		name string
		env  func(string) string
		says []string
	}{
		{"no vendor", envOf(map[string]string{"NOTIFY_SMS_ROUTES": "twilio"}), []string{"rule 1 (twilio)", "not configured", "NOTIFY_TWILIO_ACCOUNT_SID"}},
		{"MSG91 unconfigured", envOf(indianEnv, map[string]string{"NOTIFY_SMS_ROUTES": "smsgateway: country=IN; msg91: route=dlt"}),
			[]string{"rule 2 (msg91)", "NOTIFY_MSG91_AUTH_KEY"}},
		{"Vonage unconfigured", envOf(twilioEnv, map[string]string{"NOTIFY_SMS_ROUTES": "twilio; vonage"}),
			[]string{"rule 2 (vonage)", "vonage is not configured", "NOTIFY_VONAGE_API_KEY"}},
		{"MSG91 free text", envOf(msg91Env, map[string]string{"NOTIFY_SMS_ROUTES": "msg91: country=IN"}), []string{"rule 1 (msg91)", "route=dlt"}},
		{"MSG91 sms route", envOf(msg91Env, map[string]string{"NOTIFY_SMS_ROUTES": "msg91: route=dlt,sms"}), []string{"rule 1 (msg91)", "free text"}},
		{"MSG91 codes without a template", envOf(msg91Env, map[string]string{"NOTIFY_SMS_ROUTES": "msg91: route=otp"}),
			[]string{"rule 1 (msg91)", "NOTIFY_MSG91_OTP_TEMPLATE"}},
		{"the Indian vendor everywhere", envOf(indianEnv, twilioEnv, map[string]string{"NOTIFY_SMS_ROUTES": "smsgateway; twilio"}),
			[]string{"rule 1 (smsgateway)", "Indian numbers only"}},
		{"the Indian vendor abroad", envOf(indianEnv, map[string]string{"NOTIFY_SMS_ROUTES": "smsgateway: country=IN,US"}),
			[]string{"rule 1 (smsgateway)", "country=IN"}},
		{"the Indian vendor by another prefix", envOf(indianEnv, map[string]string{"NOTIFY_SMS_ROUTES": "smsgateway: prefix=+9198,+1415"}),
			[]string{"rule 1 (smsgateway)", "+91"}},
	} {
		_, err := loadConfig(tt.env)
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		for _, s := range append([]string{"NOTIFY_SMS_ROUTES: "}, tt.says...) {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %q does not say %q", tt.name, err, s)
			}
		}
		noSecret(t, tt.name, err)
	}
}

// TestCountriesSetting: NOTIFY_COUNTRIES is the demo account's allow
// list; a country it allows without a price is warned of.
func TestCountriesSetting(t *testing.T) {
	for in, want := range map[string]string{"": "", "*": "*", "IN,US": "IN,US", " IN , GB ": "IN,GB"} {
		c, err := loadConfig(envOf(map[string]string{"NOTIFY_COUNTRIES": in}))
		if err != nil || strings.Join(c.countries, ",") != want || c.countriesSet != (in != "") {
			t.Errorf("NOTIFY_COUNTRIES=%q: %v %q", in, err, c.countries)
		}
	}
	c, _ := loadConfig(envOf(map[string]string{"NOTIFY_COUNTRIES": "IN,US,GB", "NOTIFY_SMS_PRICES": "US=70"}))
	if len(c.warnings) != 1 || !strings.Contains(c.warnings[0], "GB") {
		t.Errorf("warnings %q, want one about GB's price", c.warnings)
	}
	for _, bad := range []string{"in", "IND", "IN,IN", "*,US", "IN,", "IN;US"} {
		_, err := loadConfig(envOf(map[string]string{"NOTIFY_COUNTRIES": bad}))
		if err == nil || !strings.HasPrefix(err.Error(), "NOTIFY_COUNTRIES: ") {
			t.Errorf("NOTIFY_COUNTRIES=%q: %v, want an error naming the variable", bad, err)
		}
	}
}

// TestBreakerSetting: the breakers are on by default, 5/30s.
func TestBreakerSetting(t *testing.T) {
	for in, want := range map[string]*notify.BreakerPolicy{
		"":        {Failures: 5, Cooldown: 30 * time.Second},
		"off":     nil,
		"OFF":     nil,
		"3/10s":   {Failures: 3, Cooldown: 10 * time.Second},
		"10 / 1m": {Failures: 10, Cooldown: time.Minute},
	} {
		c, err := loadConfig(envOf(map[string]string{"NOTIFY_BREAKER": in}))
		if err != nil || (c.breaker == nil) != (want == nil) || want != nil && (c.breaker.Failures != want.Failures || c.breaker.Cooldown != want.Cooldown) {
			t.Errorf("NOTIFY_BREAKER=%q: %v %+v, want %+v", in, err, c.breaker, want)
		}
	}
	for _, bad := range []string{"5", "0/30s", "5/0s", "5/500ms", "5/2h", "x/30s", "5/30", "on"} {
		_, err := loadConfig(envOf(map[string]string{"NOTIFY_BREAKER": bad}))
		if err == nil || !strings.HasPrefix(err.Error(), "NOTIFY_BREAKER: ") {
			t.Errorf("NOTIFY_BREAKER=%q: %v, want an error naming the variable", bad, err)
		}
	}
}

// TestTwilioSettings: Twilio needs its account, the auth token that signs
// its callbacks and a sender; an API key may call the API instead of the
// token. The callback's public URL is optional: without it a warning says
// that Twilio's messages stay sent. Errors name the variable, never a
// secret.
func TestTwilioSettings(t *testing.T) {
	c, err := loadConfig(envOf(twilioEnv, map[string]string{
		"NOTIFY_TWILIO_API_KEY_SID": "SK0123456789abcdef0123456789abcdef", "NOTIFY_TWILIO_API_KEY_SECRET": "key-secret-3a",
		"NOTIFY_TWILIO_CALLBACK_URL": "https://notify.example.com/webhooks/twilio#rc=3&rp=all"}))
	if err != nil || c.twilio == nil || c.twilio.apiKeySID == "" || c.twilio.authToken != "twilio-secret-77e2" || !c.realVendors() {
		t.Fatalf("%v %+v", err, c)
	}
	c, err = loadConfig(envOf(twilioEnv, map[string]string{"NOTIFY_TWILIO_CALLBACK_URL": "https://notify.example.com/hooks/tw"}))
	if err != nil || len(c.warnings) != 1 || !strings.Contains(c.warnings[0], "/webhooks/twilio") {
		t.Errorf("a callback URL of another path: %v, warnings %q", err, c.warnings)
	}
	without := func(k string) map[string]string {
		env := maps.Clone(twilioEnv)
		delete(env, k)
		return env
	}
	c, err = loadConfig(envOf(without("NOTIFY_TWILIO_CALLBACK_URL")))
	if err != nil || c.twilio == nil || c.twilio.callbackURL != "" || len(c.warnings) != 1 ||
		!strings.HasPrefix(c.warnings[0], "NOTIFY_TWILIO_CALLBACK_URL is unset: ") || !strings.Contains(c.warnings[0], "stay sent") {
		t.Errorf("no callback URL: %v, warnings %q", err, c.warnings)
	}
	with := func(k, v string) map[string]string {
		env := maps.Clone(twilioEnv)
		env[k] = v
		return env
	}
	for name, tt := range map[string]struct {
		env map[string]string
		say string
	}{
		"only the sender":     {map[string]string{"NOTIFY_TWILIO_FROM": "+15005550006"}, "NOTIFY_TWILIO_ACCOUNT_SID"},
		"no account":          {without("NOTIFY_TWILIO_ACCOUNT_SID"), "NOTIFY_TWILIO_ACCOUNT_SID"},
		"bad account":         {with("NOTIFY_TWILIO_ACCOUNT_SID", "AC123"), "NOTIFY_TWILIO_ACCOUNT_SID"},
		"no token":            {without("NOTIFY_TWILIO_AUTH_TOKEN"), "NOTIFY_TWILIO_AUTH_TOKEN"},
		"token with a space":  {with("NOTIFY_TWILIO_AUTH_TOKEN", "twilio-secret 1"), "NOTIFY_TWILIO_AUTH_TOKEN"},
		"key without secret":  {with("NOTIFY_TWILIO_API_KEY_SID", "SK0123456789abcdef0123456789abcdef"), "NOTIFY_TWILIO_API_KEY_SECRET"},
		"secret without key":  {with("NOTIFY_TWILIO_API_KEY_SECRET", "key-secret-3a"), "NOTIFY_TWILIO_API_KEY_SID"},
		"no sender":           {without("NOTIFY_TWILIO_FROM"), "NOTIFY_TWILIO_FROM or NOTIFY_TWILIO_MESSAGING_SERVICE_SID"},
		"bad sender":          {with("NOTIFY_TWILIO_FROM", "+1-415-555"), "NOTIFY_TWILIO_FROM"},
		"bad service":         {with("NOTIFY_TWILIO_MESSAGING_SERVICE_SID", "MGxyz"), "NOTIFY_TWILIO_MESSAGING_SERVICE_SID"},
		"API URL with a key":  {with("NOTIFY_TWILIO_URL", "https://AC01:twilio-secret-1@api.twilio.com"), "NOTIFY_TWILIO_URL"},
		"relative callback":   {with("NOTIFY_TWILIO_CALLBACK_URL", "/webhooks/twilio"), "NOTIFY_TWILIO_CALLBACK_URL"},
		"callback with query": {with("NOTIFY_TWILIO_CALLBACK_URL", "https://notify.example.com/webhooks/twilio?x=1"), "NOTIFY_TWILIO_CALLBACK_URL"},
		"callback underscore": {with("NOTIFY_TWILIO_CALLBACK_URL", "https://my_host.example.com/webhooks/twilio"), "NOTIFY_TWILIO_CALLBACK_URL"},
		"callback with login": {with("NOTIFY_TWILIO_CALLBACK_URL", "https://u:twilio-secret-2@notify.example.com/webhooks/twilio"), "NOTIFY_TWILIO_CALLBACK_URL"},
	} {
		_, err := loadConfig(envOf(tt.env))
		if err == nil || !strings.HasPrefix(err.Error(), "NOTIFY_") || !strings.Contains(err.Error(), tt.say) {
			t.Errorf("%s: %v, want an error naming %s", name, err, tt.say)
		}
		noSecret(t, name, err)
	}
}

// TestMSG91Settings: MSG91 needs its auth key; the OTP variable needs the
// OTP template, and the webhook's token must be long enough to be its
// authentication.
func TestMSG91Settings(t *testing.T) {
	c, err := loadConfig(envOf(msg91Env, map[string]string{"NOTIFY_MSG91_URL": "https://control.msg91.com/api/v5/flow/",
		"NOTIFY_MSG91_OTP_TEMPLATE": "6808ca80d6fc054bef421352", "NOTIFY_MSG91_OTP_VAR": "otp_code",
		"NOTIFY_MSG91_WEBHOOK_TOKEN": "hook-secret-0123456789"}))
	if err != nil || c.msg91 == nil || c.msg91.otpVar != "otp_code" || c.msg91.webhookToken == "" || !c.realVendors() {
		t.Fatalf("%v %+v", err, c)
	}
	for name, tt := range map[string]struct {
		env map[string]string
		say string
	}{
		"no key":              {map[string]string{"NOTIFY_MSG91_OTP_TEMPLATE": "6808ca80d6fc054bef421352"}, "NOTIFY_MSG91_AUTH_KEY"},
		"key with a space":    {map[string]string{"NOTIFY_MSG91_AUTH_KEY": "msg91-secret 1"}, "NOTIFY_MSG91_AUTH_KEY"},
		"bad template":        {map[string]string{"NOTIFY_MSG91_AUTH_KEY": "msg91-secret-1", "NOTIFY_MSG91_OTP_TEMPLATE": "otp template"}, "NOTIFY_MSG91_OTP_TEMPLATE"},
		"var without a tpl":   {map[string]string{"NOTIFY_MSG91_AUTH_KEY": "msg91-secret-1", "NOTIFY_MSG91_OTP_VAR": "OTP"}, "NOTIFY_MSG91_OTP_VAR"},
		"var mobiles":         {map[string]string{"NOTIFY_MSG91_AUTH_KEY": "msg91-secret-1", "NOTIFY_MSG91_OTP_TEMPLATE": "abc1", "NOTIFY_MSG91_OTP_VAR": "mobiles"}, "NOTIFY_MSG91_OTP_VAR"},
		"short token":         {map[string]string{"NOTIFY_MSG91_AUTH_KEY": "msg91-secret-1", "NOTIFY_MSG91_WEBHOOK_TOKEN": "hook-secret"}, "NOTIFY_MSG91_WEBHOOK_TOKEN"},
		"token with a slash":  {map[string]string{"NOTIFY_MSG91_AUTH_KEY": "msg91-secret-1", "NOTIFY_MSG91_WEBHOOK_TOKEN": "hook-secret/0123456789"}, "NOTIFY_MSG91_WEBHOOK_TOKEN"},
		"token without a key": {map[string]string{"NOTIFY_MSG91_WEBHOOK_TOKEN": "hook-secret-0123456789"}, "NOTIFY_MSG91_AUTH_KEY"},
		"URL with a query":    {map[string]string{"NOTIFY_MSG91_AUTH_KEY": "msg91-secret-1", "NOTIFY_MSG91_URL": "https://control.msg91.com/api/v5/flow?authkey=msg91-secret-1"}, "NOTIFY_MSG91_URL"},
	} {
		_, err := loadConfig(envOf(tt.env))
		if err == nil || !strings.HasPrefix(err.Error(), "NOTIFY_") || !strings.Contains(err.Error(), tt.say) {
			t.Errorf("%s: %v, want an error naming %s", name, err, tt.say)
		}
		noSecret(t, name, err)
	}
}
