package phone

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// DefaultRegion is the region of an account that names none: a number
// without a country code is read as Indian, as the gateway API's
// 10-digit numbers always were.
const DefaultRegion = "IN"

// AnyCountry in an account's allow list lets it send to every country.
const AnyCountry = "*"

// Number is a phone number read by Parse.
type Number struct {
	// E164 is the number in E.164 form: a plus, the calling code and the
	// national number, digits only ("+919876543210").
	E164 string
	// CallingCode is the country calling code (91 for India, 1 for the
	// NANP countries).
	CallingCode int
	// Region is the ISO 3166-1 alpha-2 code of the number's country
	// ("IN", "US"); several share a calling code, and the number tells
	// them apart.
	Region string
	// Type is the kind of line, as far as the numbering plan tells.
	Type Type
}

// National returns the number without its plus and calling code: the
// 10 digits of an Indian mobile number.
func (n Number) National() string {
	skip := 1 + len(strconv.Itoa(n.CallingCode))
	if len(n.E164) < skip {
		return ""
	}
	return n.E164[skip:]
}

// Type is the kind of line a number is.
type Type uint8

// The types of line, after libphonenumber's.
const (
	// Unknown is a number whose type the plan cannot tell.
	Unknown Type = iota
	Mobile
	FixedLine
	// FixedLineOrMobile is a number of a country whose mobile and fixed
	// numbers share ranges (the NANP countries, +1).
	FixedLineOrMobile
	TollFree
	PremiumRate
	SharedCost
	VoIP
	PersonalNumber
	Pager
	UAN
	Voicemail
)

var typeNames = [...]string{
	Unknown: "unknown", Mobile: "mobile", FixedLine: "fixed-line", FixedLineOrMobile: "fixed-line or mobile",
	TollFree: "toll-free", PremiumRate: "premium-rate", SharedCost: "shared-cost", VoIP: "VoIP",
	PersonalNumber: "personal", Pager: "pager", UAN: "universal access", Voicemail: "voicemail",
}

// String names the type in words ("premium-rate").
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "type " + strconv.Itoa(int(t))
}

// ParseType reads a type of line by its name as String writes it, with
// hyphens for spaces and in any case: "mobile", "fixed-line",
// "fixed-line-or-mobile", "toll-free", "voip", ... It reports false for
// any other word, "unknown" included: no price or rule is given for
// numbers of no known type by name.
func ParseType(s string) (Type, bool) {
	for t := Mobile; int(t) < len(typeNames); t++ {
		if strings.EqualFold(strings.ReplaceAll(typeNames[t], " ", "-"), s) {
			return t, true
		}
	}
	return Unknown, false
}

// TakesSMS reports whether a number of this type can take an SMS: a
// mobile number, or one that may be (FixedLineOrMobile). Fixed lines,
// premium-rate and shared-cost numbers (what SMS pumping targets),
// pagers and numbers of no known type cannot.
func (t Type) TakesSMS() bool { return t == Mobile || t == FixedLineOrMobile }

// Plan reads the numbers of the countries it knows. phone/world's reads
// every country's.
type Plan interface {
	// Parse reads raw, in international form (a leading +) or in the
	// national form of region (an ISO 3166-1 alpha-2 code). It fails,
	// with an error that describes the problem without repeating raw,
	// when raw is not a valid number. It must be safe for concurrent use.
	Parse(raw, region string) (Number, error)
}

// registered is the plan RegisterPlan set: what Parse uses when given
// none. It is the one piece of package state, written when a program
// starts (phone/world's init) and read on every non-Indian parse, as
// database/sql keeps its drivers and time/tzdata its zones.
var registered atomic.Pointer[Plan]

// RegisterPlan makes p the plan of every Parse given none: of each SMS
// and chat channel and of verify whose Config leaves Numbers nil, and of
// notifytest. phone/world registers its plan when it is linked, so that
// a program that imports it,
//
//	import _ "github.com/notifykit/notify/phone/world"
//
// reads every country's numbers everywhere, set once; a program that
// links no plan reads Indian numbers only. A channel's own Config.Numbers
// still wins (IndiaOnly keeps one to India's numbers). A nil p removes
// the registered plan. Safe for concurrent use; the last call wins.
func RegisterPlan(p Plan) {
	if p == nil {
		registered.Store(nil)
		return
	}
	registered.Store(&p)
}

// RegisteredPlan returns the plan RegisterPlan set, or nil.
func RegisteredPlan() Plan {
	if p := registered.Load(); p != nil {
		return *p
	}
	return nil
}

// IndiaOnly is a Plan that reads no number at all, so that a channel
// given it (Config.Numbers) reads Indian numbers only, by Parse's fast
// path, even when a program links phone/world: every other number is
// refused with the error a sender without a plan gives.
type IndiaOnly struct{}

// Parse refuses raw: IndiaOnly reads no country's numbers beyond
// India's, which Parse reads before any plan.
func (IndiaOnly) Parse(raw, region string) (Number, error) { return Number{}, noPlanError(raw, region) }

// Parse reads raw, dialled from region (DefaultRegion when empty):
// Indian numbers by the fast path, any other through plan, or when plan
// is nil through the registered one (RegisterPlan). With neither, only
// Indian mobile numbers are read; the error of another country's number
// says which plan reads it. The error describes the problem without
// repeating raw, and for a number without a country code that does not
// read as one of region, says to write it with one.
func Parse(raw, region string, plan Plan) (Number, error) {
	if region == "" {
		region = DefaultRegion
	}
	e164, err := indianE164(raw, region)
	switch {
	case err != nil:
		return Number{}, err
	case e164 != "":
		return Number{E164: e164, CallingCode: indiaCode, Region: DefaultRegion, Type: Mobile}, nil
	}
	if plan == nil {
		plan = RegisteredPlan()
	}
	if plan == nil {
		return Number{}, noPlanError(raw, region)
	}
	return plan.Parse(raw, region)
}

// noPlanError is the error of a number of another country than India's
// where no plan reads it.
func noPlanError(raw, region string) error {
	if strings.HasPrefix(strings.TrimSpace(raw), "+") {
		return errors.New("is not an Indian number (+91), and this sender reads no other country's numbers (phone/world's plan does: import it)")
	}
	return fmt.Errorf("has no country code, and numbers of %s need a numbering plan this sender lacks (phone/world's: import it)", region)
}

// Allowed reports whether an account of the given home region (empty:
// DefaultRegion) whose allow list is countries may send to n: countries
// empty allows the home region only, AnyCountry allows all. The error
// names the number's country and the allowed ones.
func Allowed(n Number, region string, countries []string) error {
	if region == "" {
		region = DefaultRegion
	}
	if len(countries) == 0 {
		if n.Region == region {
			return nil
		}
		return fmt.Errorf("is a number of %s, and the account may send to %s only", n.Region, region)
	}
	if slices.Contains(countries, n.Region) || slices.Contains(countries, AnyCountry) {
		return nil
	}
	return fmt.Errorf("is a number of %s, which is not among the account's countries (%s)", n.Region, clipList(countries))
}

// IsRegion reports whether s has the shape of an ISO 3166-1 alpha-2
// code, as Number.Region, accounts' regions and allow lists spell
// countries: two capital letters.
func IsRegion(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z'
}

// IsE164 reports whether s has the shape of an E.164 number: a plus, a
// digit 1-9 and 6 to 14 more digits, nothing else. It says nothing of
// whether the number exists (Parse does, with a plan).
func IsE164(s string) bool {
	if len(s) < 8 || len(s) > 16 || s[0] != '+' || s[1] < '1' || s[1] > '9' {
		return false
	}
	for i := 2; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Canonical returns s, trimmed, with the separators people write in a
// number (spaces, dashes, parentheses) removed, and reports whether what
// remains is an E.164 number (IsE164). It is the one form a number takes
// as the key of a list (a suppression list): the SMS and chat channels'
// Recipient. A number without its calling code is not canonical: which
// country it is of depends on an account (Parse).
func Canonical(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if IsE164(s) {
		return s, true // the form a channel's envelope has: no copy on a send's path
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '-', '(', ')':
		default:
			b = append(b, c)
		}
	}
	n := string(b)
	return n, IsE164(n)
}

// ParseAllowed is Parse and then Allowed: raw read in the account's
// region (empty: DefaultRegion), refused when it is of a country outside
// the account's allow list. It is what a channel checks a recipient
// with.
func ParseAllowed(raw, region string, countries []string, plan Plan) (Number, error) {
	n, err := Parse(raw, region, plan)
	if err != nil {
		return Number{}, err
	}
	if err := Allowed(n, region, countries); err != nil {
		return Number{}, err
	}
	return n, nil
}

// clipList lists up to five codes for an error message.
func clipList(codes []string) string {
	const show = 5
	s := ""
	for i, c := range codes {
		if i == show {
			return s + ", …"
		}
		if i > 0 {
			s += ", "
		}
		s += c
	}
	return s
}
