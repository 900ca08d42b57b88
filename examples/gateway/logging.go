package main

import (
	"io"
	"log/slog"
)

// newLogger returns the gateway's logger, writing to stdout.
func newLogger(env func(string) string, stdout io.Writer) (*slog.Logger, error) {
	return slog.New(slog.NewTextHandler(stdout, nil)), nil
}
