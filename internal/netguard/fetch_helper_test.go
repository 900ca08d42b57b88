package netguard

import (
	"context"
	"io"
)

// File is a fetched response body.
type File struct {
	// Data is the whole body, at most Config.MaxBytes long.
	Data []byte
	// ContentType is the response's Content-Type header, possibly empty.
	ContentType string
}

// Fetch opens raw and reads its body whole: the tests' way to see what
// Open and Body.Read answer together.
func (g *Guard) Fetch(ctx context.Context, raw string) (*File, error) {
	b, err := g.Open(ctx, raw)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	data, err := io.ReadAll(b)
	if err != nil {
		return nil, err
	}
	return &File{Data: data, ContentType: b.ContentType}, nil
}
