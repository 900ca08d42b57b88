package wallet

import (
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
)

// The common currencies beside record.INR are functions, not variables,
// so that no caller can change one for others.

// USD returns the US dollar: code USD, symbol $, exponent 2 (cents).
func USD() record.Currency { return record.Currency{Code: "USD", Symbol: "$", Exponent: 2} }

// EUR returns the euro: code EUR, symbol €, exponent 2 (cents).
func EUR() record.Currency { return record.Currency{Code: "EUR", Symbol: "€", Exponent: 2} }

// GBP returns the pound sterling: code GBP, symbol £, exponent 2 (pence).
func GBP() record.Currency { return record.Currency{Code: "GBP", Symbol: "£", Exponent: 2} }

// JPY returns the Japanese yen: code JPY, symbol ¥, exponent 0 (a yen
// has no minor unit).
func JPY() record.Currency { return record.Currency{Code: "JPY", Symbol: "¥", Exponent: 0} }

// CurrencyOf returns the currency of an ISO 4217 code ("USD", "KWD"):
// its exponent as the standard gives it (JPY 0, USD 2, KWD 3) and, for
// the common ones (record.INR and those above), its symbol; every other currency has none, so
// that it is written with its code ("KWD 1.250"), never a sign two
// currencies share. Funds codes (BOV, CHE, ...) are known; precious
// metals, testing codes and codes withdrawn from circulation are not.
// The error, CodeInvalidArgument, names the rule: three capital letters, of a currency ISO 4217
// lists.
func CurrencyOf(code string) (record.Currency, error) {
	for _, c := range [...]record.Currency{record.INR(), USD(), EUR(), GBP(), JPY()} {
		if c.Code == code {
			return c, nil
		}
	}
	if len(code) != 3 || !isUpper(code) {
		return record.Currency{}, notify.Errorf(notify.CodeInvalidArgument, "wallet: currency %q is not an ISO 4217 code: want three capital letters, such as USD", clip(code))
	}
	exp, ok := isoExponent(code)
	if !ok {
		return record.Currency{}, notify.Errorf(notify.CodeInvalidArgument, "wallet: currency %q is not a currency of ISO 4217", code)
	}
	return record.Currency{Code: code, Exponent: exp}, nil
}

func isUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// clip keeps an error message short whatever it quotes.
func clip(s string) string {
	if len(s) > 16 {
		return s[:16] + "…"
	}
	return s
}

// isoExponent returns the exponent of one of ISO 4217's active currency
// and funds codes (list one, 2025), by code: 2 but where the standard
// says otherwise.
func isoExponent(code string) (int, bool) {
	for _, l := range isoCodes {
		// Each code is at a multiple of 4 in its list, so a match across
		// two codes ("D AF") cannot be taken for one.
		if i := strings.Index(l.codes, code); i >= 0 && i%4 == 0 {
			return l.exponent, true
		}
	}
	return 0, false
}

var isoCodes = [...]struct {
	exponent int
	codes    string
}{
	{0, "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF"},
	{2, "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD " +
		"CAD CDF CHE CHF CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD " +
		"GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD " +
		"MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD " +
		"RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD " +
		"USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG"},
	{3, "BHD IQD JOD KWD LYD OMR TND"},
	{4, "CLF UYW"},
}
