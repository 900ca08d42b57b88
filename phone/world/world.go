package world

import (
	"fmt"
	"strings"

	"github.com/nyaruka/phonenumbers"

	"github.com/notifykit/notify/phone"
)

// Plan reads the numbers of every country. The zero value is ready to
// use and safe for concurrent use: it keeps no state.
type Plan struct{}

// Parse reads raw in international form, or in the national form of
// region, and returns it in E.164 form with its country and type of
// line. It fails when raw is not a number or not a valid one of its
// country (a wrong length, a range no one is assigned); the error does
// not repeat raw.
func (Plan) Parse(raw, region string) (phone.Number, error) {
	n, err := phonenumbers.Parse(raw, region)
	if err != nil {
		return phone.Number{}, national(raw, region, parseError(err, region))
	}
	// A number of no known type is in no assigned range: invalid. Asking
	// the type first and the reason only then keeps to two metadata
	// lookups a good number, where IsValidNumber would add a third.
	typ := phonenumbers.GetNumberType(n)
	if typ == phonenumbers.UNKNOWN {
		return phone.Number{}, national(raw, region, invalid(n))
	}
	return phone.Number{
		E164:        phonenumbers.Format(n, phonenumbers.E164),
		CallingCode: int(n.GetCountryCode()),
		Region:      phonenumbers.GetRegionCodeForNumber(n),
		Type:        typeOf(typ),
	}, nil
}

// national adds to the error of a number written without a country code
// how it was read, and the fix when it is another country's.
func national(raw, region string, err error) error {
	if strings.HasPrefix(strings.TrimSpace(raw), "+") {
		return err
	}
	return fmt.Errorf("%w, read as a number of the account's region, %s; "+
		"write another country's number with its country code, such as +44 20 7946 0018", err, region)
}

// invalid says why n, which phonenumbers read, is no valid number.
func invalid(n *phonenumbers.PhoneNumber) error {
	code := n.GetCountryCode()
	switch phonenumbers.IsPossibleNumberWithReason(n) {
	case phonenumbers.TOO_SHORT, phonenumbers.INVALID_LENGTH:
		return fmt.Errorf("is too short for a number of +%d", code)
	case phonenumbers.TOO_LONG:
		return fmt.Errorf("is too long for a number of +%d", code)
	case phonenumbers.INVALID_COUNTRY_CODE:
		return fmt.Errorf("has an unknown country code (+%d)", code)
	}
	return fmt.Errorf("is not a valid number of +%d: no such range is assigned", code)
}

// parseError says in the package's words why phonenumbers could not read
// a number, without the number.
func parseError(err error, region string) error {
	switch err {
	case phonenumbers.ErrInvalidCountryCode:
		return fmt.Errorf("has no valid country code: give one with a leading +, or a national number of %s", region)
	case phonenumbers.ErrNotANumber:
		return fmt.Errorf("is not a phone number")
	case phonenumbers.ErrTooShortNSN, phonenumbers.ErrTooShortAfterIDD:
		return fmt.Errorf("is too short for a phone number")
	case phonenumbers.ErrNumTooLong:
		return fmt.Errorf("is too long for a phone number")
	}
	return fmt.Errorf("is not a phone number (%v)", err)
}

// typeOf is the phone.Type of a libphonenumber type.
func typeOf(t phonenumbers.PhoneNumberType) phone.Type {
	switch t {
	case phonenumbers.MOBILE:
		return phone.Mobile
	case phonenumbers.FIXED_LINE:
		return phone.FixedLine
	case phonenumbers.FIXED_LINE_OR_MOBILE:
		return phone.FixedLineOrMobile
	case phonenumbers.TOLL_FREE:
		return phone.TollFree
	case phonenumbers.PREMIUM_RATE:
		return phone.PremiumRate
	case phonenumbers.SHARED_COST:
		return phone.SharedCost
	case phonenumbers.VOIP:
		return phone.VoIP
	case phonenumbers.PERSONAL_NUMBER:
		return phone.PersonalNumber
	case phonenumbers.PAGER:
		return phone.Pager
	case phonenumbers.UAN:
		return phone.UAN
	case phonenumbers.VOICEMAIL:
		return phone.Voicemail
	}
	return phone.Unknown
}

// init registers the plan (phone.RegisterPlan): a program that links
// this package reads every country's numbers in every channel and in
// verify, given once.
func init() { phone.RegisterPlan(Plan{}) }

// Interface guards
var _ phone.Plan = Plan{}
