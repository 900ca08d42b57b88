package chat

import "strings"

// The OTP actions (the "action" field), as normalised.
const (
	ActionVerification = "verification"
	ActionLogin        = "login"
	ActionTwoStep      = "two-step verification"
	ActionRegistration = "registration"
	ActionPassword     = "password reset"
	ActionTransaction  = "transaction"
)

// normalAction returns the normalised action, or "" when s names none.
// Case, surrounding space, and '-' or '_' for spaces do not matter.
func normalAction(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '-' || r == '_' }), " ")
	switch s {
	case "", ActionVerification, "verify":
		return ActionVerification
	case ActionLogin, "log in", "signin", "sign in":
		return ActionLogin
	case "two step verification", "2fa", "two factor authentication", "2 step verification":
		return ActionTwoStep
	case ActionRegistration, "signup", "sign up":
		return ActionRegistration
	case ActionPassword:
		return ActionPassword
	case ActionTransaction:
		return ActionTransaction
	}
	return ""
}

// DefaultOTPText is the default Config.OTPText: a priority authentication
// message, "*482915* is your Acme login code. For your security, do not
// share this code with anyone.", without the brand when it is empty. The
// code is bold, as the chat network formats *text*.
func DefaultOTPText(code, action, brand string) string {
	var b strings.Builder
	b.Grow(len(code) + len(action) + len(brand) + 80)
	b.WriteString("*")
	b.WriteString(code)
	b.WriteString("* is your ")
	if brand != "" {
		b.WriteString(brand)
		b.WriteString(" ")
	}
	b.WriteString(action)
	b.WriteString(" code. For your security, do not share this code with anyone.")
	return b.String()
}
