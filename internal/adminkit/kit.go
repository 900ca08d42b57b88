// Package adminkit is the admin API's test suite (package adminapi),
// run against any store: adminapi's own tests give it memstore, the
// pgstore module's give it pgstore, so that the two answer every request
// alike without the library's module depending on pgx. It is for this
// repository's tests alone.
package adminkit

import (
	"net"
	"strings"
	"testing"

	"github.com/notifykit/notify/adminapi"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/store"
)

// Backend is a store under test, with the ledger that writes its
// message records.
type Backend struct {
	Store adminapi.Store
	Keys  store.Accounts
	Msgs  store.Ledger
}

// Config is what the suite runs against.
type Config struct {
	// NewBackend returns a fresh, empty store for one test. Required.
	NewBackend func(t *testing.T) Backend
	// Unreachable, when not nil, returns a store whose database listens
	// on no server at the loopback port it is given, with the words of
	// its errors (user, database, package) that no answer may show.
	Unreachable func(t *testing.T, port string) (adminapi.Store, []string)
}

// kit runs the suite's tests with one Config.
type kit struct{ cfg Config }

// nb is a fresh backend.
func (k kit) nb(t *testing.T) Backend { return k.cfg.NewBackend(t) }

// each runs fn on a fresh backend.
func (k kit) each(t *testing.T, fn func(t *testing.T, b Backend)) { fn(t, k.nb(t)) }

// Run runs every test of the admin API against c's stores.
func Run(t *testing.T, c Config) {
	if c.NewBackend == nil {
		t.Fatal("adminkit: Config.NewBackend is nil")
	}
	k := kit{c}
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"Auth", k.testAuth},
		{"Accounts", k.testAccounts},
		{"ListAccounts", k.testListAccounts},
		{"DisableEnable", k.testDisableEnable},
		{"Countries", k.testCountries},
		{"AccountLocale", k.testAccountLocale},
		{"DLTSlug", k.testDLTSlug},
		{"RotateKey", k.testRotateKey},
		{"TopUp", k.testTopUp},
		{"Currencies", k.testCurrencies},
		{"Ledger", k.testLedger},
		{"Messages", k.testMessages},
		{"DLTTemplates", k.testDLTTemplates},
		{"CustomTemplates", k.testCustomTemplates},
		{"HangUpDoesNotCutAChange", k.testHangUpDoesNotCutAChange},
		{"PathIDsAndCursorsAreKeys", k.testPathIDsAndCursorsAreKeys},
		{"StoreFailuresAnswerNoInternals", k.testStoreFailuresAnswerNoInternals},
		{"StoreFieldErrors", k.testStoreFieldErrors},
		{"AccountAnswersKeepTheirBytes", k.testAccountAnswersKeepTheirBytes},
		{"SettingsSetElsewhere", k.testSettingsSetElsewhere},
		{"UndecodableSettings", k.testUndecodableSettings},
		{"SuppressionEndpoints", k.testSuppressionEndpoints},
		{"SuppressionEndpointsNeedAList", k.testSuppressionEndpointsNeedAList},
		{"CategoryEndpoints", k.testCategoryEndpoints},
		{"PreferenceEndpoints", k.testPreferenceEndpoints},
		{"PreferenceEndpointsNeedAStore", k.testPreferenceEndpointsNeedAStore},
		{"TemplateAnswersKeepTheirBytes", k.testTemplateAnswersKeepTheirBytes},
		{"TemplateErrorsKeepTheirBytes", k.testTemplateErrorsKeepTheirBytes},
		{"TemplateOtherKinds", k.testTemplateOtherKinds},
		{"TemplateKeptBodyMustCompile", k.testTemplateKeptBodyMustCompile},
		{"TemplateLocales", k.testTemplateLocales},
		{"UnreachableDatabaseAnswersNoInternals", k.testUnreachableDatabase},
	} {
		t.Run(tc.name, tc.fn)
	}
}

// testUnreachableDatabase: whatever a store whose server cannot be
// reached says stays out of the answer, which gives the request ID; the
// log has it under that ID. (testStoreFailuresAnswerNoInternals tests the
// same with stores that fail in pgx's words.)
func (k kit) testUnreachableDatabase(t *testing.T) {
	if k.cfg.Unreachable == nil {
		t.Skip("Config.Unreachable is nil: the store has no server to lose")
	}
	_, port, err := net.SplitHostPort(vendorhttptest.ClosedAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	st, words := k.cfg.Unreachable(t, port)
	s := newServer(t, Backend{Store: st})
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/admin/v1/accounts", ""},
		{"GET", "/admin/v1/accounts/acme", ""},
		{"POST", "/admin/v1/accounts", `{"id":"acme"}`},
		{"POST", "/admin/v1/accounts/acme/topups", `{"amount_minor":100,"reference":"r1"}`},
		{"GET", "/admin/v1/accounts/acme/ledger", ""},
		{"POST", "/admin/v1/accounts/acme/rotate-key", ""},
	} {
		r := s.admin(t, c.method, c.path, c.body)
		want(t, r, 503, "unavailable")
		wantPlain(t, c.method+" "+c.path, r, append([]string{"127.0.0.1", port, "dial"}, words...)...)
		if logs := s.logs.String(); !strings.Contains(logs, port) || !strings.Contains(logs, r.header.Get("X-Request-ID")) {
			t.Errorf("%s %s: the log lacks the details or the request ID:\n%s", c.method, c.path, logs)
		}
	}
}
