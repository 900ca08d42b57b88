package qrchat_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/provider/qrchat"
)

const (
	benchMediaSize = 16 << 20 // the default Config.MediaMaxBytes
	benchSenders   = 8
)

// BenchmarkMediaPeakHeap sends benchSenders 16 MiB documents at once, over
// loopback, to a stand-in gateway that reads and discards each body, and
// reports the peak of the heap above what it was before the sends
// (peak-MiB, the largest of all iterations). "stream" is the provider;
// "whole" is the way it worked before, measured in the same run as the
// baseline: the file read whole, base64-encoded into a string, the JSON
// body marshalled, then posted.
func BenchmarkMediaPeakHeap(b *testing.B) {
	file := append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte("0123456789abcdef"), benchMediaSize/16)...)[:benchMediaSize]
	media := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Length", fmt.Sprint(len(file)))
		w.Write(file)
	}))
	defer media.Close()
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			io.WriteString(w, `{"name":"default","status":"WORKING"}`)
			return
		}
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil || n < benchMediaSize*4/3 {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"true_919876543210@c.us_3EB0BENCH"}`)
	}))
	defer gw.Close()
	port := media.Listener.Addr().(interface{ AddrPort() netip.AddrPort }).AddrPort().Port()
	mediaURL := fmt.Sprintf("https://media.example.com:%d/big.pdf", port)
	tlsConf := media.Client().Transport.(*http.Transport).TLSClientConfig

	b.Run("stream", func(b *testing.B) {
		p, err := qrchat.New(qrchat.Config{BaseURL: gw.URL, HTTPClient: gw.Client(), StatusTTL: time.Hour,
			Resolver: loopResolver{}, AllowMediaAddr: func(a netip.Addr) bool { return a.IsLoopback() },
			MediaTLSConfig: tlsConf})
		if err != nil {
			b.Fatal(err)
		}
		env := mediaEnv(mediaURL, chat.MediaDocument, "big.pdf", "application/pdf", "Your file")
		measurePeak(b, func() error {
			_, err := p.Send(context.Background(), env)
			return err
		})
	})
	b.Run("whole", func(b *testing.B) {
		mediaClient := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConf,
			DialContext: (&netDialer{}).dial}}
		defer mediaClient.CloseIdleConnections()
		gwClient := gw.Client()
		measurePeak(b, func() error { return sendWhole(mediaClient, gwClient, gw.URL, mediaURL) })
	})
}

// measurePeak runs benchSenders calls of send at once, b.N times, samples
// the heap meanwhile and reports its peak above the heap before.
func measurePeak(b *testing.B, send func() error) {
	var peak uint64
	for range b.N {
		runtime.GC()
		base := heapBytes()
		stop := make(chan struct{})
		sampled := make(chan uint64)
		go func() { // the sampler: ends when stop closes
			var top uint64
			tick := time.NewTicker(200 * time.Microsecond)
			defer tick.Stop()
			for {
				if h := heapBytes(); h > top {
					top = h
				}
				select {
				case <-stop:
					sampled <- top
					return
				case <-tick.C:
				}
			}
		}()
		var wg sync.WaitGroup
		errs := make(chan error, benchSenders)
		for range benchSenders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- send()
			}()
		}
		wg.Wait()
		close(stop)
		top := <-sampled
		close(errs)
		for err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		if top > base && top-base > peak {
			peak = top - base
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
}

// heapBytes is the heap's objects, live or not yet swept.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// sendWhole is the old way of a media send: the whole file in memory,
// then its base64 string, then the marshalled JSON body.
func sendWhole(mediaClient, gwClient *http.Client, gwURL, mediaURL string) error {
	resp, err := mediaClient.Get(mediaURL)
	if err != nil {
		return err
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, benchMediaSize+1))
	resp.Body.Close()
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]any{"session": "default", "chatId": "919876543210@c.us", "caption": "Your file",
		"file": map[string]string{"mimetype": "application/pdf", "filename": "big.pdf", "data": base64.StdEncoding.EncodeToString(data)}})
	if err != nil {
		return err
	}
	ans, err := gwClient.Post(gwURL+"/api/sendFile", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer ans.Body.Close()
	io.Copy(io.Discard, ans.Body)
	if ans.StatusCode != http.StatusCreated {
		return fmt.Errorf("HTTP %d", ans.StatusCode)
	}
	return nil
}

// netDialer dials every address on loopback, for the baseline's media
// client (media.example.com is the loopback media server).
type netDialer struct{ d net.Dialer }

func (n *netDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	return n.d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
}
