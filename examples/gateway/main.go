// Command gateway runs the notification gateway: the JSON-over-HTTP API of
// package httpapi on top of an in-process notify.Notifier.
//
//	go run ./examples/gateway
//
// from the repository root, whose go.work joins this module to the
// library's. The gateway is a module of its own so that the library's
// go.mod requires none of the gateway's test tools (its browser driver);
// its go.mod replaces the library with this checkout (../..).
//
// It works on a fresh machine with no configuration: a demo account with a
// random API key and a ₹100.00 wallet, the stock templates, an in-process
// SMTP server whose messages are logged, and logging providers for SMS,
// chat and push. Environment variables (see config.go and the README)
// point it at real vendors and at PostgreSQL.
//
// With NOTIFY_DATABASE_URL the account, its keys and its wallet outlive
// the process; the demo account is made on the first start, and later
// starts keep it as it is (as the admin API left it). NOTIFY_API_KEY is then the demo account's only key:
// starting with another one revokes the old one. Without NOTIFY_API_KEY
// the first start chooses a random key and prints it, and later starts
// keep that key (they cannot print it: only its digest is stored). The
// wallet is opened with NOTIFY_BALANCE once; later starts print what
// remains of it.
//
// NOTIFY_DLT sets how the SMS dlt route treats DLT template IDs:
//
//	spec    the default: the route takes the client's operator-registered
//	        dlt_template_id and dlt_entity_id; a template the demo account
//	        has not registered is sent as given (its dlt_entity_id is then
//	        required, and the operator's scrubber judges the text)
//	strict  only the demo account's registered templates, whose text is
//	        checked against them before sending
//
// Any other value of NOTIFY_DLT is a configuration error.
//
// SMS go to any country the account may send to (NOTIFY_COUNTRIES, or
// the admin API), through the Indian bulk vendor (NOTIFY_SMS_URL), MSG91
// (NOTIFY_MSG91_*), Twilio (NOTIFY_TWILIO_*) and Vonage
// (NOTIFY_VONAGE_*), as the rules of NOTIFY_SMS_ROUTES pick them, each
// message failing over to its next vendor after a certain, temporary
// refusal, with circuit breakers (NOTIFY_BREAKER) and per-country prices
// (NOTIFY_SMS_PRICES); see sms.go, config_sms.go and the README.
//
// Push notifications go to browsers through Web Push (NOTIFY_WEBPUSH_*)
// and to apps through FCM (NOTIFY_FCM_*), to the devices an app registered
// for its users (the registry of /api/v1/push/subscriptions, kept with the
// other stores); see push.go and config_push.go.
//
// Beside the API it serves, at its root: the development outbox at
// /outbox (NOTIFY_OUTBOX), the admin API at /admin/v1 (NOTIFY_ADMIN_KEY),
// /healthz, /readyz and /metrics (NOTIFY_METRICS_TOKEN), and the vendors'
// delivery-report webhooks under /webhooks/. NOTIFY_LOG_FORMAT=json writes
// JSON logs.
//
// Sends may be queued (Prefer: respond-async) or scheduled (send_at) on
// a queue (queue.go): in memory, or on PostgreSQL beside the records,
// shared by every instance on the database. NOTIFY_WORKERS (default 4)
// workers of each instance deliver them, and those instances run the
// periodic jobs (the reconciler, the cleanup of expired rows, the sweep
// of expired verifications) on the queue, one at a time across them; 0
// workers: the instance only queues.
//
// SIGINT or SIGTERM stop it gracefully: no new requests are accepted and
// the sends in flight finish, each charged only with its receipt; then
// the workers stop, letting the sends they hold finish.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/otelnotify"
	"github.com/notifykit/notify/outbox"
	"github.com/notifykit/notify/phone"

	// Every country's numbers, in every channel and in verify: the
	// account's allow list says where it may send.
	_ "github.com/notifykit/notify/phone/world"
	"github.com/notifykit/notify/provider/cloudchat"
	"github.com/notifykit/notify/provider/logprovider"
	"github.com/notifykit/notify/provider/qrchat"
	"github.com/notifykit/notify/provider/smtp/smtptest"
	"github.com/notifykit/notify/template"
	"github.com/notifykit/notify/wallet"
)

// demoAccount is the account the API key belongs to.
const demoAccount = "demo"

// The demo account's registered DLT template and principal entity, and
// its DLT sender header.
const (
	demoDLTTemplate = "1107161234567890123"
	demoDLTEntity   = "1201161234567890123"
	demoDLTHeader   = "ACMEIN"
)

// shutdownGrace bounds how long in-flight requests may take after a
// signal; it outlasts the Notifier's default attempt timeout and retries.
const shutdownGrace = 30 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
}

// run runs the gateway until ctx ends, then shuts it down gracefully. env
// reads the configuration (os.Getenv in main); the banner and the logs go
// to stdout.
func run(ctx context.Context, env func(string) string, stdout io.Writer) error {
	return runWith(ctx, env, stdout, deps{})
}

// deps are what tests replace; the zero value is production's.
type deps struct {
	// resolver resolves media hosts for the chat channel's URL check.
	// Nil: net.DefaultResolver.
	resolver chat.Resolver
	// tracer takes the place of the OTEL_* variables' tracing (tracing.go).
	// Nil: those variables decide.
	tracer trace.TracerProvider
	// webPushClient sends the Web Push provider's requests
	// (webpush.Config.HTTPClient), such as a fake push service's client
	// (webpushtest.Server.Client). Nil: the provider's own, which dials
	// public addresses only.
	webPushClient *http.Client
}

func runWith(ctx context.Context, env func(string) string, stdout io.Writer, d deps) error {
	cfg, err := loadConfig(env)
	if err != nil {
		return err
	}
	logger := newLogger(cfg, stdout)
	for _, w := range cfg.warnings {
		logger.Warn(w)
	}

	acct := &notify.Account{ID: demoAccount, Name: "Demo account", Currency: cfg.prices.currency,
		// NOTIFY_REGION and NOTIFY_COUNTRIES; nil, its region only.
		Region: cfg.region, Countries: cfg.countries}
	if err := sms.SetSettings(acct, sms.Settings{SenderID: "NOTIFY",
		// Its sender headers: its sender ID and its DLT header; any other
		// sender_id is refused.
		SenderIDs: []string{"NOTIFY", demoDLTHeader},
		// One registered DLT template, so that the dlt route can be tried.
		DLTTemplates: []sms.DLTTemplate{{ID: demoDLTTemplate, EntityID: demoDLTEntity,
			Content: "Dear {#var#}, your order {#var#} has shipped."}}}); err != nil {
		return err
	}
	if err := chat.SetSettings(acct, chat.Settings{PrimaryGateway: chat.GatewayCloud}); err != nil {
		return err
	}
	st, err := openStores(ctx, cfg, acct, logger)
	if err != nil {
		return err
	}
	defer st.close()
	// The banner shows what the wallet holds: on PostgreSQL a restart
	// finds what earlier runs left, not NOTIFY_BALANCE.
	bal, err := st.ledger.Balance(ctx, acct.ID)
	if err != nil {
		return storeError("reading the demo wallet", err)
	}

	renderer, err := template.New(st.templates)
	if err != nil {
		return err
	}
	var closers []func()
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}()

	// SMS: the vendors configured, routed by NOTIFY_SMS_ROUTES, or a log.
	smsCh, smsProviders, closeSMS, err := smsChannel(cfg, renderer, logger)
	if err != nil {
		return err
	}
	closers = append(closers, closeSMS)

	// Chat: both gateways, each a vendor or a log. Once either is a real
	// vendor, the other is a vendor or absent: a log would take real
	// people's messages (codes above all) and charge for them.
	var cloud, qr notify.Provider
	otpTemplate := cfg.cloudOTPTemplate
	if cfg.cloudToken == "" && cfg.qrURL == "" {
		cloud, qr = logprovider.New(logger, cloudLogProvider), logprovider.New(logger, qrLogProvider)
		otpTemplate = "otp_code" // the logging stand-in shows codes as the template would carry them
	}
	if cfg.cloudToken != "" {
		cloud, err = cloudchat.New(cloudchat.Config{BaseURL: cfg.cloudURL, Token: cfg.cloudToken, PhoneNumberID: cfg.cloudPhone,
			Version: cfg.cloudVersion})
		if err != nil {
			return fmt.Errorf("NOTIFY_CLOUD_*: %w", err)
		}
	}
	if cfg.qrURL != "" {
		qr, err = qrchat.New(qrchat.Config{BaseURL: cfg.qrURL, APIKey: cfg.qrKey, Session: cfg.qrSession,
			Edition: cfg.qrEdition, CoreMedia: cfg.qrCoreMedia, CheckNumber: cfg.qrCheckNumber})
		if err != nil {
			return fmt.Errorf("NOTIFY_QR_*: %w", err)
		}
	}
	chatCh, err := chat.New(chat.Config{Cloud: cloud, QR: qr, Renderer: renderer, Resolver: d.resolver,
		CloudOTPTemplate: otpTemplate, CloudOTPLanguage: cfg.cloudOTPLanguage})
	if err != nil {
		return err
	}

	// Push: Web Push and FCM as configured, or logging stand-ins for both
	// (push.go); the registry keeps the devices registered for the
	// recipients, and reads the suppression list, where a device the
	// push service declared gone lands.
	pushes, err := pushChannel(cfg, logger, d)
	if err != nil {
		return err
	}
	closers = append(closers, pushes.close)
	registry, err := push.NewRegistry(st.pushDevices, st.ledger)
	if err != nil {
		return err
	}

	// The outbox shows what was sent; nil when NOTIFY_OUTBOX is off.
	box, err := newOutbox(cfg, logger)
	if err != nil {
		return err
	}

	// E-mail: a real SMTP server, or the in-process one, whose log hides
	// the codes the mail declares (codes hears them as mail is accepted).
	codes := newMailCodes(cfg)
	emailCh, mail, smtpInfo, closeMail, err := emailChannel(cfg, renderer, logger, box, codes)
	if err != nil {
		return err
	}
	closers = append(closers, closeMail)

	opts := []notify.Option{
		notify.WithChannel(smsCh),
		notify.WithChannel(chatCh),
		notify.WithChannel(emailCh),
		notify.WithChannel(pushes.ch),
		notify.WithPrices(cfg.prices.pricer()),
		notify.WithIdempotency(st.idem),
		notify.WithSettleAfter(cfg.settleAfter),
		notify.WithTimeout(cfg.attemptTimeout),
		notify.WithRateLimit(st.rate),
	}
	if st.otp != nil {
		opts = append(opts, notify.WithOTPThrottle(st.otp))
	}
	mon, err := newMonitor(cfg, logger, knownSeries(cfg.prices.codes(), smsProviders, []notify.Provider{cloud, qr}, []notify.Provider{mail}, pushes.providers))
	if err != nil {
		return err
	}
	opts = append(opts, mon.options()...)
	if cfg.breaker != nil {
		opts = append(opts, notify.WithBreaker(mon.breakers(*cfg.breaker, logger)))
	}
	// Traces, when the OTEL_* variables name a collector; flushed on exit.
	tr, err := newTracing(ctx, env, d.tracer, logger)
	if err != nil {
		return err
	}
	closers = append(closers, tr.close)
	opts = append(opts, tr.options()...)
	opts = append(opts, box.options()...)
	opts = append(opts, codes.options()...)
	// Sends the API queues or schedules wait on the queue, in the database
	// with the records when there is one.
	q, err := newQueue(ctx, cfg, st, logger)
	if err != nil {
		return err
	}
	opts = append(opts, notify.WithQueue(q))
	// A send through the API reads its account once, by its key: the
	// Notifier takes that read from the request (a database send is one
	// round trip shorter), and reads the store outside a request.
	n, err := notify.New(httpapi.RequestAccounts(st.accounts), st.ledger, opts...)
	if err != nil {
		return err
	}
	// Every configuration has a queue: "Prefer: respond-async" queues a
	// send, and a body's send_at schedules it.
	apiOpts := []httpapi.Option{httpapi.WithLogger(logger), httpapi.WithRespondAsync(),
		// The device registry's routes and, with Web Push, the VAPID key.
		httpapi.WithPush(httpapi.PushConfig{Registry: registry, VAPIDPublicKey: pushes.vapidKey})}
	apiOpts = append(apiOpts, preferenceAPI(st)...)                 // preference.go
	prefRoutes, linkOpts, err := preferencePage(cfg, st, n, logger) // preference.go
	if err != nil {
		return err
	}
	apiOpts = append(apiOpts, linkOpts...)
	vsvc, err := verifications(cfg, st, n, logger)
	if err != nil {
		return err
	}
	if vsvc != nil {
		apiOpts = append(apiOpts, httpapi.WithVerifications(vsvc))
	}
	api, err := httpapi.New(n, st.accounts, apiOpts...)
	if err != nil {
		return err
	}
	hooks, hookPaths, hookStats, err := webhooks(cfg, n)
	if err != nil {
		return err
	}
	if err := mon.countWebhooks(hookStats); err != nil {
		return err
	}
	var routes []route
	if hooks != nil {
		routes = append(routes, route{webhookPrefix, hooks})
	}
	routes = append(routes, mon.routes(st, smsProviders, append([]notify.Provider{cloud, qr, mail}, pushes.providers...))...)
	routes = append(routes, box.routes(cfg)...)
	admin, err := adminRoutes(cfg, st, n, logger)
	if err != nil {
		return err
	}
	routes = append(routes, admin...)
	routes = append(routes, unsubscribeRoutes(cfg, st)...) // suppress.go
	routes = append(routes, prefRoutes...)                 // preference.go
	// The API continues a caller's W3C trace (traceparent), so that a
	// send's spans are children of the caller's; without the header it
	// costs a header lookup.
	access, err := newAccessLog(logger, mon.reg)
	if err != nil {
		return err
	}
	for i := range routes {
		routes[i] = access.wrap(routes[i])
	}
	h := withRoutes(otelnotify.ContinueTrace(api), routes)

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("NOTIFY_ADDR: %w", err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// Above httpapi.DefaultMaxHeaderBytes (64 KiB), so that the
		// handler, not net/http's plain-text 431, answers a large head.
		MaxHeaderBytes: 1 << 20,
		// "OPTIONS *" reaches the handler, which answers JSON.
		DisableGeneralOptionsHandler: true,
		ErrorLog:                     slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	// net/http runs this once the listeners are closed: from here on the
	// requests in flight finish and no new one is accepted.
	srv.RegisterOnShutdown(func() { logger.Info("listener closed; finishing the requests in flight") })
	// The outbox's event streams never go idle: end them, or Shutdown
	// would wait for them until its grace ran out.
	srv.RegisterOnShutdown(box.close)
	printBanner(stdout, cfg, st, bal.Available, "http://"+ln.Addr().String()+httpapi.BasePath, smtpInfo)
	if box != nil {
		fmt.Fprintf(stdout, "outbox: http://%s%s (what was sent, live)\n", ln.Addr(), outbox.DefaultBasePath)
	}
	for _, p := range hookPaths {
		fmt.Fprintf(stdout, "delivery reports: %s\n", p)
	}

	// The workers deliver the queued sends, and the queue runs the
	// periodic tasks (the reconciler, which settles the sends a crash
	// left unfinished, at once and then every half threshold; the
	// database's cleanup; the verifications' sweep) on one instance of
	// those that run workers. They stop after the server: the requests in
	// flight may still queue sends. The deferred stop (which runs before
	// the closers of the providers the workers use, and of the stores)
	// covers the early returns.
	stopQueue := runQueue(cfg, q, n, periodicTasks(n, st, vsvc, logger), logger)
	defer stopQueue()

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	stopQueue()
	logger.Info("stopped")
	return nil
}

// logSMTP returns the callback that logs what the in-process SMTP server
// received: sender, recipients, subject and size, never the body. The
// subject loses OTP-like digit runs and the code the mail declared
// (codes), of up to 10 digits.
func logSMTP(logger *slog.Logger, codes *mailCodes) func(smtptest.Message) {
	return func(m smtptest.Message) {
		subject := ""
		if m.Header != nil {
			subject = m.Header.Get("Subject")
			if dec, err := new(mime.WordDecoder).DecodeHeader(subject); err == nil {
				subject = dec
			}
			subject = logprovider.Redact(subject, codes.of(m), true)
		}
		to := make([]string, len(m.To))
		for i, r := range m.To {
			to[i] = logprovider.MaskRecipient(r)
		}
		logger.Info("smtp message received", "from", m.From, "to", strings.Join(to, ","),
			"subject", subject, "bytes", len(m.Data))
	}
}

// printBanner tells the user where the API is, its key, the demo wallet's
// balance (what it holds now, not NOTIFY_BALANCE: a wallet kept in the
// database has spent some) and what to try. A key chosen through
// NOTIFY_API_KEY is not echoed, and a key kept in the database cannot be:
// only its digest is stored.
func printBanner(w io.Writer, cfg *config, st *stores, balance notify.Money, base, smtpInfo string) {
	key, keyNote := cfg.apiKey, "(random; set NOTIFY_API_KEY to choose one)"
	switch {
	case cfg.keyChosen:
		key, keyNote = "$NOTIFY_API_KEY", "(from NOTIFY_API_KEY)"
	case st.keyKept:
		key, keyNote = "unchanged", "(the demo account keeps the key it has in the database, printed when it was made; set NOTIFY_API_KEY to replace it)"
	}
	balNote := ""
	if st.walletKept {
		balNote = " (the wallet kept in the database; NOTIFY_BALANCE opens a new wallet only)"
	}
	if !balance.Currency.Same(cfg.prices.currency) {
		balNote = fmt.Sprintf(" (the account kept in the database is in %s; NOTIFY_CURRENCY=%s makes a new one only)", balance.Currency.Code, cfg.prices.currency.Code)
	}
	fmt.Fprintf(w, "notify gateway listening on %s\n", base)
	fmt.Fprintf(w, "API key: %s %s\n", key, keyNote)
	fmt.Fprintf(w, "account %q with a balance of %s%s\n", demoAccount, wallet.Format(balance), balNote)
	if st.keyKept {
		key = "<your key>"
	}
	if smtpInfo != "" {
		fmt.Fprintf(w, "e-mail: %s\n", smtpInfo)
	}
	fmt.Fprintf(w, "sms: %s\n", smsSummary(cfg))
	fmt.Fprintf(w, "push: %s\n", pushSummary(cfg))
	fmt.Fprintf(w, "try: curl -s -H \"Authorization: Bearer %s\" -H 'Content-Type: application/json' -d '{\"to\":\"%s\",\"message\":\"Hello from notify\"}' %s/sms\n", key, tryNumber(cfg.region), base)
}

// tryNumber is the number the banner's example sends to: one of the demo
// account's region, written as its people write them.
func tryNumber(region string) string {
	switch region {
	case phone.DefaultRegion:
		return "9876543210"
	case "US":
		return "(415) 555-0100"
	}
	return "+<country code and number>"
}
