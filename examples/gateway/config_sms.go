package main

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/provider/msg91"
	"github.com/notifykit/notify/provider/smsgateway"
	"github.com/notifykit/notify/provider/twilio"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/provider/vonage"
)

// The names of the SMS providers, as NOTIFY_SMS_ROUTES, the records, the
// receipts and the metrics name them: each provider's default name.
const (
	providerSMSGateway = smsgateway.DefaultName // NOTIFY_SMS_URL, NOTIFY_SMS_KEY
	providerMSG91      = msg91.DefaultName      // NOTIFY_MSG91_*
	providerTwilio     = twilio.DefaultName     // NOTIFY_TWILIO_*
	providerVonage     = vonage.DefaultName     // NOTIFY_VONAGE_*
)

// twilioConfig is Twilio's configuration, NOTIFY_TWILIO_*.
type twilioConfig struct {
	accountSID string // NOTIFY_TWILIO_ACCOUNT_SID
	// authToken is NOTIFY_TWILIO_AUTH_TOKEN: the password of the API
	// calls unless an API key is set, and always the key Twilio signs its
	// status callbacks with.
	authToken string
	// apiKeySID and apiKeySecret are NOTIFY_TWILIO_API_KEY_SID and
	// NOTIFY_TWILIO_API_KEY_SECRET: an API key the API calls use instead
	// of the auth token.
	apiKeySID    string
	apiKeySecret string
	from         string // NOTIFY_TWILIO_FROM
	service      string // NOTIFY_TWILIO_MESSAGING_SERVICE_SID
	baseURL      string // NOTIFY_TWILIO_URL; empty: twilio.DefaultBaseURL
	// callbackURL is NOTIFY_TWILIO_CALLBACK_URL: the public URL of the
	// gateway's /webhooks/twilio, given to Twilio as each message's
	// StatusCallback and the URL the callbacks' signatures are checked
	// against. Empty: Twilio is given none, and /webhooks/twilio is not
	// mounted (its messages stay sent).
	callbackURL string
}

// vonageConfig is Vonage's configuration, NOTIFY_VONAGE_*.
type vonageConfig struct {
	apiKey    string // NOTIFY_VONAGE_API_KEY
	apiSecret string // NOTIFY_VONAGE_API_SECRET
	from      string // NOTIFY_VONAGE_FROM
	baseURL   string // NOTIFY_VONAGE_URL; empty: vonage.DefaultBaseURL
	// callbackURL is NOTIFY_VONAGE_CALLBACK_URL: the public URL of the
	// gateway's /webhooks/vonage (/webhooks/vonage/<webhookToken> with a
	// token), given to Vonage as each message's callback. Empty: Vonage
	// sends the receipts to the account's default webhook, if any.
	callbackURL string
	// signatureSecret and signatureMethod are
	// NOTIFY_VONAGE_SIGNATURE_SECRET and NOTIFY_VONAGE_SIGNATURE_METHOD
	// (default md5hash): the API key's signature secret and the
	// dashboard's signature method, with which an account with signed
	// webhooks signs its receipts.
	signatureSecret string
	signatureMethod vonage.SignatureMethod
	// webhookToken is NOTIFY_VONAGE_WEBHOOK_TOKEN, the secret last
	// segment of the receipts' URL: the receiver's authentication for an
	// account without signed webhooks.
	webhookToken string
}

// receiver reports whether the gateway takes Vonage's receipts: it can
// tell them from forgeries, by their signature or the URL's token.
func (v *vonageConfig) receiver() bool { return v.signatureSecret != "" || v.webhookToken != "" }

// webhookPath is where the receiver is mounted, as the banner shows it.
func (v *vonageConfig) webhookPath() string {
	if v.webhookToken != "" {
		return webhookPrefix + providerVonage + "/$NOTIFY_VONAGE_WEBHOOK_TOKEN"
	}
	return webhookPrefix + providerVonage
}

// msg91Config is MSG91's configuration, NOTIFY_MSG91_*.
type msg91Config struct {
	authKey string // NOTIFY_MSG91_AUTH_KEY
	baseURL string // NOTIFY_MSG91_URL; empty: msg91.DefaultBaseURL
	// otpTemplate is NOTIFY_MSG91_OTP_TEMPLATE, the MSG91 template ID of
	// an approved OTP template, whose variable otpVar
	// (NOTIFY_MSG91_OTP_VAR, default OTP) takes the code. Empty: MSG91
	// sends no codes (the otp route is not routed to it).
	otpTemplate string
	otpVar      string
	// webhookToken is NOTIFY_MSG91_WEBHOOK_TOKEN, the secret last segment
	// of the delivery-report URL. Set: /webhooks/msg91/{token} is
	// mounted.
	webhookToken string
}

// smsRule is one rule of NOTIFY_SMS_ROUTES: the messages it matches go to
// provider (sms.ProviderRule, with the provider's name).
type smsRule struct {
	provider  string
	countries []string
	prefixes  []string
	routes    []sms.Route
	accounts  []string
}

// String writes the rule as NOTIFY_SMS_ROUTES takes it.
func (r smsRule) String() string {
	var parts []string
	add := func(key string, values []string) {
		if len(values) > 0 {
			parts = append(parts, key+"="+strings.Join(values, ","))
		}
	}
	add("country", r.countries)
	add("prefix", r.prefixes)
	routes := make([]string, len(r.routes))
	for i, rt := range r.routes {
		routes[i] = string(rt)
	}
	add("route", routes)
	add("account", r.accounts)
	if len(parts) == 0 || len(parts) == 1 && strings.TrimSpace(parts[0]) == "" {
		return r.provider
	}
	return r.provider + ": " + strings.Join(parts, " ")
}

// routesString writes rules as NOTIFY_SMS_ROUTES takes them.
func routesString(rules []smsRule) string {
	s := make([]string, len(rules))
	for i, r := range rules {
		s[i] = r.String()
	}
	return strings.Join(s, "; ")
}

// loadSMSOptions reads the SMS vendors beyond the Indian one (Twilio,
// Vonage and MSG91), the routing between them, the per-country prices,
// the demo account's allow list and the circuit breakers. It runs after
// the Indian vendor's settings (NOTIFY_SMS_URL) were read.
func (c *config) loadSMSOptions(get func(string) string) error {
	var err error
	if c.twilio, err = loadTwilio(get); err != nil {
		return err
	}
	if c.vonage, err = loadVonage(get); err != nil {
		return err
	}
	if c.msg91, err = loadMSG91(get); err != nil {
		return err
	}
	if c.twilio != nil {
		c.warnings = append(c.warnings, twilioCallback.warnings(c.twilio.callbackURL)...)
	}
	if c.vonage != nil {
		c.warnings = append(c.warnings, vonageCallback(c.vonage).warnings(c.vonage.callbackURL)...)
	}
	configured := c.smsVendors()
	if s := get("NOTIFY_SMS_ROUTES"); s != "" {
		if c.smsRoutes, err = parseSMSRoutes(s); err != nil {
			return err
		}
		if err := c.checkSMSRoutes(); err != nil {
			return err
		}
		for _, name := range configured {
			if !slices.ContainsFunc(c.smsRoutes, func(r smsRule) bool { return r.provider == name }) {
				c.warnings = append(c.warnings, fmt.Sprintf("NOTIFY_SMS_ROUTES names no rule for %s, which is configured: it sends nothing (its delivery reports are still taken)", name))
			}
		}
	} else {
		c.smsRoutes = c.defaultSMSRoutes()
	}
	c.region, c.regionSet = get("NOTIFY_REGION"), get("NOTIFY_REGION") != ""
	if !c.regionSet {
		c.region = phone.DefaultRegion
	} else if !phone.IsRegion(c.region) {
		return fmt.Errorf("NOTIFY_REGION: %q is not an ISO 3166-1 alpha-2 code in capitals, such as US", c.region)
	}
	if c.countries, err = parseCountries(get("NOTIFY_COUNTRIES")); err != nil {
		return err
	}
	c.countriesSet = get("NOTIFY_COUNTRIES") != ""
	for _, cc := range c.countries {
		switch {
		case c.prices.strict:
		case cc == phone.AnyCountry:
			c.warnings = append(c.warnings, "NOTIFY_COUNTRIES=* lets the demo account send anywhere: SMS to a country without prices of its own are charged the list's own prices (NOTIFY_PRICES_STRICT=on refuses them)")
		case cc != c.region && !c.prices.pricesCountry(cc):
			c.warnings = append(c.warnings, fmt.Sprintf("NOTIFY_COUNTRIES allows %s, which the %s prices do not name: its SMS are charged the list's own prices (NOTIFY_PRICES_STRICT=on refuses them)", cc, c.prices.currency.Code))
		}
	}
	if c.breaker, err = parseBreaker(get("NOTIFY_BREAKER")); err != nil {
		return err
	}
	return nil
}

// smsVendors lists the SMS vendors configured, by provider name; none: SMS
// are logged.
func (c *config) smsVendors() []string {
	var out []string
	if c.smsURL != "" {
		out = append(out, providerSMSGateway)
	}
	if c.msg91 != nil {
		out = append(out, providerMSG91)
	}
	if c.twilio != nil {
		out = append(out, providerTwilio)
	}
	if c.vonage != nil {
		out = append(out, providerVonage)
	}
	return out
}

// defaultSMSRoutes are the rules when NOTIFY_SMS_ROUTES is not set:
// Indian DLT templates (and codes, given an OTP template) through MSG91,
// Indian SMS through the Indian bulk vendor, and everything, Indian
// messages' fallback included, through the international vendors, as
// the last rules: Twilio, then Vonage, so that with both every message
// has the two in that order and fails over from one to the other. Nil
// when no vendor is configured: SMS are logged.
func (c *config) defaultSMSRoutes() []smsRule {
	var rules []smsRule
	if c.msg91 != nil {
		r := smsRule{provider: providerMSG91, countries: []string{phone.DefaultRegion}, routes: []sms.Route{sms.RouteDLT}}
		if c.msg91.otpTemplate != "" {
			r.routes = append(r.routes, sms.RouteOTP)
		}
		rules = append(rules, r)
	}
	if c.smsURL != "" {
		rules = append(rules, smsRule{provider: providerSMSGateway, countries: []string{phone.DefaultRegion}})
	}
	if c.twilio != nil {
		rules = append(rules, smsRule{provider: providerTwilio})
	}
	if c.vonage != nil {
		rules = append(rules, smsRule{provider: providerVonage})
	}
	return rules
}

// checkSMSRoutes checks NOTIFY_SMS_ROUTES against the vendors: each rule
// names a configured one, and gives it only messages it can send (so that
// none is refused for good where another provider could have sent it).
func (c *config) checkSMSRoutes() error {
	configured := c.smsVendors()
	for i, r := range c.smsRoutes {
		at := fmt.Sprintf("NOTIFY_SMS_ROUTES: rule %d (%s)", i+1, r.provider)
		if !slices.Contains(configured, r.provider) {
			return fmt.Errorf("%s: %s is not configured: set %s", at, r.provider, map[string]string{
				providerSMSGateway: "NOTIFY_SMS_URL and NOTIFY_SMS_KEY",
				providerMSG91:      "NOTIFY_MSG91_AUTH_KEY",
				providerTwilio:     "NOTIFY_TWILIO_ACCOUNT_SID and the other NOTIFY_TWILIO_* settings",
				providerVonage:     "NOTIFY_VONAGE_API_KEY and the other NOTIFY_VONAGE_* settings",
			}[r.provider])
		}
		switch r.provider {
		case providerSMSGateway:
			// The vendor takes 10-digit Indian numbers only.
			indian := slices.Equal(r.countries, []string{phone.DefaultRegion}) ||
				len(r.countries) == 0 && len(r.prefixes) > 0 && !slices.ContainsFunc(r.prefixes, func(p string) bool { return !strings.HasPrefix(p, "+91") })
			if !indian {
				return fmt.Errorf("%s: %s sends to Indian numbers only: give it country=IN (or prefixes that start +91)", at, r.provider)
			}
		case providerMSG91:
			// MSG91's flow API sends templates: no free text.
			if len(r.routes) == 0 || slices.Contains(r.routes, sms.RouteSMS) {
				return fmt.Errorf("%s: MSG91 sends DLT templates and codes, never free text (the sms route): give it route=dlt, route=otp or route=dlt,otp", at)
			}
			if slices.Contains(r.routes, sms.RouteOTP) && c.msg91.otpTemplate == "" {
				return fmt.Errorf("%s: route=otp through MSG91 needs its OTP template: set NOTIFY_MSG91_OTP_TEMPLATE", at)
			}
		}
	}
	return nil
}

// parseSMSRoutes reads NOTIFY_SMS_ROUTES: rules separated by ';', in
// order, each a provider name (smsgateway, msg91, twilio, vonage), optionally
// followed by ':' and space-separated key=value conditions whose values
// are comma-separated:
//
//	msg91: country=IN route=dlt,otp; smsgateway: country=IN; twilio; vonage
//
// Keys: country (ISO 3166-1 alpha-2 codes), prefix (the start of an E.164
// number, with its +), route (sms, otp, dlt), account (account IDs). A
// rule matches a message when it matches each key it has; a rule with
// none matches every message. Errors name the rule and the key.
func parseSMSRoutes(s string) ([]smsRule, error) {
	parts := strings.Split(s, ";")
	if strings.TrimSpace(parts[len(parts)-1]) == "" {
		parts = parts[:len(parts)-1] // a trailing ';'
	}
	if len(parts) == 0 || len(parts) == 1 && strings.TrimSpace(parts[0]) == "" {
		return nil, fmt.Errorf("NOTIFY_SMS_ROUTES: no rule; want rules such as %q", "msg91: country=IN route=dlt,otp; smsgateway: country=IN; twilio")
	}
	rules := make([]smsRule, 0, len(parts))
	for i, part := range parts {
		r, err := parseSMSRule(strings.TrimSpace(part))
		switch {
		case err != nil && r.provider != "":
			return nil, fmt.Errorf("NOTIFY_SMS_ROUTES: rule %d (%s): %v", i+1, r.provider, err)
		case err != nil:
			return nil, fmt.Errorf("NOTIFY_SMS_ROUTES: rule %d: %v", i+1, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// parseSMSRule reads one rule of NOTIFY_SMS_ROUTES. On an error after
// the provider's name was read, the rule returned names it.
func parseSMSRule(s string) (smsRule, error) {
	if s == "" {
		return smsRule{}, fmt.Errorf("is empty: rules are separated by one ';'")
	}
	name, conds, _ := strings.Cut(s, ":")
	r := smsRule{provider: strings.TrimSpace(name)}
	switch r.provider {
	case providerSMSGateway, providerMSG91, providerTwilio, providerVonage:
	default:
		return smsRule{}, fmt.Errorf("%q is not a provider: want %s, %s, %s or %s, then ':' and its conditions", r.provider,
			providerSMSGateway, providerMSG91, providerTwilio, providerVonage)
	}
	named := smsRule{provider: r.provider}
	seen := map[string]bool{}
	for _, cond := range strings.Fields(conds) {
		key, list, ok := strings.Cut(cond, "=")
		if !ok {
			return named, fmt.Errorf("%q: want key=value, such as country=IN or route=dlt,otp (no spaces in a list)", cond)
		}
		if seen[key] {
			return named, fmt.Errorf("%s is given twice: list its values once, separated by commas", key)
		}
		seen[key] = true
		values := strings.Split(list, ",")
		for i, v := range values {
			if v == "" {
				return named, fmt.Errorf("%s: an empty value: separate values by one comma, without spaces", key)
			}
			if slices.Contains(values[:i], v) {
				return named, fmt.Errorf("%s: %s is given twice", key, v)
			}
		}
		switch key {
		case "country":
			for _, v := range values {
				if !phone.IsRegion(v) {
					return named, fmt.Errorf("country: %q is not an ISO 3166-1 alpha-2 code in capitals, such as IN or US (leave country out to match every country)", v)
				}
			}
			r.countries = values
		case "prefix":
			for _, v := range values {
				if !e164Prefix(v) {
					return named, fmt.Errorf("prefix: %q is not the start of an E.164 number: a + and 1 to 14 digits, such as +1415", v)
				}
			}
			r.prefixes = values
		case "route":
			for _, v := range values {
				switch rt := sms.Route(v); rt {
				case sms.RouteSMS, sms.RouteOTP, sms.RouteDLT:
					r.routes = append(r.routes, rt)
				default:
					return named, fmt.Errorf("route: %q is not a route: want sms, otp or dlt", v)
				}
			}
		case "account":
			for _, v := range values {
				if !accountID(v) {
					return named, fmt.Errorf("account: %q is not an account ID (1 to 64 letters, digits, '.', '_' and '-')", v)
				}
			}
			r.accounts = values
		default:
			return named, fmt.Errorf("%q is not a key: want country, prefix, route or account", key)
		}
	}
	return r, nil
}

// e164Prefix reports whether s is a + and 1 to 14 digits, the first not 0.
func e164Prefix(s string) bool {
	if len(s) < 2 || len(s) > 15 || s[0] != '+' || s[1] == '0' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// accountID reports whether s is an account ID as the admin API takes
// them: 1 to 64 letters, digits, '.', '_' and '-', starting with a letter
// or digit.
func accountID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// parseCountries reads NOTIFY_COUNTRIES, the demo account's allow list:
// comma-separated ISO 3166-1 alpha-2 codes (IN,US), or * for every
// country. Empty: nil, the account's region (India) only.
func parseCountries(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	if s == phone.AnyCountry {
		return []string{phone.AnyCountry}, nil
	}
	var out []string
	for _, cc := range strings.Split(s, ",") {
		cc = strings.TrimSpace(cc)
		switch {
		case cc == phone.AnyCountry:
			return nil, fmt.Errorf("NOTIFY_COUNTRIES: * (every country) stands alone, not in a list")
		case !phone.IsRegion(cc):
			return nil, fmt.Errorf("NOTIFY_COUNTRIES: %q is not an ISO 3166-1 alpha-2 code in capitals: want a list such as IN,US, or *", cc)
		case slices.Contains(out, cc):
			return nil, fmt.Errorf("NOTIFY_COUNTRIES: %s is given twice", cc)
		}
		out = append(out, cc)
	}
	return out, nil
}

// parseBreaker reads NOTIFY_BREAKER: FAILURES/COOLDOWN (5/30s: after 5
// failed calls in a row a provider rests 30 seconds), "off", or empty
// (the default, 5/30s). It returns nil for off.
func parseBreaker(s string) (*notify.BreakerPolicy, error) {
	if s == "" {
		return &notify.BreakerPolicy{Failures: 5, Cooldown: 30 * time.Second}, nil
	}
	if strings.EqualFold(s, "off") {
		return nil, nil
	}
	count, cooldown, ok := strings.Cut(s, "/")
	n, err := strconv.Atoi(strings.TrimSpace(count))
	if !ok || err != nil || n < 1 || n > 1000 {
		return nil, fmt.Errorf("NOTIFY_BREAKER: want FAILURES/COOLDOWN such as 5/30s (FAILURES 1 to 1000), or off")
	}
	d, err := time.ParseDuration(strings.TrimSpace(cooldown))
	if err != nil || d < time.Second || d > time.Hour {
		return nil, fmt.Errorf("NOTIFY_BREAKER: the cooldown after / must be a Go duration from 1s to 1h, such as 30s")
	}
	return &notify.BreakerPolicy{Failures: n, Cooldown: d}, nil
}

// loadTwilio reads NOTIFY_TWILIO_*; nil when none is set. Errors name the
// variable and never repeat a secret.
func loadTwilio(get func(string) string) (*twilioConfig, error) {
	t := &twilioConfig{
		accountSID:   get("NOTIFY_TWILIO_ACCOUNT_SID"),
		authToken:    get("NOTIFY_TWILIO_AUTH_TOKEN"),
		apiKeySID:    get("NOTIFY_TWILIO_API_KEY_SID"),
		apiKeySecret: get("NOTIFY_TWILIO_API_KEY_SECRET"),
		from:         get("NOTIFY_TWILIO_FROM"),
		service:      get("NOTIFY_TWILIO_MESSAGING_SERVICE_SID"),
		baseURL:      get("NOTIFY_TWILIO_URL"),
		callbackURL:  get("NOTIFY_TWILIO_CALLBACK_URL"),
	}
	if *t == (twilioConfig{}) {
		return nil, nil
	}
	switch {
	case t.accountSID == "":
		return nil, fmt.Errorf("NOTIFY_TWILIO_ACCOUNT_SID is required for Twilio (NOTIFY_TWILIO_* is set)")
	case !twilioSID(t.accountSID, "AC"):
		return nil, fmt.Errorf("NOTIFY_TWILIO_ACCOUNT_SID: want AC and 32 hex digits, as the Twilio console shows it")
	case t.authToken == "":
		return nil, fmt.Errorf("NOTIFY_TWILIO_AUTH_TOKEN is required for Twilio: Twilio signs its status callbacks with the account's auth token, even when the API is called with an API key")
	case strings.ContainsFunc(t.authToken, isSpaceOrControl):
		return nil, fmt.Errorf("NOTIFY_TWILIO_AUTH_TOKEN: must not contain spaces or control characters")
	}
	if err := pair("NOTIFY_TWILIO_API_KEY_SID", t.apiKeySID, "NOTIFY_TWILIO_API_KEY_SECRET", t.apiKeySecret); err != nil {
		return nil, err
	}
	switch {
	case t.apiKeySID != "" && !twilioSID(t.apiKeySID, "SK"):
		return nil, fmt.Errorf("NOTIFY_TWILIO_API_KEY_SID: want SK and 32 hex digits")
	case strings.ContainsFunc(t.apiKeySecret, isSpaceOrControl):
		return nil, fmt.Errorf("NOTIFY_TWILIO_API_KEY_SECRET: must not contain spaces or control characters")
	case t.from == "" && t.service == "":
		return nil, fmt.Errorf("NOTIFY_TWILIO_FROM or NOTIFY_TWILIO_MESSAGING_SERVICE_SID is required for Twilio: the sender")
	case t.from != "" && !twilio.ValidSender(t.from):
		return nil, fmt.Errorf("NOTIFY_TWILIO_FROM: want a Twilio number in E.164 (+14155550100), a short code (3 to 8 digits) or an alphanumeric sender ID (1 to 11 of A-Z, a-z, 0-9, space, +, -, _, &, with a letter)")
	case t.service != "" && !twilioSID(t.service, "MG"):
		return nil, fmt.Errorf("NOTIFY_TWILIO_MESSAGING_SERVICE_SID: want MG and 32 hex digits")
	}
	if err := checkVendorURL("NOTIFY_TWILIO_URL", t.baseURL, "the API's base URL, https://api.twilio.com (the default)"); err != nil {
		return nil, err
	}
	if err := twilioCallback.check(t.callbackURL); err != nil {
		return nil, err
	}
	return t, nil
}

// callbackSetting is a vendor's NOTIFY_*_CALLBACK_URL: the public URL of
// the gateway's receiver of its delivery reports, given to the vendor
// with each message. It is optional, for a try on a machine the vendor
// cannot reach: unset, a start-up warning (unset) says where the reports
// go, if anywhere.
type callbackSetting struct {
	variable string // NOTIFY_TWILIO_CALLBACK_URL
	vendor   string // Twilio
	reports  string // what the vendor sends there: status callbacks
	// path is the receiver's path, as the banner shows it; shown is
	// the path of a URL, shown as the banner would (a token replaced by
	// its variable's name); nil: as it is.
	path  string
	shown func(path string) string
	// rules say what the URL must be besides an absolute http(s) URL
	// without user info or query, which valid checks; nil: nothing.
	rules string
	valid func(raw string, u *url.URL) bool
	// unset is the start-up warning without a URL.
	unset string
}

// check reads the setting's URL: empty, or an absolute http(s) URL
// without user info or query that valid takes. Its error never repeats
// the URL, which may carry a token.
func (s callbackSetting) check(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.ForceQuery || s.valid != nil && !s.valid(raw, u) {
		return fmt.Errorf("%s: want the public http(s) URL of %s, such as https://notify.example.com%s: no user name, password or query%s",
			s.variable, s.path, s.path, s.rules)
	}
	return nil
}

// warnings are the start-up warnings about raw, a URL check took: it is
// unset, or its path is not the receiver's.
func (s callbackSetting) warnings(raw string) []string {
	if raw == "" {
		return []string{s.variable + " is unset: " + s.unset}
	}
	u, _ := url.Parse(raw)
	path := u.Path
	if s.shown != nil {
		path = s.shown(path)
	}
	if path == s.path {
		return nil
	}
	return []string{fmt.Sprintf("%s's path is %q, not %s, where the gateway takes %s's %s: right only behind a proxy that maps one to the other",
		s.variable, path, s.path, s.vendor, s.reports)}
}

// twilioCallback is NOTIFY_TWILIO_CALLBACK_URL. Twilio refuses a host
// with '_'; a fragment of connection overrides may follow the URL.
var twilioCallback = callbackSetting{variable: "NOTIFY_TWILIO_CALLBACK_URL", vendor: "Twilio", reports: "status callbacks",
	path:  webhookPrefix + providerTwilio,
	rules: ", and no '_' in the host (a fragment of connection overrides, such as #rc=3, may follow)",
	valid: func(_ string, u *url.URL) bool { return !strings.Contains(u.Hostname(), "_") },
	unset: "Twilio is given no status callback, so it sends no status updates: its messages stay sent (never delivered or failed), " +
		"and " + webhookPrefix + providerTwilio + " is not mounted. Set it to the public URL of " + webhookPrefix + providerTwilio + " to take them",
}

// vonageCallback is NOTIFY_VONAGE_CALLBACK_URL for v: at most
// vonage.MaxCallbackLen characters, without a fragment (Vonage adds a GET
// receipt's fields to the URL), and ending in the token when v has one.
func vonageCallback(v *vonageConfig) callbackSetting {
	s := callbackSetting{variable: "NOTIFY_VONAGE_CALLBACK_URL", vendor: "Vonage", reports: "delivery receipts",
		path:  v.webhookPath(),
		rules: fmt.Sprintf(", no fragment, at most %d characters (Vonage's limit)", vonage.MaxCallbackLen),
		valid: func(raw string, _ *url.URL) bool {
			return !strings.Contains(raw, "#") && utf8.RuneCountInString(raw) <= vonage.MaxCallbackLen
		},
		unset: "Vonage sends its delivery receipts to the account's default webhook (the dashboard's API settings), if any: " +
			"without one there for " + v.webhookPath() + ", its messages stay sent (never delivered or failed)",
	}
	if !v.receiver() {
		s.unset = "Vonage's delivery receipts are not taken (" + webhookPrefix + providerVonage + " is not mounted without " +
			"NOTIFY_VONAGE_SIGNATURE_SECRET or NOTIFY_VONAGE_WEBHOOK_TOKEN): its messages stay sent (never delivered or failed)"
	}
	if v.webhookToken != "" {
		s.rules += ", and its last segment NOTIFY_VONAGE_WEBHOOK_TOKEN"
		valid := s.valid
		s.valid = func(raw string, u *url.URL) bool { return valid(raw, u) && lastSegment(u.Path) == v.webhookToken }
		s.shown = func(path string) string {
			return strings.TrimSuffix(strings.TrimSuffix(path, "/"), v.webhookToken) + "$NOTIFY_VONAGE_WEBHOOK_TOKEN"
		}
	}
	return s
}

// lastSegment is the last segment of a URL's path, a trailing slash
// aside, as the receivers read a token there.
func lastSegment(path string) string {
	path = strings.TrimSuffix(path, "/")
	return path[strings.LastIndexByte(path, '/')+1:]
}

// vonageSignatureMethods are the values of NOTIFY_VONAGE_SIGNATURE_METHOD:
// the signature methods Vonage's dashboard offers.
var vonageSignatureMethods = []vonage.SignatureMethod{vonage.MD5Hash, vonage.MD5HMAC, vonage.SHA1HMAC, vonage.SHA256HMAC, vonage.SHA512HMAC}

// loadVonage reads NOTIFY_VONAGE_*; nil when none is set. Errors name the
// variable and never repeat a secret.
func loadVonage(get func(string) string) (*vonageConfig, error) {
	v := &vonageConfig{
		apiKey:          get("NOTIFY_VONAGE_API_KEY"),
		apiSecret:       get("NOTIFY_VONAGE_API_SECRET"),
		from:            get("NOTIFY_VONAGE_FROM"),
		baseURL:         get("NOTIFY_VONAGE_URL"),
		callbackURL:     get("NOTIFY_VONAGE_CALLBACK_URL"),
		signatureSecret: get("NOTIFY_VONAGE_SIGNATURE_SECRET"),
		signatureMethod: vonage.SignatureMethod(strings.ToLower(get("NOTIFY_VONAGE_SIGNATURE_METHOD"))),
		webhookToken:    get("NOTIFY_VONAGE_WEBHOOK_TOKEN"),
	}
	if *v == (vonageConfig{}) {
		return nil, nil
	}
	for _, s := range [][2]string{{"NOTIFY_VONAGE_API_KEY", v.apiKey}, {"NOTIFY_VONAGE_API_SECRET", v.apiSecret}} {
		if s[1] == "" {
			return nil, fmt.Errorf("%s is required for Vonage (NOTIFY_VONAGE_* is set): the API key and one of its secrets, from the dashboard's API settings", s[0])
		}
	}
	switch {
	case strings.ContainsFunc(v.apiKey, isSpaceOrControl):
		return nil, fmt.Errorf("NOTIFY_VONAGE_API_KEY: must not contain spaces or control characters")
	case strings.ContainsFunc(v.apiSecret, isSpaceOrControl):
		return nil, fmt.Errorf("NOTIFY_VONAGE_API_SECRET: must not contain spaces or control characters")
	case v.from == "":
		return nil, fmt.Errorf("NOTIFY_VONAGE_FROM is required for Vonage: the sender")
	case !vonage.ValidSender(v.from):
		return nil, fmt.Errorf("NOTIFY_VONAGE_FROM: want a Vonage number in E.164 (+14155550100), a number or short code (3 to 15 digits) or an alphanumeric sender ID (1 to 11 of A-Z, a-z, 0-9 and space, with a letter)")
	case strings.ContainsFunc(v.signatureSecret, isSpaceOrControl):
		return nil, fmt.Errorf("NOTIFY_VONAGE_SIGNATURE_SECRET: must not contain spaces or control characters")
	case v.signatureMethod != "" && !slices.Contains(vonageSignatureMethods, v.signatureMethod):
		return nil, fmt.Errorf("NOTIFY_VONAGE_SIGNATURE_METHOD: want the dashboard's signature method: %s (the default), %s, %s, %s or %s",
			vonage.MD5Hash, vonage.MD5HMAC, vonage.SHA1HMAC, vonage.SHA256HMAC, vonage.SHA512HMAC)
	case v.signatureMethod != "" && v.signatureSecret == "":
		return nil, fmt.Errorf("NOTIFY_VONAGE_SIGNATURE_METHOD is how NOTIFY_VONAGE_SIGNATURE_SECRET signs: set that too")
	case v.callbackURL != "" && !v.receiver():
		return nil, fmt.Errorf("NOTIFY_VONAGE_CALLBACK_URL needs NOTIFY_VONAGE_SIGNATURE_SECRET (with signed webhooks on for the account) " +
			"or NOTIFY_VONAGE_WEBHOOK_TOKEN: nothing else tells Vonage's receipts from forgeries")
	}
	if v.signatureSecret != "" && v.signatureMethod == "" {
		v.signatureMethod = vonage.MD5Hash
	}
	if err := checkWebhookToken("NOTIFY_VONAGE_WEBHOOK_TOKEN", v.webhookToken); err != nil {
		return nil, err
	}
	if err := checkVendorURL("NOTIFY_VONAGE_URL", v.baseURL, "the API's base URL, "+vonage.DefaultBaseURL+" (the default)"); err != nil {
		return nil, err
	}
	if err := vonageCallback(v).check(v.callbackURL); err != nil {
		return nil, err
	}
	return v, nil
}

// twilioSID reports whether s is prefix and 32 hex digits.
func twilioSID(s, prefix string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || len(rest) != 32 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// loadMSG91 reads NOTIFY_MSG91_*; nil when none is set. Errors name the
// variable and never repeat a secret.
func loadMSG91(get func(string) string) (*msg91Config, error) {
	m := &msg91Config{
		authKey:      get("NOTIFY_MSG91_AUTH_KEY"),
		baseURL:      get("NOTIFY_MSG91_URL"),
		otpTemplate:  get("NOTIFY_MSG91_OTP_TEMPLATE"),
		otpVar:       get("NOTIFY_MSG91_OTP_VAR"),
		webhookToken: get("NOTIFY_MSG91_WEBHOOK_TOKEN"),
	}
	if *m == (msg91Config{}) {
		return nil, nil
	}
	switch {
	case m.authKey == "":
		return nil, fmt.Errorf("NOTIFY_MSG91_AUTH_KEY is required for MSG91 (NOTIFY_MSG91_* is set)")
	case strings.ContainsFunc(m.authKey, isSpaceOrControl):
		return nil, fmt.Errorf("NOTIFY_MSG91_AUTH_KEY: must not contain spaces or control characters")
	case m.otpTemplate != "" && !alnum(m.otpTemplate, 64):
		return nil, fmt.Errorf("NOTIFY_MSG91_OTP_TEMPLATE: want the MSG91 template ID of the approved OTP template, letters and digits such as 6808ca80d6fc054bef421352")
	case m.otpVar != "" && m.otpTemplate == "":
		return nil, fmt.Errorf("NOTIFY_MSG91_OTP_VAR is the code's variable in NOTIFY_MSG91_OTP_TEMPLATE: set that too")
	case m.otpVar != "" && (!alnum(strings.ReplaceAll(m.otpVar, "_", ""), 64) || m.otpVar == "mobiles"):
		return nil, fmt.Errorf("NOTIFY_MSG91_OTP_VAR: want the template's variable as it writes it (OTP for ##OTP##): letters, digits and '_'")
	}
	if err := checkWebhookToken("NOTIFY_MSG91_WEBHOOK_TOKEN", m.webhookToken); err != nil {
		return nil, err
	}
	if err := checkVendorURL("NOTIFY_MSG91_URL", m.baseURL, "MSG91's base URL, https://control.msg91.com (the default), or its flow endpoint https://control.msg91.com/api/v5/flow"); err != nil {
		return nil, err
	}
	return m, nil
}

// alnum reports whether s is 1 to max ASCII letters and digits.
func alnum(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }

// checkWebhookToken checks a receiver's secret path token, name's value
// when set: at least 16 characters, without '/', spaces or control
// characters. The error never repeats it.
func checkWebhookToken(name, token string) error {
	if token != "" && !vendorhttp.ValidToken(token) {
		return fmt.Errorf("%s: must be at least %d characters without '/', spaces or control characters (openssl rand -hex 16)", name, vendorhttp.MinTokenLen)
	}
	return nil
}
