package qrchat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/internal/golden"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/qrchat"
)

// goldenRequests are the requests whose shape is kept in
// testdata/golden/<name>.golden, each with the WAHA documentation page
// (and the DTO of devlikeapro/waha's src/structures) that gives its shape.
var goldenRequests = []struct {
	name   string
	target string // the request's path, which names it among the captured ones
	source string
}{
	{"check-exists", "/api/contacts/check-exists",
		"https://waha.devlike.pro/docs/how-to/contacts/ (ContactsController GET /api/contacts/check-exists, CheckNumberStatusQuery and WANumberExistResult in devlikeapro/waha src/structures/chatting.dto.ts)"},
	{"sendText", "/api/sendText",
		"https://waha.devlike.pro/docs/how-to/send-messages/ (waha-docs api-sendText-code.md; MessageTextRequest in src/structures/chatting.dto.ts)"},
	{"sendImage", "/api/sendImage",
		"https://waha.devlike.pro/docs/how-to/send-messages/ (waha-docs api-sendImage-code.md; MessageImageRequest, BinaryFile in src/structures)"},
	{"sendVideo", "/api/sendVideo",
		"https://waha.devlike.pro/docs/how-to/send-messages/ (waha-docs api-sendVideo-code.md; MessageVideoRequest, VideoBinaryFile in src/structures)"},
	{"sendFile", "/api/sendFile",
		"https://waha.devlike.pro/docs/how-to/send-messages/ (waha-docs api-sendFile-code.md; MessageFileRequest, BinaryFile in src/structures)"},
	{"sendText-media-link", "/api/sendText",
		"https://waha.devlike.pro/docs/how-to/send-messages/ (waha-docs api-sendText-code.md; MessageTextRequest, linkPreview false: WAHA Core, MediaAsLink)"},
}

// TestGoldenRequests sends one message of each kind through the fake and
// compares each request the provider made with its golden file: the
// method and path with query, then the JSON body, indented. Run with
// -update to rewrite the files after a deliberate change.
func TestGoldenRequests(t *testing.T) {
	gw := newFakeWAHA(t)
	m := newMediaServer(t)
	cfg := mediaConfig(m, 0)
	cfg.CheckNumber = true
	p := newProvider(t, gw, cfg)
	ctx := context.Background()
	for _, env := range []*notify.Envelope{
		textEnv("Your order shipped", ""),
		mediaEnv(m.url("/photo.png"), chat.MediaImage, "photo.png", "image/png", "Your photo"),
		mediaEnv(m.url("/clip.mp4"), chat.MediaVideo, "clip.mp4", "video/mp4", "Watch this"),
		mediaEnv(m.url("/invoice.pdf"), chat.MediaDocument, "INV-7.pdf", "application/pdf", "Your invoice"),
	} {
		if _, err := p.Send(ctx, env); err != nil {
			t.Fatal(err)
		}
	}
	core := newFakeWAHA(t)
	core.setCore(true)
	cfg = mediaConfig(m, 0)
	cfg.Edition, cfg.CoreMedia = qrchat.EditionCore, qrchat.MediaAsLink
	if _, err := newProvider(t, core, cfg).Send(ctx, mediaEnv(m.url("/invoice.pdf"), chat.MediaDocument, "INV-7.pdf", "application/pdf", "Your invoice")); err != nil {
		t.Fatal(err)
	}

	seen := map[string][]capturedRequest{}
	for _, r := range gw.requestsSeen() {
		path, _, _ := strings.Cut(r.Target, "?")
		seen[path] = append(seen[path], r)
	}
	for _, r := range core.requestsSeen() {
		if strings.HasPrefix(r.Target, "/api/sendText") {
			seen["core"] = append(seen["core"], r)
		}
	}
	for _, g := range goldenRequests {
		t.Run(g.name, func(t *testing.T) {
			key := g.target
			if g.name == "sendText-media-link" {
				key = "core"
			}
			reqs := seen[key]
			if len(reqs) == 0 {
				t.Fatalf("the provider made no request to %s", g.target)
			}
			got := goldenText(t, g.source, reqs[0])
			file := filepath.Join("testdata", "golden", g.name+".golden")
			golden.Check(t, file, got)
		})
	}
}

// goldenText renders r for a golden file: a comment naming the shape's
// source, the request line, and the body as indented JSON.
func goldenText(t *testing.T, source string, r capturedRequest) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("# Shape: " + source + "\n")
	b.WriteString(r.Method + " " + r.Target + "\n")
	if len(r.Body) > 0 {
		b.WriteString("\n")
		if err := json.Indent(&b, r.Body, "", "  "); err != nil {
			t.Fatalf("the body is not JSON: %v", err)
		}
		b.WriteString("\n")
	}
	// The media server's port changes from run to run.
	return mediaPort.ReplaceAll(b.Bytes(), []byte("media.example.com"))
}

var mediaPort = regexp.MustCompile(`media\.example\.com:[0-9]+`)
