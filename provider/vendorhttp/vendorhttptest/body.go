package vendorhttptest

import (
	"bytes"
	"sync/atomic"
)

// Body is a request body that counts the bytes read from it.
// It is safe for concurrent use (a server may read it on its own
// goroutine while the test looks).
type Body struct {
	r    *bytes.Reader
	read atomic.Int64
}

// NewBody returns a Body of n bytes of "x".
func NewBody(n int) *Body { return BodyOf(bytes.Repeat([]byte("x"), n)) }

// BodyOf returns a Body of p.
func BodyOf(p []byte) *Body { return &Body{r: bytes.NewReader(p)} }

// Read reads from the body and counts what it read.
func (b *Body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read.Add(int64(n))
	return n, err
}

// Close does nothing.
func (b *Body) Close() error { return nil }

// BytesRead returns how many bytes were read so far.
func (b *Body) BytesRead() int64 { return b.read.Load() }
