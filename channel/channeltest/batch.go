package channeltest

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/notifykit/notify"
)

// testBatch delivers the batch requests in batches of at most MaxBatch.
func (k *kit) testBatch(t *testing.T) {
	bd := k.h.Batch
	if bd == nil {
		t.Skip("Harness.Batch is nil")
	}
	most := bd.MaxBatch()
	if most < 1 {
		t.Fatalf("MaxBatch() = %d, want at least 1 (notify.BatchDeliverer)", most)
	}
	envs := make([]*notify.Envelope, len(k.h.BatchRequests))
	for i, req := range k.h.BatchRequests {
		what := fmt.Sprintf("Harness.BatchRequests[%d]", i)
		envs[i] = k.forDelivery(t, what, i, req)
		envs[i].ID = fmt.Sprintf("channeltest-batch-%d", i)
		k.checkHeader(t, what, k.h.Channel.Kind(), envs[i])
		if i > 0 {
			a, b := *envs[0], *envs[i]
			a.To, a.ID, a.IdempotencyKey, b.To, b.ID, b.IdempotencyKey = "", "", "", "", "", ""
			if diff := diffEnvelope(&a, &b); diff != "" {
				t.Fatalf("channeltest: %s's envelope differs from the first's in %s, not only in To: a batch is one message to several recipients", what, diff)
			}
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	batch := envs[:min(most, len(envs))]
	before := k.counts()
	if res, err := deliverBatch(ctx, bd, batch); err == nil {
		t.Errorf("DeliverBatch with an ended context succeeded (%d results): it must honour ctx", len(res))
	}
	if d := k.taken(before); len(d) > 0 {
		t.Errorf("DeliverBatch with an ended context: the fakes took %v", d)
	}
	provider := envs[0].Provider
	for start := 0; start < len(envs); start += most {
		batch := envs[start:min(start+most, len(envs))]
		what := fmt.Sprintf("DeliverBatch of Harness.BatchRequests[%d:%d]", start, start+len(batch))
		before := k.counts()
		res, err := deliverBatch(t.Context(), bd, batch)
		if err != nil {
			t.Errorf("%s: %v", what, err)
			continue
		}
		if len(res) != len(batch) {
			t.Errorf("%s: %d results for %d envelopes (notify.BatchDeliverer: one per envelope, in order)", what, len(res), len(batch))
			continue
		}
		for i, r := range res {
			k.checkResult(t, fmt.Sprintf("%s, result %d", what, i), r, provider)
		}
		if d := k.taken(before); !maps.Equal(d, map[string]int{provider: len(batch)}) {
			t.Errorf("%s: the fakes took %v, want %d messages taken by %q", what, d, len(batch), provider)
		}
	}
}

// deliverBatch calls DeliverBatch, turning a panic into an error.
func deliverBatch(ctx context.Context, bd notify.BatchDeliverer, envs []*notify.Envelope) (res []*notify.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("channeltest: DeliverBatch panicked: %v", p)
		}
	}()
	return bd.DeliverBatch(ctx, envs)
}
