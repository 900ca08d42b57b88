package chat

import (
	"context"
	"errors"
	"fmt"

	"github.com/notifykit/notify"
)

// Deliver hands env to the provider of MessageOf(env).Gateway, once. Under the
// auto gateway (MessageOf(env).Auto), a certain, temporary refusal by that
// provider (notify.IsRetryable: Unavailable or RateLimited, the message
// was not accepted) is followed by one attempt through the other gateway,
// when it is configured and can carry the content; a permanent failure, an
// ended context, or an unknown outcome (the first gateway may have the
// message: sending by the other could deliver it twice) is returned as it
// is.
// The Result's Gateway is the gateway that delivered, its Provider that
// gateway's provider, and its Note says why that gateway was used. When
// both gateways fail, the error carries the second failure's code and
// names both. Deliver never modifies env; the other gateway gets a copy.
func (c *Channel) Deliver(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	if env == nil || MessageOf(env) == nil {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "chat: the envelope has no chat content")
	}
	first := MessageOf(env).Gateway
	p := c.provider(first)
	if p == nil {
		return nil, notify.Errorf(notify.CodeUnavailable, "chat: the %s gateway is not configured", first)
	}
	res, err := p.Send(ctx, c.envFor(env, first, p))
	if err == nil {
		return result(res, p, first, c.why(env))
	}
	second := other(first)
	op := c.provider(second)
	if !MessageOf(env).Auto || op == nil || !notify.IsRetryable(err) || ctx.Err() != nil || !carries(env, second) {
		return nil, err
	}
	res, err2 := op.Send(ctx, c.envFor(env, second, op))
	if err2 != nil {
		e := &notify.Error{Code: notify.CodeOf(err2), Provider: op.Name(),
			Err: fmt.Errorf("chat: the %s gateway failed too, after the %s gateway (%s): %w", second, first, short(err), err2)}
		var pe *notify.Error
		if errors.As(err2, &pe) {
			e.RetryAfter = pe.RetryAfter
		}
		return nil, e
	}
	note := fmt.Sprintf("sent by the %s gateway: the %s gateway failed first (%s)", second, first, short(err))
	return result(res, op, second, note)
}

// why explains the choice of the first gateway under auto.
func (c *Channel) why(env *notify.Envelope) string {
	if !MessageOf(env).Auto {
		return ""
	}
	gw := MessageOf(env).Gateway
	first := GatewayCloud
	if env.Account != nil {
		if set, err := c.settings.Of(env.Account, Kind); err == nil {
			first = primary(set.PrimaryGateway)
		}
	}
	switch {
	case gw == first:
		return fmt.Sprintf("sent by the %s gateway, the account's primary", gw)
	case MessageOf(env).Template != nil && MessageOf(env).Text == "":
		return fmt.Sprintf("sent by the %s gateway: cloud templates need it (the account's primary is %s)", gw, first)
	case c.provider(first) != nil && !carries(env, first):
		return fmt.Sprintf("sent by the %s gateway: the account's primary, %s, sends one-time codes only through an authentication template, and none is configured", gw, first)
	default:
		return fmt.Sprintf("sent by the %s gateway: the account's primary, %s, is not configured", gw, first)
	}
}

// carries reports whether gw can send env's content.
func carries(env *notify.Envelope, gw Gateway) bool {
	return carriesTo(MessageOf(env), gw, env.CarriesOTP)
}

// carriesTo reports whether gw can send msg, which carries a one-time code
// when otp is set: the QR gateway cannot send a cloud template that has no
// text form, and the cloud gateway sends a code only in a template (the
// configured authentication template, or the caller's template_name),
// never as free text.
func carriesTo(msg *Message, gw Gateway, otp bool) bool {
	if gw == GatewayCloud {
		return !otp || msg.Template != nil
	}
	return msg.Template == nil || msg.Text != ""
}

// envFor returns the envelope for gateway gw: env itself for the gateway
// it was prepared for, else a copy naming gw and its provider; for the QR
// gateway, without the cloud template (its text form is sent).
func (c *Channel) envFor(env *notify.Envelope, gw Gateway, p notify.Provider) *notify.Envelope {
	if gw == MessageOf(env).Gateway && (gw != GatewayQR || MessageOf(env).Template == nil) {
		return env
	}
	cp := *env
	msg := *MessageOf(env)
	cp.Content = &msg
	cp.Route = string(gw)
	cp.Provider = p.Name()
	msg.Gateway = gw
	if gw == GatewayQR {
		msg.Template = nil
	}
	return &cp
}

// result completes a provider's Result.
func result(res *notify.Result, p notify.Provider, gw Gateway, note string) (*notify.Result, error) {
	if res == nil {
		return nil, notify.Errorf(notify.CodeInternal, "chat: provider %s reported success without a result", p.Name())
	}
	out := *res
	if out.Provider == "" {
		out.Provider = p.Name()
	}
	out.Route = string(gw)
	if note != "" {
		if out.Note != "" {
			note += "; " + out.Note
		}
		out.Note = note
	}
	return &out, nil
}

// short is an error's text, shortened for a note.
func short(err error) string {
	s := err.Error()
	if len(s) > 200 {
		cut := 200
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}
