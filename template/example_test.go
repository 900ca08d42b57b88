package template_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/notifykit/notify/store/storeutil"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/template"
)

// memTemplates is a tiny store.Templates for the examples and tests
// (memstore has the real in-memory one).
type memTemplates struct {
	mu  sync.Mutex
	m   map[string]map[string]*store.Template
	err error // returned by every call when set
}

func newMemTemplates() *memTemplates {
	return &memTemplates{m: map[string]map[string]*store.Template{}}
}

func (s *memTemplates) Template(ctx context.Context, account, slug string) (*store.Template, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	t, ok := s.m[account][slug]
	if !ok {
		return nil, notify.Errorf(notify.CodeNotFound, "memTemplates: no template %q", slug)
	}
	return t, nil
}

func (s *memTemplates) PutTemplate(_ context.Context, account string, t *store.Template) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[account] == nil {
		s.m[account] = map[string]*store.Template{}
	}
	s.m[account][t.Slug] = storeutil.CloneTemplate(t)
	return nil
}

func (s *memTemplates) DeleteTemplate(_ context.Context, account, slug string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[account][slug]; !ok {
		return notify.Errorf(notify.CodeNotFound, "memTemplates: no template %q", slug)
	}
	delete(s.m[account], slug)
	return nil
}

func (s *memTemplates) Templates(_ context.Context, account string) ([]*store.Template, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	var out []*store.Template
	for _, t := range s.m[account] {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *store.Template) int { return strings.Compare(a.Slug, b.Slug) })
	return out, nil
}

var _ store.Templates = (*memTemplates)(nil)

// An account stores its own template, checked before it is saved, and
// sends it by slug like a stock one.
func Example_customTemplate() {
	ctx := context.Background()
	acct := &notify.Account{ID: "acme", Name: "Acme Yoga"}
	templates := newMemTemplates()

	reminder := &store.Template{
		Slug:      "class-reminder",
		Variables: []string{"NAME", "CLASS", "TIME"},
		Bodies: map[notify.Kind]store.Body{
			chat.Kind: {Text: "Hi {{NAME}}, your *{{CLASS}}* class starts at {{TIME}}. See you on the mat! - {{BRAND_NAME}}"},
			sms.Kind:  {Text: "Hi {{NAME}}, your {{CLASS}} class starts at {{TIME}}. - {{BRAND_NAME}}"},
		},
	}
	if err := template.Check(reminder); err != nil {
		fmt.Println("rejected:", err)
		return
	}
	_ = templates.PutTemplate(ctx, acct.ID, reminder)

	r, err := template.New(templates)
	if err != nil {
		fmt.Println(err)
		return
	}
	vars := record.Vars{"NAME": "Asha", "CLASS": "Sunrise Flow", "TIME": "6:30 AM"}
	chat, err := r.Render(ctx, chat.Kind, acct, "class-reminder", "", vars)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(chat.Text)
	fmt.Println(chat.Class, chat.Values)

	// The template has no e-mail form.
	_, err = r.Render(ctx, email.Kind, acct, "class-reminder", "", vars)
	fmt.Println(notify.CodeOf(err))
	// Output:
	// Hi Asha, your *Sunrise Flow* class starts at 6:30 AM. See you on the mat! - Acme Yoga
	// transactional [Asha Sunrise Flow 6:30 AM Acme Yoga]
	// invalid_argument
}

// A stock template rendered for each channel.
func ExampleRenderer_Render() {
	r, err := template.New(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	vars := record.Vars{"OTP": "482913", "ACTION": "login"}
	sms, _ := r.Render(context.Background(), sms.Kind, acct, "standard-otp", "", vars)
	fmt.Println(sms.Text)
	mail, _ := r.Render(context.Background(), email.Kind, acct, "standard-otp", "", vars)
	fmt.Println(mail.Subject)
	// Output:
	// 482913 is your Acme login code. Never share it with anyone.
	// Your Acme login code
}

// Every missing variable is named, each on its own field.
func ExampleRenderer_Render_missingVariables() {
	r, _ := template.New(nil)
	_, err := r.Render(context.Background(), chat.Kind, &notify.Account{Name: "Acme"},
		"out-for-delivery", "", record.Vars{"NAME": "Asha"})
	var e *notify.Error
	if errors.As(err, &e) {
		for _, f := range e.Fields {
			fmt.Println(f.Field)
		}
	}
	// Output:
	// variables.ORDER_ID
	// variables.TRACKING_LINK
}

// Positional values, as the cloud channel keys them, fill the variables
// in declaration order; the cloud mapping gives the template name and the
// parameters in that order, defaults included.
func ExampleRenderer_CloudTemplate() {
	r, _ := template.New(nil)
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	ct, err := r.CloudTemplate(context.Background(), acct, "out-for-delivery", "",
		record.Vars{"1": "Asha", "2": "OD-1", "3": "https://track.example/OD-1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ct.Name, ct.Language)
	fmt.Printf("%q\n", ct.Params)
	// Output:
	// out_for_delivery en_US
	// ["Asha" "OD-1" "https://track.example/OD-1" "Acme"]
}

// An unknown slug names the nearest known ones.
func ExampleRenderer_Render_unknownSlug() {
	r, _ := template.New(nil)
	_, err := r.Render(context.Background(), chat.Kind, nil, "order-confirm", "", nil)
	fmt.Println(err)
	// Output:
	// invalid_argument: template: unknown slug: template_slug: unknown template "order-confirm"; did you mean order-confirmed?
}

// A request's locale picks the template's variant by its fallback chain:
// hi-IN has no variant of its own, so its language, hi, answers; a
// locale the catalogue lacks falls to the account's default, here none,
// and so to the base, in English.
func ExampleRenderer_Render_locale() {
	r, _ := template.New(nil)
	ctx := context.Background()
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	vars := record.Vars{"OTP": "482913"}
	for _, loc := range []string{"hi-IN", "fr-CA"} {
		out, err := r.Render(ctx, sms.Kind, acct, "standard-otp", loc, vars)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s -> %q: %s\n", loc, out.Locale, out.Text)
	}
	// The cloud template follows the variant.
	ct, _ := r.CloudTemplate(ctx, acct, "standard-otp", "hi-IN", vars)
	fmt.Println(ct.Name, ct.Language)
	// Output:
	// hi-IN -> "hi": 482913 आपका Acme सत्यापन कोड है। इसे किसी से भी साझा न करें।
	// fr-CA -> "": 482913 is your Acme verification code. Never share it with anyone.
	// standard_otp hi
}

// A custom template's variants are checked against its base when it is
// saved: a variant that leaves out a variable its base uses is refused
// then, not found by the recipient who got it. An account's default
// locale picks the variant when the request names none.
func Example_customLocales() {
	tpl := &store.Template{
		Slug:      "class-reminder",
		Variables: []string{"NAME", "TIME"},
		Bodies:    map[notify.Kind]store.Body{sms.Kind: {Text: "Hi {{NAME}}, your class starts at {{TIME}}."}},
		Locales: map[string]map[notify.Kind]store.Body{
			"hi": {sms.Kind: {Text: "नमस्ते {{NAME}}, आपकी क्लास शुरू होने वाली है।"}},
		},
	}
	fmt.Println(template.Check(tpl))

	tpl.Locales["hi"][sms.Kind] = store.Body{Text: "नमस्ते {{NAME}}, आपकी क्लास {{TIME}} बजे शुरू होगी।"}
	fmt.Println(template.Check(tpl))

	templates := newMemTemplates()
	_ = templates.PutTemplate(context.Background(), "acme", tpl)
	r, _ := template.New(templates)
	acct := &notify.Account{ID: "acme", Name: "Acme Yoga", Locale: "hi-IN"}
	out, err := r.Render(context.Background(), sms.Kind, acct, "class-reminder", "", record.Vars{"NAME": "Asha", "TIME": "6:30"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Locale, out.Text)
	// Output:
	// invalid_argument: template: custom template "class-reminder": locales.hi.sms: {{TIME}} is missing: the base's sms uses it, and it has no default
	// <nil>
	// hi नमस्ते Asha, आपकी क्लास 6:30 बजे शुरू होगी।
}
