package chat

import (
	"fmt"
)

// otpConfig checks and keeps the cloud OTP template of cfg.
func (c *Channel) otpConfig(cfg Config) error {
	if cfg.CloudOTPTemplate == "" {
		return nil // codes go by QR, or are refused (errNoOTPTemplate)
	}
	if !templateName(cfg.CloudOTPTemplate) {
		return fmt.Errorf("chat: Config.CloudOTPTemplate %q is not a template name (lower-case letters, digits and '_')", cfg.CloudOTPTemplate)
	}
	c.otpLang = "en_US"
	if cfg.CloudOTPLanguage != "" {
		lang, ok := normalLanguage(cfg.CloudOTPLanguage)
		if !ok {
			return fmt.Errorf("chat: Config.CloudOTPLanguage %q is not a language code such as en_US", cfg.CloudOTPLanguage)
		}
		c.otpLang = lang
	}
	return nil
}

// authTemplate returns the cloud form of a message that carries code: the
// authentication template with the code as its one body parameter and as
// the value of its OTP button, which the vendor sends as a URL button at
// index 0 whether it shows "copy code" or one-tap autofill. lang, when
// set, overrides the configured language. It returns nil when no
// template is configured or the message does not go to the cloud gateway.
func (c *Channel) authTemplate(code, lang string, requested Gateway) *Template {
	if c.otpName == "" || c.cloud == nil || requested == GatewayQR || code == "" {
		return nil
	}
	if lang == "" {
		lang = c.otpLang
	}
	return &Template{Name: c.otpName, Language: lang, Params: []string{code},
		Buttons: []Button{{Kind: ButtonURL, Index: 0, Value: code}}}
}

// templateName reports whether s can name a cloud template: 1 to 512
// lower-case letters, digits and '_'.
func templateName(s string) bool {
	if s == "" || len(s) > 512 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
