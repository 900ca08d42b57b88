package msg91

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/rules"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/record"
)

// Defaults of Config.
const (
	// DefaultBaseURL is MSG91's control API.
	DefaultBaseURL = "https://control.msg91.com"
	DefaultName    = "msg91"
	// DefaultTimeout bounds one request of the default HTTP client; the
	// caller's context bounds it too.
	DefaultTimeout = 15 * time.Second
	// DefaultVarPrefix names the variables of a template that
	// Config.TemplateVars does not list: the i-th DLT value (from 1) goes
	// as VAR1, VAR2, ..., as in MSG91's own request sample.
	DefaultVarPrefix = "VAR"
	// DefaultOTPVar is the variable of the OTP template that carries the
	// code: ##OTP## in the template, MSG91's own name for it.
	DefaultOTPVar = "OTP"
	// DefaultMaxBatch is how many recipients one request carries at most
	// in SendBatch. MSG91 documents no bound; a hundred keeps a request
	// small.
	DefaultMaxBatch = 100
)

// FlowPath is the path of MSG91's Send SMS (flow) endpoint under
// Config.BaseURL.
const FlowPath = "/api/v5/flow"

// balancePath is the path of MSG91's balance API under Config.BaseURL,
// and walletType its type of the wallet's balance (1 and 4 are the
// promotional and transactional routes' SMS credits).
const (
	balancePath = "/api/balance.php"
	walletType  = "0"
)

// recipientKey is the field of a recipient that holds its number: MSG91's
// default receiver, ##mobiles##.
const recipientKey = "mobiles"

// maxBody bounds the answers read; real ones are under a hundred bytes.
const maxBody = 64 << 10

// Config configures a Provider.
type Config struct {
	// AuthKey is the MSG91 auth key (MSG91 panel, Authkey), sent in the
	// authkey header. It never appears in errors. Required.
	AuthKey string
	// BaseURL is where MSG91's API is: the base URL, under which the
	// provider calls FlowPath (Send) and /api/balance.php (Balance,
	// CheckHealth), or the flow endpoint itself
	// (https://control.msg91.com/api/v5/flow, with or without a trailing
	// slash, in any letter case), which Send then calls, the balance API
	// beside it. It must be an
	// http or https URL without user info, query or fragment. Default
	// DefaultBaseURL (https://control.msg91.com).
	BaseURL string
	// HTTPClient sends the requests. Default:
	// vendorhttp.NewClient(DefaultTimeout): 15s per whole request and
	// nothing shorter for the answer, bounded dial and TLS handshake, no
	// redirects followed, on a transport of its own whose idle
	// connections Close releases.
	HTTPClient *http.Client
	// Name is the provider's name in receipts and timeouts. Default
	// DefaultName ("msg91").
	Name string
	// OTPTemplateID is the MSG91 template ID of an approved OTP template
	// (in India, registered with DLT and mapped in MSG91 with its DLT
	// template ID), through which the otp route sends its code. Default
	// "": the otp route is refused with CodeInvalidArgument.
	OTPTemplateID string
	// OTPVar is the variable of the OTP template that takes the code,
	// exactly as the template names it (MSG91 variable names are case
	// sensitive). Default DefaultOTPVar ("OTP", for ##OTP##).
	OTPVar string
	// VarPrefix names the variables of a dlt-route template that
	// TemplateVars does not list: its i-th DLT value (from 1) goes as
	// VarPrefix followed by i. Default DefaultVarPrefix ("VAR": VAR1,
	// VAR2, ...); set "var" for templates written with ##var1##, ##var2##.
	VarPrefix string
	// TemplateVars names, per MSG91 template ID, the template's variables
	// in the order of the DLT template's {#var#} slots, for templates
	// written with their own names (##name##, ##date##): the message's
	// DLT values go to them in order, and a message whose number of
	// values differs is CodeInvalidArgument. Default none: VarPrefix.
	TemplateVars map[string][]string
	// ShortURL asks MSG91 to shorten the links in the messages
	// (short_url "1"). Default false (short_url "0").
	ShortURL bool
	// MaxBatch is the most recipients SendBatch puts in one request.
	// Default DefaultMaxBatch (100).
	MaxBatch int
}

// Provider sends SMS envelopes through MSG91's Send SMS (flow) API.
// Create one with New; it is safe for concurrent use and holds no
// goroutines.
type Provider struct {
	name      string
	endpoint  string
	balance   string // the balance API's URL, the key in its query
	key       string
	otpTpl    string
	otpVar    string
	varPrefix string
	tplVars   map[string][]string
	shortURL  string
	maxBatch  int
	conn      *vendorhttp.Conn
}

// New returns a Provider for cfg. It fails, naming the field (never the
// key), when AuthKey is missing or holds control characters, BaseURL is
// not an http(s) URL without user info, query or fragment, MaxBatch is negative,
// or a variable name (OTPVar, VarPrefix, TemplateVars) is empty, is
// "mobiles" (the recipient's number), holds spaces or control characters,
// or is given twice for one template.
func New(cfg Config) (*Provider, error) {
	if err := vendorhttp.CheckSecret("msg91", "AuthKey", cfg.AuthKey); err != nil {
		return nil, err
	}
	base, err := vendorhttp.CheckBaseURL("msg91", cfg.BaseURL, DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if cfg.OTPVar == "" {
		cfg.OTPVar = DefaultOTPVar
	}
	if cfg.VarPrefix == "" {
		cfg.VarPrefix = DefaultVarPrefix
	}
	if err := checkVar("Config.OTPVar", cfg.OTPVar); err != nil {
		return nil, err
	}
	if err := checkVar("Config.VarPrefix", cfg.VarPrefix); err != nil {
		return nil, err
	}
	if strings.IndexFunc(cfg.OTPTemplateID, unicode.IsSpace) >= 0 {
		return nil, errors.New("msg91: Config.OTPTemplateID must not contain spaces")
	}
	vars := make(map[string][]string, len(cfg.TemplateVars))
	for id, names := range cfg.TemplateVars {
		seen := make(map[string]bool, len(names))
		for _, n := range names {
			if err := checkVar(fmt.Sprintf("Config.TemplateVars[%s]", rules.Clip(id)), n); err != nil {
				return nil, err
			}
			if seen[n] {
				return nil, fmt.Errorf("msg91: Config.TemplateVars[%s] names variable %s twice", rules.Clip(id), rules.Clip(n))
			}
			seen[n] = true
		}
		vars[id] = append([]string(nil), names...)
	}
	if cfg.MaxBatch, err = vendorhttp.MaxBatch("msg91", cfg.MaxBatch, DefaultMaxBatch); err != nil {
		return nil, err
	}
	base = vendorhttp.TrimEndpoint(base, FlowPath)
	p := &Provider{
		name:      cfg.Name,
		endpoint:  base + FlowPath,
		balance:   base + balancePath + "?" + url.Values{"authkey": {cfg.AuthKey}, "type": {walletType}}.Encode(),
		key:       cfg.AuthKey,
		otpTpl:    cfg.OTPTemplateID,
		otpVar:    cfg.OTPVar,
		varPrefix: cfg.VarPrefix,
		tplVars:   vars,
		shortURL:  "0",
		maxBatch:  cfg.MaxBatch,
		conn:      vendorhttp.NewConn(cfg.HTTPClient, DefaultTimeout),
	}
	if cfg.ShortURL {
		p.shortURL = "1"
	}
	return p, nil
}

// checkVar checks a variable name of the configuration.
func checkVar(field, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("msg91: %s holds an empty variable name", field)
	case strings.EqualFold(name, recipientKey):
		return fmt.Errorf("msg91: %s must not name %q, the recipient's number", field, recipientKey)
	case strings.IndexFunc(name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return fmt.Errorf("msg91: %s must not contain spaces or control characters", field)
	}
	return nil
}

// Name returns Config.Name.
func (p *Provider) Name() string { return p.name }

// Close releases the idle connections of the default HTTP client; a
// client given in Config is left alone. Send keeps working after Close,
// opening new connections.
func (p *Provider) Close() error { return p.conn.Close() }

// flowRequest is the JSON body of a send.
type flowRequest struct {
	TemplateID string      `json:"template_id"`
	ShortURL   string      `json:"short_url"`
	Recipients []recipient `json:"recipients"`
}

// recipient is one recipient of a send: its number under "mobiles" and the
// template's variables, each under its own name.
type recipient map[string]string

// prepared is a send built from an envelope: the request with one
// recipient, and what must not appear in an error.
type prepared struct {
	req     flowRequest
	secrets []string
}

// Send sends env as one SMS, once, through the MSG91 template its route
// names, and returns MSG91's request ID as the ProviderMessageID. Errors
// are classified as the package documentation describes; an envelope
// MSG91 could not take (no SMS content, a number that is neither E.164
// nor an Indian mobile, the sms route, the otp route without
// Config.OTPTemplateID or without a 4-8 digit code, the dlt route without
// its own DLT template ID (Message.DLTMessageIDFor) or with a number of values the template's variables do
// not take) is CodeInvalidArgument and sends nothing.
func (p *Provider) Send(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	pr, err := p.prepare(env)
	if err != nil {
		return nil, err
	}
	id, err := p.post(ctx, pr)
	if err != nil {
		return nil, err
	}
	return &notify.Result{Provider: p.name, ProviderMessageID: id}, nil
}

// MaxBatch implements sms.BatchSender: Config.MaxBatch.
func (p *Provider) MaxBatch() int { return p.maxBatch }

// SendBatch implements sms.BatchSender: it sends envs, the same SMS to
// several numbers, in one request whose recipients list carries each
// number with the same variables, and returns MSG91's request ID as every
// envelope's ProviderMessageID (its delivery reports tell the numbers
// apart). Envelopes whose content differs, more than MaxBatch of them, or
// a number given twice are CodeInvalidArgument, with nothing sent; errors
// are otherwise Send's, for the whole batch.
func (p *Provider) SendBatch(ctx context.Context, envs []*notify.Envelope) ([]*notify.Result, error) {
	batch, err := vendorhttp.NewBatch("msg91", len(envs), p.maxBatch)
	if err != nil {
		return nil, err
	}
	var first *prepared
	for i, env := range envs {
		pr, err := p.prepare(env)
		if err != nil {
			return nil, err
		}
		if first == nil {
			first = pr
		}
		r := pr.req.Recipients[0]
		if err := batch.Add(i, r[recipientKey], sameSMS(&first.req, &pr.req)); err != nil {
			return nil, err
		}
		if pr != first {
			first.req.Recipients = append(first.req.Recipients, r)
			first.secrets = append(first.secrets, pr.secrets...)
		}
	}
	id, err := p.post(ctx, first)
	if err != nil {
		return nil, err
	}
	return batch.Results(p.name, id), nil
}

// sameSMS reports whether b, a request of one recipient, sends what a
// sends: the same template, options and variables.
func sameSMS(a, b *flowRequest) bool {
	if a.TemplateID != b.TemplateID || a.ShortURL != b.ShortURL {
		return false
	}
	ra, rb := a.Recipients[0], b.Recipients[0]
	if len(ra) != len(rb) {
		return false
	}
	for k, v := range ra {
		if k == recipientKey {
			continue
		}
		if w, ok := rb[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// prepare builds the request of env's route, with one recipient.
func (p *Provider) prepare(env *notify.Envelope) (*prepared, error) {
	m := sms.MessageOf(env)
	if m == nil {
		return nil, notify.InvalidField("message", "msg91 sends SMS envelopes only")
	}
	var fe record.FieldErrors
	number, err := mobile(env.To)
	if err != nil {
		fe.Add("to", err.Error())
	}
	r := recipient{recipientKey: number}
	pr := &prepared{req: flowRequest{ShortURL: p.shortURL}, secrets: []string{p.key}}
	switch m.Route {
	case sms.RouteSMS, "":
		fe.Add("route", "msg91 cannot send free text on the sms route: MSG91 sends only templates approved in its panel "+
			"(in India, registered with DLT); send on the dlt route with a DLT template whose message_id is its MSG91 template ID, "+
			"or on the otp route with msg91 Config.OTPTemplateID set")
	case sms.RouteOTP:
		if p.otpTpl == "" {
			fe.Add("route", "msg91 Config.OTPTemplateID is not set: the otp route needs the MSG91 template ID of an approved OTP template")
		}
		if !rules.ValidOTP(m.OTP) {
			fe.Add("message", "the otp route needs a numeric OTP of 4-8 digits")
		}
		pr.req.TemplateID = p.otpTpl
		r[p.otpVar] = m.OTP
		pr.secrets = append(pr.secrets, m.OTP)
	case sms.RouteDLT:
		id := m.DLTMessageIDFor(p.name)
		if id == "" {
			fe.Add("dlt_message_id", "is required: msg91 sends a DLT template by its MSG91 template ID; "+
				"set the account's DLT template's message_ids."+p.name+" to the template's ID in the MSG91 panel")
			break
		}
		pr.req.TemplateID = id
		names, err := p.varNames(id, len(m.DLTValues))
		if err != nil {
			fe.Add("message", err.Error())
			break
		}
		for i, v := range m.DLTValues {
			r[names[i]] = v
		}
		if env.CarriesOTP {
			pr.secrets = append(pr.secrets, m.DLTValues...)
		}
	default:
		fe.Addf("route", "msg91 cannot send route %s", rules.Clip(string(m.Route)))
	}
	if err := notify.InvalidFields(fe); err != nil {
		return nil, err
	}
	pr.req.Recipients = []recipient{r}
	return pr, nil
}

// varNames returns the names of the n variables of MSG91 template id.
func (p *Provider) varNames(id string, n int) ([]string, error) {
	if names, ok := p.tplVars[id]; ok {
		if len(names) != n {
			return nil, fmt.Errorf("MSG91 template %s takes %d variables (msg91 Config.TemplateVars), and the message has %d DLT values",
				rules.Clip(id), len(names), n)
		}
		return names, nil
	}
	names := make([]string, n)
	for i := range names {
		names[i] = p.varPrefix + strconv.Itoa(i+1)
	}
	return names, nil
}

// post sends one request and returns MSG91's request ID.
func (p *Provider) post(ctx context.Context, pr *prepared) (string, error) {
	data, err := json.Marshal(&pr.req)
	if err != nil {
		return "", notify.Errorf(notify.CodeInvalidArgument, "msg91: the envelope cannot be encoded as a request: %v", err)
	}
	ans, err := p.conn.Do(ctx, vendorhttp.Request{Name: "msg91", Method: http.MethodPost,
		URL: p.endpoint, URLConfig: "msg91 Config.BaseURL", Body: data, Limit: maxBody,
		Header: http.Header{"Authkey": {p.key}}})
	if err != nil {
		return "", err
	}
	return decodeAnswer(ans.Status, ans.Header, ans.Body, pr.secrets)
}

// Balance returns the MSG91 wallet's balance, in rupees (INR), as MSG91's
// balance API answers it (GET {BaseURL}/api/balance.php?authkey=...&type=0,
// a plain number such as 1234.56): digits past the paisa are cut, never
// rounded up. MSG91's error answer is classified as for a send (a wrong
// auth key is CodeRejected, saying to check Config.AuthKey, never
// repeating it), except that the call sends nothing, so a failure whose
// outcome would be unknown for a send (a 5xx, a timeout, a lost answer) is
// CodeUnavailable; an ended ctx stays visible to errors.Is. It is safe to
// repeat.
func (p *Provider) Balance(ctx context.Context) (notify.Money, error) {
	ans, err := p.conn.Do(ctx, vendorhttp.Request{Name: "msg91", Method: http.MethodGet,
		URL: p.balance, URLConfig: "msg91 Config.BaseURL", Limit: maxBody})
	if err != nil {
		return notify.Money{}, vendorhttp.ReadOnly(err)
	}
	m, err := decodeBalance(ans.Status, ans.Header, ans.Body, p.key)
	if err != nil {
		return notify.Money{}, vendorhttp.ReadOnly(err)
	}
	return m, nil
}

// CheckHealth is the readiness check of notify.Provider: MSG91 is healthy
// when it answers the balance call (Balance) for the auth key. A balance
// too low to send is not reported here; watch Balance for that.
func (p *Provider) CheckHealth(ctx context.Context) error {
	_, err := p.Balance(ctx)
	return err
}

// mobile returns a number as MSG91 takes it: its digits with the country
// code and no plus, 919876543210. An Indian number is read in any of the
// forms phone.Parse reads (the channel gives E.164); another country's
// must be in E.164 form already, as the SMS channel gives it.
func mobile(to string) (string, error) {
	n, err := phone.Parse(to, phone.DefaultRegion, nil)
	if err == nil {
		return n.E164[1:], nil
	}
	if phone.IsE164(to) && !strings.HasPrefix(to, "+91") {
		return to[1:], nil
	}
	return "", err
}

// SendsDLTByIDOnly marks the provider as a sms.DLTByIDSender: MSG91's
// flow API sends a DLT template by its MSG91 template ID only, so the
// SMS channel offers it only dlt messages whose template has that ID.
func (p *Provider) SendsDLTByIDOnly() {}

// Interface guards
var (
	_ sms.BatchSender   = (*Provider)(nil)
	_ sms.DLTByIDSender = (*Provider)(nil)
	_ notify.Provider   = (*Provider)(nil)
	_ io.Closer         = (*Provider)(nil)
)
