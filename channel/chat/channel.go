package chat

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/netguard"
	"github.com/notifykit/notify/internal/nilness"
	"github.com/notifykit/notify/internal/settings"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/sendwindow"
)

// Limits of the request fields the channel checks.
const (
	// MaxText is the longest message text, in characters.
	MaxText = 4096
	// MaxCaption is the longest caption under a media file.
	MaxCaption = 1024
)

// Resolver looks up host names for the media URL check; *net.Resolver
// implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// CloudTemplater maps a template slug and its variables to a cloud-channel
// template message, in the variant locale chooses (as
// notify.TemplateRenderer.Render chooses one; its language the variant's).
// *template.Renderer implements it. It must be safe for
// concurrent use; errors are as for notify.TemplateRenderer.Render.
type CloudTemplater interface {
	CloudTemplate(ctx context.Context, acct *notify.Account, slug, locale string, vars record.Vars) (*Template, error)
}

// Config configures a Channel.
type Config struct {
	// Cloud delivers through the official cloud messaging API (the cloud
	// gateway), such as a *cloudchat.Provider. Nil: the cloud gateway is
	// unavailable. Default nil.
	Cloud notify.Provider
	// QR delivers through a QR-session gateway (the qr gateway), such as a
	// *qrchat.Provider. Nil: the qr gateway is unavailable. Default nil.
	// At least one of Cloud and QR is required.
	QR notify.Provider
	// Numbers reads the numbers of countries other than India, such as
	// phone/world's Plan{}; whether an account may send to one is its own
	// allow list (notify.Account.Countries). Nil: the registered plan
	// (phone.RegisterPlan), phone/world's when the program imports it, so
	// that the plan is given once for every channel and verify; with none
	// registered, Indian numbers only, which keeps libphonenumber's
	// metadata out of the binary. phone.IndiaOnly keeps a channel to
	// India's numbers whatever is registered. Default nil.
	Numbers phone.Plan
	// Renderer renders template_slug into the message text. Nil: requests
	// with template_slug are InvalidArgument. Default nil.
	Renderer notify.TemplateRenderer
	// CloudTemplates maps template_slug to a cloud template for the cloud
	// gateway. Default: Renderer, when it implements CloudTemplater
	// (template.Renderer does); without one, template_slug goes to the
	// cloud gateway as plain text.
	CloudTemplates CloudTemplater
	// Resolver resolves the hosts of media_url and header_url, whose every
	// address must be public. Default net.DefaultResolver.
	Resolver Resolver
	// OTPText formats the OTP message from the code, the normalised action
	// and the brand (possibly empty). It must not fail or keep the code.
	// Default DefaultOTPText.
	OTPText func(code, action, brand string) string
	// CloudOTPTemplate is the name of the approved authentication
	// template the cloud gateway sends one-time codes through. The vendor
	// allows codes only in authentication templates, whose OTP button
	// (copy code or one-tap) must carry the code too. An OTP message, the
	// chat leg of the dual OTP, and a template_slug message whose
	// variables carry an OTP go to the cloud gateway as this template,
	// with the code in its body and in its button; the QR gateway gets
	// their text. template_name naming this template gets the same
	// treatment from otp.
	//
	// Without it the cloud gateway never carries a code (free text is
	// refused outside the 24-hour window, i.e. to most recipients): under
	// auto such a message goes to the QR gateway, an explicit gateway
	// "cloud" is Unavailable, and New refuses a Cloud provider without a
	// QR one. Default "".
	CloudOTPTemplate string
	// CloudOTPLanguage is the language CloudOTPTemplate was approved in,
	// such as en_US; a request's language overrides it. Default en_US.
	CloudOTPLanguage string
	// Windows are the hours in which chat messages may go (package
	// sendwindow): quiet hours, say, for promotional templates; a message
	// outside its window is scheduled on the Notifier's queue for the
	// opening (notify.Envelope.Window). Messages with a one-time code are
	// never held. Default none.
	Windows sendwindow.Rules
}

// Channel is the chat channel. It implements notify.Channel for
// chat.Kind; create it with New. It is safe for concurrent use and keeps no
// state between sends but the accounts' decoded settings (a bounded
// cache).
type Channel struct {
	cloud, qr notify.Provider
	numbers   phone.Plan
	renderer  notify.TemplateRenderer
	cloudTmpl CloudTemplater
	guard     *netguard.Guard
	otpText   func(code, action, brand string) string
	otpName   string // CloudOTPTemplate
	otpLang   string // CloudOTPLanguage, normalised
	windows   sendwindow.Rules
	settings  settings.Cache[Settings] // the accounts' Settings, decoded
}

// New returns a Channel for cfg. It fails when neither Cloud nor QR is
// set, and on a CloudOTPTemplate or CloudOTPLanguage that is not a
// template name or a language code. Cloud without QR or CloudOTPTemplate
// is a channel for templates, text and files: it refuses every message
// that carries a one-time code, before anything is charged, with
// CodeInvalidArgument naming CloudOTPTemplate (the cloud vendor takes
// codes only in an authentication template).
func New(cfg Config) (*Channel, error) {
	// A typed nil (the nil *cloudchat.Provider of a constructor that
	// failed, say) is refused here rather than panicking at the first send.
	if cfg.Cloud != nil && nilness.Is(cfg.Cloud) {
		return nil, errors.New("chat: Config.Cloud is a nil provider; check the error of its constructor")
	}
	if cfg.QR != nil && nilness.Is(cfg.QR) {
		return nil, errors.New("chat: Config.QR is a nil provider; check the error of its constructor")
	}
	if cfg.Cloud == nil && cfg.QR == nil {
		return nil, errors.New("chat: Config needs a Cloud or a QR provider")
	}
	c := &Channel{
		cloud:     cfg.Cloud,
		qr:        cfg.QR,
		numbers:   cfg.Numbers,
		renderer:  cfg.Renderer,
		cloudTmpl: cfg.CloudTemplates,
		otpText:   cfg.OTPText,
		otpName:   cfg.CloudOTPTemplate,
		windows:   slices.Clone(cfg.Windows),
	}
	if err := c.windows.Check(); err != nil {
		return nil, fmt.Errorf("chat: Config.Windows: %w", err)
	}
	if c.cloudTmpl == nil {
		if ct, ok := cfg.Renderer.(CloudTemplater); ok {
			c.cloudTmpl = ct
		}
	}
	if c.otpText == nil {
		c.otpText = DefaultOTPText
	}
	if err := c.otpConfig(cfg); err != nil {
		return nil, err
	}
	var r netguard.Resolver
	if cfg.Resolver != nil {
		r = cfg.Resolver
	}
	c.guard = netguard.New(netguard.Config{Resolver: r})
	return c, nil
}

// Kind returns Kind.
func (c *Channel) Kind() notify.Kind { return Kind }

// Recipient implements notify.Channel: a number in E.164 form, without
// the spaces, dashes and parentheses people write in it
// (phone.Canonical). A number without its calling code is refused: which
// country it is of depends on an account.
func (c *Channel) Recipient(to string) (string, error) {
	if n, ok := phone.Canonical(to); ok {
		return n, nil
	}
	return "", notify.InvalidField("to", "must be a phone number in E.164 form, as +919876543210")
}

// provider returns the provider of a gateway, or nil.
func (c *Channel) provider(gw Gateway) notify.Provider {
	switch gw {
	case GatewayCloud:
		return c.cloud
	case GatewayQR:
		return c.qr
	}
	return nil
}

// other returns the gateway that is not gw.
func other(gw Gateway) Gateway {
	if gw == GatewayCloud {
		return GatewayQR
	}
	return GatewayCloud
}

// Interface guards
var _ notify.Channel = (*Channel)(nil)

// PrimaryGateway returns the account's primary chat gateway, the one
// GatewayAuto tries first: Settings.PrimaryGateway, with an empty or auto
// value read as GatewayCloud, as are settings that do not decode (the
// channel refuses to send for such an account).
func PrimaryGateway(acct *notify.Account) Gateway {
	s, _ := SettingsOf(acct)
	return primary(s.PrimaryGateway)
}
