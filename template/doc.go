// Package template renders the message templates of notify: a stock
// catalogue of twenty templates, each with a chat body, an SMS
// body and an e-mail subject, HTML body and plain-text body, plus the
// custom templates an account keeps in a store.Templates.
//
// A Renderer implements notify.TemplateRenderer; channels call it:
//
//	r, err := template.New(store) // store may be nil: stock templates only
//	out, err := r.Render(ctx, chat.Kind, acct, "out-for-delivery", "", record.Vars{
//		"NAME": "Asha", "ORDER_ID": "A-1042", "TRACKING_LINK": "https://track.example/A-1042",
//	})
//
// # Placeholders
//
// A placeholder is {{NAME}}: a name of upper-case letters, digits and '_'
// (spaces inside the braces are allowed). A "{{" that does not start a
// placeholder is an error when the template is compiled, so a mistyped
// placeholder never reaches a recipient. Templates are compiled once, into
// literal segments and variable indexes: the stock catalogue in New, a
// custom template the first time it is used (compiled templates are cached
// per account and slug, and recompiled when the stored template changes).
//
// # Locales
//
// A template has a base, its wording for every locale, and may have
// variants: the same template worded for a locale. A locale is a BCP 47
// tag as CanonicalLocale takes it: a language of 2 or 3 letters, an
// optional script of 4 letters and an optional region of 2 letters or 3
// digits, separated by "-" or "_", in any case ("hi", "hi-IN", "hi_in",
// "zh-Hant-TW"); extensions are not taken. Tags are compared in their
// canonical form ("hi-IN").
//
// Render takes the request's locale ("" for none) and picks the wording
// for the kind asked by a fallback chain, the first of:
//
//  1. the request's tag ("hi-IN");
//  2. its language alone ("hi"), when the tag has more;
//  3. the account's default (Account.Locale), then its language;
//  4. the base.
//
// A link without a variant, or whose variant has no body for the kind, is
// skipped: a variant may word SMS alone and leave e-mail to the next
// link. A well-formed tag the template has no variant for (fr-CA) falls
// back silently; one that is not a tag is InvalidArgument on "locale". An
// account default that is not a tag counts as none. Rendered.Locale is
// the tag of the variant rendered, canonical, or "" for the base, and
// Rendered.Varies says whether the template has a variant for the kind at
// all: only then does a channel let the recipient's stored locale
// (store.Preferences.SetLocale) stand in for a request that names none,
// which the Notifier does by rendering the request again in that locale.
//
// The stock bases are written in English ("en"): a chain that reaches
// "en" ends at the base, so a request for English is answered in English
// whatever the account's default. A custom template's base has no
// language the store records, so such a request falls to the account's
// default when the template has a variant for it.
//
// Variants of a stock template are files <slug>.<tag>.tmpl beside it (see
// below); the catalogue has Hindi ("hi") variants of standard-otp and
// order-confirmed. A custom template's variants are its Locales, by tag:
// for each kind, a store.Body as in Bodies. Check holds them to their
// base, so that a mistake in one shows when the template is saved: each
// tag is a locale, distinct from the others once canonical ("hi-IN" and
// "hi_in" are one); a variant words only kinds the base serves, uses only
// the base's variables, has every part (subject, HTML, text) that the
// base's body of that kind has, and each such part uses every variable
// without a default that the base's part uses. Its errors name the part
// as "locales.<tag>.<part>": "locales.hi.sms", "locales.hi.email.html".
// Values are resolved and checked once for every wording (a variable that
// starts a URL attribute in any variant's HTML is a URL in all of them),
// and Rendered.Values are in declaration order whatever the wording.
//
// # Which template a slug names
//
// The account's custom template with the slug comes first, so an account
// can reword a stock message; then the stock template. An unknown slug is
// InvalidArgument on "template_slug", naming the slug and the nearest
// known slugs.
//
// # Variables
//
// Variables are record.Vars: name to string value. All values are strings.
// An array of values in the request (see record.Vars) arrives as positional
// keys "1", "2", ...: positional values fill the template's variables in
// declaration order (the order of the catalogue's "variables" then
// "optional" lines, or of a custom template's Variables then first use).
// Names and positions may be mixed; a position and a name that give one
// variable two different values is an error.
//
// The renderer then applies these rules, and reports every broken one in
// one InvalidArgument error, each on its field "variables.NAME":
//
//   - Unknown names are rejected, listing the template's variables, with
//     one exception: OTP, ACTION and BRAND_NAME are ignored by templates
//     that do not use them, because channels fill them from request fields
//     (otp, action, brand) whatever the template.
//   - Values are cleaned: tabs and line breaks become spaces (no value can
//     break a subject line or header), other control characters,
//     bidirectional overrides, byte-order marks and invalid UTF-8 are
//     removed, and surrounding space is trimmed. Values longer than
//     MaxValueLen bytes, or more than MaxVars variables, are rejected.
//   - An empty value counts as not given. Defaults: ACTION is
//     "verification"; BRAND_NAME is the account's name. Every other
//     variable is required, and each missing one is named.
//   - Rules by name: OTP is 4 to 8 digits; DATE and names ending in
//     _DATE (EXPIRY_DATE, DUE_DATE, ...) are real dates written
//     DD/MM/YYYY; LINK, URL and names ending in _LINK or _URL are absolute
//     http or https URLs with a host and no user info; DAYS_LEFT is a whole
//     number. Error messages never repeat a value: it may be an OTP.
//
// # Output
//
// chat.Kind gives Rendered.Text from the chat body; sms.Kind gives
// Rendered.Text from the SMS body; email.Kind gives Subject, HTML and Text.
// Any other kind gives, from a custom template's body for that kind, the
// parts it has: Subject, HTML and Text.
// Rendered.Values are the variables' values in declaration order, and
// Rendered.Class the template's price class.
//
// In HTML bodies every value is escaped as html.EscapeString does. The
// compiler follows the HTML around each placeholder: a placeholder that
// starts a URL attribute (href, src, ...) makes its variable a URL that
// must pass the http(s) rule above; further along a URL attribute a value
// is path- or query-escaped so it cannot add parameters. Placeholders in
// <script>, <style>, style or on* attributes, unquoted attribute values,
// or tag and attribute names are compile errors. Text bodies, SMS, chat and
// subjects take values as cleaned, unescaped.
//
// # Custom templates
//
// A store.Template has a store.Body per channel kind it serves, in Bodies:
// Text for chat.Kind and sms.Kind; Subject, HTML and Text for email.Kind;
// for any other kind, such as a channel written outside this module, the
// parts that channel documents, with no change here. Each part is compiled
// by its form: Subject as one line, HTML with every value escaped, Text as
// it is. A kind without a body, or whose body is empty, is a channel the
// template does not serve, and rendering for it is InvalidArgument on
// "template_slug"; a body needs a Text or HTML part, not a Subject alone.
// Its Variables list the variables it requires; any other variable its
// bodies use is required as well, unless it has a default. An empty Class
// means transactional; CRLF line ends become LF. Its Locales are its
// variants (see Locales). Check validates a template before a host stores
// it.
//
// # The stock catalogue
//
// The catalogue lives in catalogue/ as one <slug>.tmpl file per template,
// embedded in the binary. A file has "key: value" header lines (about,
// class, variables, optional, cloud) and five sections, each starting with
// a line "--- <name>": chat, sms, email.subject, email.html and
// email.text. The email.html section is wrapped in catalogue/layout.html at
// its "<!-- BODY -->" line. Every variable a template declares is used in
// its chat, SMS, HTML and text bodies, and every variable used is
// declared; SMS bodies use only the GSM 03.38 basic character set. To add
// a template, add a file: New compiles it and the package's tests check it.
//
// A variant is a file <slug>.<tag>.tmpl, the tag canonical
// (standard-otp.hi.tmpl), with the same five sections in its language,
// each using exactly the variables of the base's section, and header
// lines "cloud" (its cloud template's name and language; by default the
// base's name and CloudLanguage of the tag) and "action" (ACTION's
// default in its language, so that a Hindi code is a "सत्यापन" code, not a
// "verification" one); the class and variables are the base's. Its
// email.html is wrapped in catalogue/layout.<language>.html, which must
// exist: the layout's lang attribute and footer are in the variant's
// language. A variant's SMS is not GSM-7 when its script is not Latin:
// it goes as UCS-2, 70 characters a segment.
//
// The stock variables are these (OTP, ACTION, NAME, PLAN_NAME,
// AMOUNT, EXPIRY_DATE, INVOICE_NO, DAYS_LEFT, SERVICE_NAME, TOKEN_NO,
// LINK, BRAND_NAME) plus REASON, STATUS, PAYMENT_ID, DATE, DUE_DATE,
// BALANCE, ORDER_ID, DELIVERY_DATE, TRACKING_LINK, TIME, DISCOUNT and
// CODE. AMOUNT, BALANCE and DISCOUNT are shown as given: include the
// currency ("Rs 499", "₹499.00", "20%"); SMS bodies stay in GSM-7 only
// when the values do.
//
// # Cloud templates
//
// CloudTemplate maps a slug and its variables to a cloud-channel template
// (name, language, positional parameters in declaration order), so the
// chat channel can send template_slug through the cloud gateway. The
// cloud template must be registered under that name with the chat body's
// wording, its placeholders numbered in declaration order. The locale
// picks the wording as for a chat render, and the language follows it: a
// stock variant's "cloud" line, a custom variant's tag as CloudLanguage
// writes it ("hi", "hi_IN"), else the base's (en_US). Each variant is
// registered as its own template of that name and language.
package template
