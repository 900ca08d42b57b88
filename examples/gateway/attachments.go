package main

import (
	"fmt"
	"os"
	"strconv"
)

// maxAttachmentBytes reads NOTIFY_SMTP_MAX_ATTACHMENT_BYTES, the most
// bytes the files of one e-mail may add up to (smtp.Config's
// MaxAttachmentBytes): a positive whole number, or empty for the
// provider's default (10 MiB), returned as 0. The built message is held
// in memory while it is sent, about 1.4 times this, so it bounds a
// send's memory too.
func maxAttachmentBytes() (int64, error) {
	s := os.Getenv("NOTIFY_SMTP_MAX_ATTACHMENT_BYTES")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("NOTIFY_SMTP_MAX_ATTACHMENT_BYTES: want a positive number of bytes, such as 10485760 (10 MiB)")
	}
	return n, nil
}
