// Package pushchannel is a fourth channel, mobile push notifications,
// written entirely outside the notify module's root, stores and HTTP
// adapter: the proof that a channel is a plugin. It owns its request
// (Request), its content (Message), its rules (Prepare), its price
// (Prices, a notify.Pricer wrapping the price list of the other
// channels), its vendor (Provider, a JSON-over-HTTP push service), its
// HTTP decoder (Decode, joined to the API with httpapi.WithRoute) and its
// request codec (Channel.EncodeRequest and DecodeRequest, a
// notify.RequestCodec: versioned JSON), which lets a push wait on a queue
// (queued.Sender.Enqueue, SendAt) or be a step of a timed fallback. Its
// conformance_test.go runs the channel kit, channel/channeltest.
//
// Wired into a Notifier with notify.WithChannel, a push is sent, priced,
// charged, recorded, reported (Provider's messages take delivery reports
// through Notifier.Report like any other) and refunded as any message is
// (a failure reported after acceptance too: push has no ReportHandler to
// keep the charge, as the SMS channel does), with no line of the root, memstore, pgstore or httpapi changed:
//
//	n, err := notify.New(accounts, memstore.NewLedger(wal),
//		notify.WithChannel(pushchannel.New(pushchannel.NewProvider(baseURL, key, nil))),
//		notify.WithPrices(&pushchannel.Prices{Next: wallet.DefaultINR(), Push: 5}))
//	api, err := httpapi.New(n, accounts, httpapi.WithRoute("/push/send", pushchannel.Decode))
//
// The push service it speaks is made up, but shaped like the real ones:
// POST <base>/v1/send with a Bearer key and {"token", "title", "body",
// "ref"}; 200 {"id"} when it takes the message, 4xx {"error": {"code",
// "message"}} when it refuses, 5xx {"error": ...} when it is busy.
package pushchannel
