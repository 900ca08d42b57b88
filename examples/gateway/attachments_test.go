package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

func TestMaxAttachmentBytes(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want int64
		bad  bool
	}{{"", 0, false}, {"1048576", 1 << 20, false}, {"0", 0, true}, {"-5", 0, true}, {"10MiB", 0, true}} {
		t.Setenv("NOTIFY_SMTP_MAX_ATTACHMENT_BYTES", tc.env)
		n, err := maxAttachmentBytes()
		if n != tc.want || (err != nil) != tc.bad {
			t.Errorf("%q: %d, %v; want %d, error %v", tc.env, n, err, tc.want, tc.bad)
		}
	}
}

// TestDevAttachmentsFromThisMachine: with NOTIFY_DEV_ATTACHMENTS=loopback
// an e-mail's attachment is fetched from an https server on this machine
// named under .test (trusted through NOTIFY_DEV_ATTACHMENTS_CA), and the
// mail goes; without it the same URL fails, refunded.
func TestDevAttachmentsFromThisMachine(t *testing.T) {
	files, caFile := localFileServer(t, "files.test")
	body := `{"to":"asha@example.com","subject":"Invoice 81","message":"Attached.","purpose":"invoice",` +
		`"attachments":[{"url":"https://files.test:` + files.port + `/inv/81.pdf","file_name":"Invoice-81.pdf"}]}`

	g := start(t, map[string]string{"NOTIFY_DEV_ATTACHMENTS": "loopback", "NOTIFY_DEV_ATTACHMENTS_CA": caFile})
	if a := g.post(t, "/email/send", g.key, body); a.status != 200 || a.body["status"] != "sent" {
		t.Fatalf("a local attachment with the switch: %d %s", a.status, a.raw)
	}
	if n := files.hits.Load(); n != 1 {
		t.Fatalf("the file server was asked %d times, want once", n)
	}

	off := start(t, map[string]string{})
	if a := off.post(t, "/email/send", off.key, body); a.status == 200 {
		t.Fatalf("a local attachment without the switch went: %s", a.raw)
	}
	if n := files.hits.Load(); n != 1 {
		t.Fatalf("without the switch the file server was asked %d times in all, want the first once", n)
	}
}

// fileServer is an https server of a PDF on loopback.
type fileServer struct {
	port string
	hits atomic.Int32
}

// localFileServer starts an https server on 127.0.0.1 whose certificate
// names host, and returns it with a PEM file of that certificate.
func localFileServer(t *testing.T, host string) (*fileServer, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := &fileServer{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs.hits.Add(1)
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write([]byte("%PDF-1.4 invoice 81"))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, fs.port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return fs, caFile
}
