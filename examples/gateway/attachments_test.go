package main

import "testing"

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
