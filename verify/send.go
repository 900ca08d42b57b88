package verify

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/locale"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/verify/verifystore"
)

// plan is how a verification's code is sent: the choices of its start
// that the store does not keep.
type plan struct {
	channels                                   []Channel
	brand, locale, webOTPHost, appHash, domain string
	requester, prefix, country                 string
}

// send is one send of a code: the requests that carry it, each with the
// channels whose legs its receipt answers.
type send struct {
	account string
	reqs    []notify.Request
	legs    [][]Channel // per request, the channel of each leg
	price   notify.Money
}

// sendOf builds a send of v's code by p.channels. SMS and chat together
// are one dual OTP request (notify counts it once against its limits and
// sends both at the same moment). The requests carry no idempotency key:
// the store counts each send before it is made (TakeSend), so no two
// calls ever make the same send, and the Notifier needs no key store.
func (s *Service) sendOf(v *verifystore.Verification, p plan, code string) *send {
	out := &send{account: v.Account}
	lang := p.locale // the chat's cloud language: a tag in its cloud form
	if tag, ok := locale.Canonical(p.locale); ok {
		lang = locale.Cloud(tag)
	}
	if len(p.channels) == 2 && p.channels[0] != Email && p.channels[1] != Email {
		out.reqs = append(out.reqs, &otp.Request{Account: v.Account, To: v.To, OTP: code, BrandName: p.brand,
			Action: actionOf(v.Purpose), Domain: p.domain, WebOTPHost: p.webOTPHost, AppHash: p.appHash,
			Language: lang, Category: s.category, TemplateSlug: s.template, Locale: s.templateLocale(p)})
		out.legs = append(out.legs, []Channel{SMS, Chat}) // the dual OTP answers SMS first
		return out
	}
	for _, c := range p.channels {
		var r notify.Request
		switch c {
		case SMS:
			r = &sms.Request{Account: v.Account, To: v.To, Message: code, Route: sms.RouteOTP, Brand: p.brand,
				Domain: p.domain, WebOTPHost: p.webOTPHost, AppHash: p.appHash, Category: s.category,
				TemplateSlug: s.template, Locale: s.templateLocale(p)}
		case Chat:
			r = &chat.Request{Account: v.Account, To: v.To, OTP: code, Action: actionOf(v.Purpose), Brand: p.brand,
				Language: lang, Domain: p.domain, Category: s.category}
		case Email:
			r = s.emailOf(v, p, code)
		}
		out.reqs = append(out.reqs, r)
		out.legs = append(out.legs, []Channel{c})
	}
	return out
}

// templateLocale is the locale a send's templates take: the
// verification's, when Config.Template names one; else none (the
// channels' own texts have one wording).
func (s *Service) templateLocale(p plan) string {
	if s.template == "" {
		return ""
	}
	return p.locale
}

// emailOf is the e-mail of v's code: Config.Template in the
// verification's locale, or the English e-mail made here.
func (s *Service) emailOf(v *verifystore.Verification, p plan, code string) *email.Request {
	r := &email.Request{Account: v.Account, To: v.To, Purpose: email.PurposeOTP, Domain: p.domain, OTP: code, Category: s.category}
	if s.template == "" {
		r.Subject, r.Message = subjectOf(p.brand), emailText(code, p.brand, v.ExpiresAt.Sub(v.CreatedAt))
		return r
	}
	r.TemplateSlug, r.Locale, r.Variables = s.template, p.locale, record.Vars{"OTP": code}
	if p.brand != "" {
		r.Variables["BRAND_NAME"] = p.brand
	}
	return r
}

// actionOf names the chat OTP's action after a purpose the chat channel
// knows, else the default (verification).
func actionOf(purpose string) string {
	switch purpose {
	case "login", "registration", "transaction":
		return purpose
	case "signup":
		return "registration"
	case "password_reset":
		return "password reset"
	}
	return ""
}

// subjectOf and emailText are the e-mail of a code.
func subjectOf(brand string) string {
	if brand == "" {
		return "Your verification code"
	}
	return "Your " + brand + " verification code"
}

func emailText(code, brand string, ttl time.Duration) string {
	what := "your verification code"
	if brand != "" {
		what = "your " + brand + " verification code"
	}
	return code + " is " + what + ". It is valid for " + humanTTL(ttl) + ". Do not share it with anyone."
}

// humanTTL writes a TTL as people do: "10 minutes", "1 hour", "90 seconds".
func humanTTL(d time.Duration) string {
	unit := func(n int64, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return strconv.FormatInt(n, 10) + " " + one + "s"
	}
	switch {
	case d%time.Hour == 0:
		return unit(int64(d/time.Hour), "hour")
	case d%time.Minute == 0:
		return unit(int64(d/time.Minute), "minute")
	}
	return unit(int64(d/time.Second), "second")
}

// admit quotes the send (which checks it as Send would, so a bad field
// is refused before anything is kept) and runs the fraud guard on it.
func (s *Service) admit(ctx context.Context, op string, v *verifystore.Verification, requester string, snd *send, now time.Time) (*spend, error) {
	for i, r := range snd.reqs {
		q, err := s.n.Quote(ctx, r)
		if err != nil {
			return nil, reOp(op, err)
		}
		if i == 0 {
			snd.price = q
		} else {
			snd.price.Minor += q.Minor
		}
	}
	return s.guard.admit(ctx, op, check{account: v.Account, to: v.To, prefix: v.Prefix, country: v.Country,
		requester: requester, price: snd.price, now: now})
}

// reOp returns a notify error from a quote or a send as op's, its cause
// kept and its fields named in StartOptions' words (the channels call
// the brand brand_name and the locale language).
func reOp(op string, err error) error {
	var e *notify.Error
	if errors.As(err, &e) {
		c := *e
		c.Op = op
		if len(e.Fields) > 0 {
			c.Fields = make(record.FieldErrors, len(e.Fields))
			for i, f := range e.Fields {
				f.Field = optionName(f.Field)
				c.Fields[i] = f
			}
		}
		return &c
	}
	return err
}

// optionName returns StartOptions' name of a channel's field.
func optionName(field string) string {
	switch field {
	case "brand_name", "subject": // the e-mail's subject is made of the brand
		return "brand"
	case "language":
		return "locale"
	}
	return field
}

// deliver makes the send's requests at the same moment and answers a leg
// per channel; err is the most telling error when no leg was accepted.
// The spend held against the cap is settled to what stayed charged.
func (s *Service) deliver(ctx context.Context, snd *send, held *spend) ([]Leg, error) {
	rs := make([]*notify.Receipt, len(snd.reqs))
	errs := make([]error, len(snd.reqs))
	var wg sync.WaitGroup
	for i, r := range snd.reqs {
		wg.Go(func() { rs[i], errs[i] = s.n.Send(ctx, r) })
	}
	wg.Wait()
	var legs []Leg
	var cost int64
	for i, r := range rs {
		if r != nil {
			cost += r.Cost.Minor
		}
		for j, c := range snd.legs[i] {
			legs = append(legs, legOf(c, r, j, len(snd.legs[i]) > 1, errs[i]))
		}
	}
	held.settle(context.WithoutCancel(ctx), cost)
	for _, l := range legs {
		switch l.Status {
		case record.StateSent, record.StateDelivered, record.StateRead, record.StateUnknown:
			return legs, nil
		}
	}
	// No leg went out: the first request's error says why.
	first := errors.New("no message went out")
	for _, err := range errs {
		if err != nil {
			first = err
			break
		}
	}
	return legs, first
}

// legOf returns the leg of channel c from a receipt: the receipt itself,
// or its j-th leg for a composite one.
func legOf(c Channel, r *notify.Receipt, j int, composite bool, err error) Leg {
	l := Leg{Channel: c}
	if composite && r != nil && j < len(r.Legs) {
		r = r.Legs[j]
	}
	if r == nil {
		l.Status = record.StateFailed
		if err != nil {
			l.Error = err.Error()
		}
		return l
	}
	l.MessageID, l.Status, l.Provider, l.Cost, l.Error = r.MessageID, r.Status, r.Provider, r.Cost, r.Error
	return l
}

// settle ends the start or resend of v after its send: when no leg went
// out for certain, a new verification is canceled and the error
// returned; otherwise the code counts as sent for the guard and v is
// answered with its legs.
func (s *Service) settle(ctx context.Context, op string, v *verifystore.Verification, requester string, legs []Leg, sendErr error, now time.Time) (*Verification, error) {
	if sendErr != nil {
		if v.Sends <= 1 {
			// Nothing reached the recipient: the verification could never
			// be approved, so it ends here rather than hold a code.
			if v2, _, err := s.store.FinishVerification(context.WithoutCancel(ctx), v.Account, v.ID, StatusCanceled, now); err == nil {
				v = v2
			}
		}
		out := view(v, now)
		out.Legs = legs
		return out, reOp(op, sendErr)
	}
	s.guard.sent(context.WithoutCancel(ctx), v.Account, v.Prefix, v.Country, requester, now)
	out := view(v, now)
	out.Legs = legs
	return out, nil
}
