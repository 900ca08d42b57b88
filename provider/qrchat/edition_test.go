package qrchat_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/provider/qrchat"
	"github.com/notifykit/notify/record"
)

// TestCoreRefusesMedia: a Core provider (MediaRefuse, the default)
// refuses every media envelope before it asks the gateway or the media
// server anything: InvalidArgument naming media_url. Text still goes.
func TestCoreRefusesMedia(t *testing.T) {
	gw := newFakeWAHA(t)
	gw.setCore(true)
	m := newMediaServer(t)
	cfg := mediaConfig(m, 0)
	cfg.Edition = qrchat.EditionCore
	p := newProvider(t, gw, cfg)
	if p.SupportsMedia() {
		t.Fatal("a Core provider says it supports media")
	}
	for _, kind := range []chat.MediaKind{chat.MediaImage, chat.MediaVideo, chat.MediaDocument} {
		_, err := p.Send(context.Background(), mediaEnv(m.url("/invoice.pdf"), kind, "a.pdf", "application/pdf", "caption"))
		var ne *notify.Error
		if notify.CodeOf(err) != notify.CodeInvalidArgument || !errors.As(err, &ne) || len(ne.Fields) != 1 ||
			ne.Fields[0].Field != "media_url" || !strings.Contains(err.Error(), "Core") {
			t.Fatalf("%s on Core: %v, want InvalidArgument on media_url naming Core", kind, err)
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("the error repeats the media URL's query: %v", err)
		}
	}
	if gw.requests() != 0 || gw.gets() != 0 || m.hits.Load() != 0 {
		t.Fatalf("gateway: %d sends, %d status questions; media server: %d fetches; want none", gw.requests(), gw.gets(), m.hits.Load())
	}
	if _, err := p.Send(context.Background(), textEnv("hi", "")); err != nil {
		t.Fatalf("text on Core: %v", err)
	}
}

// TestCoreMediaAsLink: with MediaAsLink, media go as text, the caption and
// the URL, through sendText without a link preview; nothing is fetched.
func TestCoreMediaAsLink(t *testing.T) {
	gw := newFakeWAHA(t)
	gw.setCore(true)
	m := newMediaServer(t)
	cfg := mediaConfig(m, 0)
	cfg.Edition, cfg.CoreMedia = qrchat.EditionCore, qrchat.MediaAsLink
	p := newProvider(t, gw, cfg)
	if p.SupportsMedia() {
		t.Fatal("a Core provider says it supports media")
	}
	for _, tt := range []struct{ caption, want string }{
		{"Your invoice", "Your invoice\n" + m.url("/invoice.pdf")},
		{"", m.url("/invoice.pdf")},
	} {
		res, err := p.Send(context.Background(), mediaEnv(m.url("/invoice.pdf"), chat.MediaDocument, "a.pdf", "application/pdf", tt.caption))
		if err != nil {
			t.Fatal(err)
		}
		got := gw.last()
		if res.ProviderMessageID == "" || got.Path != "/api/sendText" || got.Text != tt.want || got.LinkPreview == nil || *got.LinkPreview {
			t.Fatalf("gateway received %+v, want sendText %q without a link preview", got, tt.want)
		}
	}
	if m.hits.Load() != 0 {
		t.Fatalf("the media server got %d requests, want none", m.hits.Load())
	}
}

// TestPlusProviderOnCoreGateway: a provider configured for Plus whose
// gateway is Core gets the 422 "available only in Plus version": a
// certain refusal that tells the operator to set EditionCore.
func TestPlusProviderOnCoreGateway(t *testing.T) {
	gw := newFakeWAHA(t)
	gw.setCore(true)
	m := newMediaServer(t)
	p := newProvider(t, gw, mediaConfig(m, 0))
	if !p.SupportsMedia() {
		t.Fatal("a Plus provider says it does not support media")
	}
	for _, tt := range []struct {
		path string
		kind chat.MediaKind
		mime string
	}{{"/photo.png", chat.MediaImage, "image/png"}, {"/clip.mp4", chat.MediaVideo, "video/mp4"}, {"/invoice.pdf", chat.MediaDocument, "application/pdf"}} {
		_, err := p.Send(context.Background(), mediaEnv(m.url(tt.path), tt.kind, "f", tt.mime, ""))
		if notify.CodeOf(err) != notify.CodeRejected || notify.OutcomeOf(err) != record.StateFailed ||
			!strings.Contains(err.Error(), "EditionCore") || !strings.Contains(err.Error(), "Plus version") {
			t.Fatalf("%s: %v, want Rejected telling to set EditionCore", tt.kind, err)
		}
	}
	if gw.count() != 0 {
		t.Fatalf("the gateway took %d messages", gw.count())
	}
}

func TestNewValidatesEdition(t *testing.T) {
	for name, cfg := range map[string]qrchat.Config{
		"edition":    {BaseURL: "http://waha:3000", Edition: "pro"},
		"core media": {BaseURL: "http://waha:3000", Edition: qrchat.EditionCore, CoreMedia: "drop"},
	} {
		if _, err := qrchat.New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
}
