// Package adminapi is the admin API of notify: an http.Handler, served
// under BasePath (/admin/v1), with which an operator manages accounts,
// their keys, wallets, DLT templates and custom templates, and reads
// their ledgers and message records. It works on any store.Admin (the
// contract of package store, as its Store): memstore.Admin (one process,
// in memory) and *pgstore.Store.
//
// # Routes
//
//	POST   /admin/v1/accounts                                  create an account (201; its API key once)
//	GET    /admin/v1/accounts?limit=&after=                    list accounts by ID
//	GET    /admin/v1/accounts/{id}                             an account, with its balance
//	POST   /admin/v1/accounts/{id}/disable                     refuse its sends (403 permission_denied)
//	POST   /admin/v1/accounts/{id}/enable                      accept them again
//	POST   /admin/v1/accounts/{id}/rotate-key                  a new API key; every old one stops at once
//	POST   /admin/v1/accounts/{id}/topups                      credit the wallet, once per reference
//	GET    /admin/v1/accounts/{id}/ledger?limit=&after=        the wallet's movements, oldest first
//	GET    /admin/v1/accounts/{id}/messages?limit=&after=      message records, newest first
//	GET    /admin/v1/accounts/{id}/dlt-templates               the DLT templates
//	PUT    /admin/v1/accounts/{id}/dlt-templates/{template}    register one (add or replace by ID)
//	DELETE /admin/v1/accounts/{id}/dlt-templates/{template}    remove one (404 when missing)
//	GET    /admin/v1/accounts/{id}/templates                   the custom templates, by slug
//	PUT    /admin/v1/accounts/{id}/templates/{slug}            register one; it must compile (template.Check)
//	DELETE /admin/v1/accounts/{id}/templates/{slug}            remove one (404 when missing)
//	GET    /admin/v1/accounts/{id}/suppressions?channel=&limit=&after=  the suppression list, by channel then recipient
//	POST   /admin/v1/accounts/{id}/suppressions                {"channel","to","reason"}: add one (idempotent)
//	POST   /admin/v1/accounts/{id}/suppressions/remove         {"channel","to"}: remove one (404 when missing)
//	GET    /admin/v1/accounts/{id}/categories                  the categories of messages, by name
//	PUT    /admin/v1/accounts/{id}/categories/{name}           {"description","opt_in","critical"}: define or replace one
//	DELETE /admin/v1/accounts/{id}/categories/{name}           remove one and its choices (404 when missing)
//	POST   /admin/v1/accounts/{id}/preferences/lookup          {"channel","to"}: one recipient's preferences
//	POST   /admin/v1/accounts/{id}/preferences                 {"channel","to","choices","locale"}: record their choices, locale, or both
//
// The suppression routes serve the store.Suppressions WithSuppressions
// gives (the Notifier's ledger), and are not routed without one. The
// channel is one the Notifier sends on (sms, chat, email or a channel of
// the host's own), the recipient put in that channel's canonical form by
// the Notifier (notify.Notifier.Recipient: an E.164 number, an address in
// lower case with its domain in ASCII, or as the channel writes it), the
// reason unsubscribed, hard_bounce, complaint or manual: each is checked
// before the store is asked. Recipients travel in bodies, never
// in URLs, so that access logs do not collect them; the change log
// (suppression.add, suppression.remove) names the channel and reason only.
//
// The preference routes serve the store.Preferences WithPreferences gives
// (the Notifier's ledger), and are not routed without one. A category
// (store.Category) is named by a send's Category: a recipient may allow or
// decline it per channel, and the Notifier refuses a send of a category
// its recipient declined (notify.CodeDeclined, 422), before anything is
// charged. A category's name is checked by storeutil.CategoryName (400
// naming "name" with storeutil.CategoryRule) and its description by
// storeutil.CheckCategory before the store is asked; a PUT answers the
// category, 201 when it is new and 200 when it replaced one, whose
// choices stay. A lookup or a choice takes the channel and recipient as
// the suppression routes do, in the body; each choice must name a
// category the account defines (400 naming "choices.<name>", nothing
// recorded), and both answer every category of the account with
// "allowed" (what a send of it to the recipient on the channel does: the
// choice when one was made, else not for an opt-in category; always for
// a critical one) and "chosen", and the recipient's "locale" ("" for
// none). A set may give "locale" (a BCP 47 tag, kept canonical; "" forgets
// it), with choices or alone: the locale whose template variant a send
// that names none renders for the recipient. The change log (category.put,
// category.delete, preference.set) names categories, channels and
// choices, and whether a locale was set, never a recipient or a locale.
//
// docs/admin.md gives every request and answer.
//
// # Contract
//
// Every request needs "Authorization: Bearer <admin key>"; the key is
// compared in constant time, over SHA-256 digests, and a missing or wrong
// one is 401 unauthenticated, before the path is looked at. Answers are
// JSON in the public API's shapes: {"success":true,"data":{...}} and
// {"success":false,"error":{"code","message","fields"}}, with the status
// of httpapi.StatusOf: 400 invalid_argument naming each bad field and
// its rule, 404 not_found for an unknown account (or template, or path),
// 405 method_not_allowed (with Allow), 409 conflict, 413
// request_too_large (bodies over MaxBodyBytes, 64 KiB), 415
// unsupported_media_type (a body not sent as application/json), 500
// internal and 503 unavailable when the store fails. A store answers with
// package store's errors, read as the public API's codes
// (store.ErrNotFound is not_found, store.ErrConflict conflict, ...); the
// fields a store refuses with (a record.FieldErrors, which names fields and
// rules only) are answered as the admin API's own, 400 invalid_argument
// naming each. A store's failure is answered with a plain sentence ending
// with the request ID, never in the store's words (which name hosts, ports
// and database users): those are logged under the request ID, by the
// public API's rule (docs/api.md). An account's SMS and chat fields
// (vendor_id, sender_ids, dlt_templates, primary_gateway) are its channel
// settings (sms.Settings, chat.Settings, in notify.Account.Settings);
// stored settings that do not decode are answered as a store failure.
// A custom template's body fields (chat, sms, email_subject, email_html,
// email_text) are its bodies of the chat, SMS and e-mail kinds
// (store.Template.Bodies); bodies of other kinds are not answered, and a
// PUT, which replaces those fields, the variables and the class, keeps
// them (its log line names them as kept_kinds; they must compile with
// the new template, or the PUT is 400 on body). Its variants
// (store.Template.Locales) are the field locales, by tag, by kind (chat,
// sms, email), the body's subject, html and text; a PUT replaces them,
// keeping a variant's bodies of other kinds as it keeps the base's,
// stores the tags canonical, and is 400 naming
// locales.<tag>.<kind>.<part> for a variant template.Check refuses.
// Unknown JSON fields are refused (400 naming the field): a misspelt
// field must not be dropped silently. Every ID in a path ({id},
// {template}, {slug}) and every cursor must be 1 to 255 bytes of valid
// UTF-8 without control characters, and body texts must not hold NUL,
// or the request is 400 naming the field before any store is asked.
// Money is written as the public API writes balances: a decimal string
// and an integer of minor units ("balance":"100.00","balance_minor":10000)
// with a currency object; it is read as "amount":"100.00" or
// "amount_minor":10000, in the account's currency. An account is created
// in any ISO 4217 currency ("currency":"USD"; default INR), whose minor
// unit its amounts are in (a yen has no decimals, a dinar three);
// WithCurrencies limits it to those the server has prices in.
//
// Lists take ?limit= (DefaultLimit 50, 1 to MaxLimit 500; anything else
// is 400) and ?after=, an opaque cursor: the "next" of the page before,
// present only when more may follow.
//
// Store calls run detached from the client's connection, bounded by
// ChangeTimeout: a client that hangs up mid-change does not cut it short.
// After a lost answer, repeat a top-up with the same reference (safe), or
// read the account before creating it again; a rotated key whose answer
// was lost is gone, so rotate again.
//
// A top-up credits the wallet under the ref TopUpRefPrefix+reference, so
// the wallet's ref rules make it idempotent: the same reference and
// amount again credits nothing and answers the same balance; the same
// reference with another amount is 409 conflict.
//
// A created or rotated API key is made with crypto/rand, answered once
// and never stored: the store keeps only its hash. Every request gets a
// random ID, answered as X-Request-ID; every change (account.create,
// account.disable, account.enable, account.rotate_key, wallet.topup,
// dlt_template.put, dlt_template.delete, template.put, template.delete,
// and the suppression and preference actions above)
// is logged at Info with that ID, the action and the account, and never
// with a key.
package adminapi
