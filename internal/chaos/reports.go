package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/notifykit/notify/record"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/memprovider"
)

// story is what the vendors report about one message they took.
type story struct {
	account, id string
	kind        notify.Kind
	provider    string
	states      []record.State // in the order the reports are written
	failover    bool           // a failed report the QR gateway can overcome
	// unmatched: the record names another provider than the one that took
	// the message, so the reports cannot find it (a send that fell over to
	// the QR gateway and then crashed, or whose provider panicked: the
	// record cannot know who has it) and change nothing.
	unmatched bool
	before    record.State
}

// posted is one report as the run sends it.
type posted struct {
	rep      *notify.DeliveryReport
	notFound bool // forged, or of an unmatched story
}

// reportRetries bounds the passes over reports that asked to come again
// (a failover the QR gateway refused for now; a report by a vendor ID no
// record has while a failover is in flight), as a vendor would resend.
const reportRetries = 5

// reports is the delivery-report phase of a run with message records:
// every message a vendor took gets a story (delivered then read, read
// before delivered, sent then delivered, failed, or nothing), each report
// is sent one to three times, all of them shuffled and taken by 16
// goroutines at once, so that duplicates race; forged reports (messages
// no vendor issued, another provider's message, another account's) go
// with them and must all be NotFound. It returns the messages a report
// failed.
func reports(t *testing.T, s Stores, n *notify.Notifier, providers []*memprovider.Provider, seed [32]byte) map[string]bool {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(seed[3]), 7))
	stories, all := tellStories(t, s, providers, r)
	forged := forgeries(stories, s.Account)
	for _, rep := range forged {
		all = append(all, posted{rep: rep, notFound: true})
	}
	// Reports of one message keep their order only as far as the shuffle
	// leaves it: out of order is the point.
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })

	failed := postReports(t, n, all)
	unmatched := checkStories(t, s, stories)
	failovers := checkFailovers(t, providers)
	t.Logf("%d messages reported on (%d that no report can find), %d failed by a report (%d sent again), %d forged reports refused",
		len(stories), unmatched, len(failed), failovers, len(forged))
	return failed
}

// tellStories gives every message the providers took a story, from r,
// and returns the stories and the reports that tell them, in order. Each
// story notes what its record was before any report, and whether its
// record names the provider that took it (else no report can find it).
func tellStories(t *testing.T, s Stores, providers []*memprovider.Provider, r *rand.Rand) ([]*story, []posted) {
	t.Helper()
	var stories []*story
	var all []posted
	for _, p := range providers {
		for _, env := range p.Sent() {
			st := newStory(r, env, p.Name())
			stories = append(stories, st)
			m, err := s.Ledger.Message(context.Background(), st.account, st.id)
			if err != nil {
				t.Fatalf("message %s a vendor took has no record: %v", st.id, err)
			}
			st.unmatched, st.before = m.Provider != st.provider, m.State
			if st.unmatched && st.kind == sms.Kind {
				// An SMS record names the provider in flight before each
				// call, so even a crash mid-failover leaves it right.
				t.Errorf("SMS %s taken by %s has a record naming %s", st.id, st.provider, m.Provider)
			}
			all = append(all, st.reports(r, m.ProviderMessageID)...)
		}
	}
	return stories, all
}

// newStory picks, from r, what the vendor provider reports about env:
// four in ten delivered then read, two read before delivered (out of
// order), one sent then delivered, two failed (a chat failure, half the
// time, one the QR gateway can overcome), one nothing.
func newStory(r *rand.Rand, env *notify.Envelope, provider string) *story {
	st := &story{account: env.Account.ID, id: env.ID, kind: env.Kind, provider: provider}
	switch x := r.IntN(10); {
	case x < 4:
		st.states = []record.State{record.StateDelivered, record.StateRead}
	case x < 6:
		st.states = []record.State{record.StateRead, record.StateDelivered}
	case x < 7:
		st.states = []record.State{record.StateSent, record.StateDelivered}
	case x < 9:
		st.states = []record.State{record.StateFailed}
		st.failover = env.Kind == chat.Kind && r.IntN(2) == 0
	}
	return st
}

// reports returns the reports that tell st, each one to three times as a
// vendor may resend it, each naming the message by its vendor ID (when
// the record has one, half the time, from r) or by account and ID, as
// vendors do both.
func (st *story) reports(r *rand.Rand, providerMessageID string) []posted {
	var out []posted
	for _, state := range st.states {
		rep := &notify.DeliveryReport{Provider: st.provider, State: state}
		if providerMessageID != "" && r.IntN(2) == 0 {
			rep.ProviderMessageID = providerMessageID
		} else {
			rep.Account, rep.MessageID = st.account, st.id
		}
		if state == record.StateFailed {
			rep.VendorCode, rep.Error, rep.Failover = "131047", "Re-engagement message", st.failover
		}
		for range 1 + r.IntN(3) {
			out = append(out, posted{rep: rep, notFound: st.unmatched})
		}
	}
	return out
}

// postReports sends all to n, pass after pass, each pass again with the
// reports the one before was asked to resend, as a vendor would, up to
// reportRetries passes. It returns the messages a report failed.
func postReports(t *testing.T, n *notify.Notifier, all []posted) map[string]bool {
	t.Helper()
	failed := map[string]bool{}
	for pass := 0; len(all) > 0; pass++ {
		if pass > reportRetries {
			t.Errorf("%d reports still asked to come again after %d passes", len(all), reportRetries)
			break
		}
		all = postPass(t, n, all, failed)
	}
	return failed
}

// postPass sends all to n from 16 goroutines at once, so that duplicates
// and the reports of one message race, noting in failed the messages a
// report failed. It returns the reports to send again.
func postPass(t *testing.T, n *notify.Notifier, all []posted, failed map[string]bool) (again []posted) {
	t.Helper()
	var mu sync.Mutex // guards again and failed
	concurrently(16, len(all), func(i int) {
		p := all[i]
		res, err := n.Report(context.Background(), p.rep)
		mu.Lock()
		defer mu.Unlock()
		if checkPosted(t, p, res, err, failed) {
			again = append(again, p)
		}
	})
	return again
}

// checkPosted checks what Report answered p: a report that must match
// nothing is NotFound (or asked for again), any other succeeds (or is
// asked for again, a failover refused for now). It notes in failed the
// messages a failed report failed, and reports whether the vendor is to
// send p again.
func checkPosted(t *testing.T, p posted, res *notify.ReportResult, err error, failed map[string]bool) (again bool) {
	rep := p.rep
	switch {
	case p.notFound && errors.Is(err, notify.ErrNotRecordedYet):
		// Named by a vendor ID no record has while a send
		// (a failover) is in flight, which it may be about:
		// the vendor resends; it must match nothing then.
		again = true
	case p.notFound:
		if notify.CodeOf(err) != notify.CodeNotFound {
			t.Errorf("report %+v matched a record: %v, want NotFound", rep, err)
		}
	case notify.IsRetryable(err):
		again = true // a failover refused for now: the vendor resends
	case err != nil:
		t.Errorf("report %+v: %v", rep, err)
	}
	if res != nil && rep.State == record.StateFailed {
		for _, m := range res.Messages {
			if m.State == record.StateFailed {
				failed[m.ID] = true
			}
		}
	}
	return again
}

// checkFailovers checks that a failover went out once per message, however
// many reports failed it, and that some did: it returns how many messages
// were sent again.
func checkFailovers(t *testing.T, providers []*memprovider.Provider) int {
	t.Helper()
	failovers := map[string]int{}
	for _, p := range providers {
		for _, env := range p.Sent() {
			if id, ok := strings.CutPrefix(env.IdempotencyKey, "failover:"); ok {
				if failovers[id]++; failovers[id] > 1 {
					t.Errorf("message %s was sent again %d times", id, failovers[id])
				}
			}
		}
	}
	if len(failovers) == 0 {
		t.Error("no failed report sent a message again through the QR gateway")
	}
	return len(failovers)
}

// forgeries are reports that must match nothing: messages no vendor
// issued, a real message reported by a provider that did not send it, and
// a real message under another account.
func forgeries(stories []*story, account string) []*notify.DeliveryReport {
	var out []*notify.DeliveryReport
	for i, st := range stories {
		if i%7 != 0 {
			continue
		}
		other := "sms"
		if st.provider == "sms" {
			other = "email"
		}
		out = append(out,
			&notify.DeliveryReport{Provider: st.provider, Account: account, MessageID: fmt.Sprintf("forged-%d", i), State: record.StateFailed},
			&notify.DeliveryReport{Provider: st.provider, ProviderMessageID: fmt.Sprintf("never-issued-%d", i), State: record.StateDelivered},
			&notify.DeliveryReport{Provider: other, Account: st.account, MessageID: st.id, State: record.StateFailed},
			&notify.DeliveryReport{Provider: st.provider, Account: "not-" + st.account, MessageID: st.id, State: record.StateFailed},
		)
	}
	return out
}

// checkStories holds every record to its story: it ends where its
// reports lead, its history holds each reported state once, and a
// reported failure is refunded as the default policy says (every kind but
// SMS). It returns how many stories were unmatched.
func checkStories(t *testing.T, s Stores, stories []*story) (unmatched int) {
	t.Helper()
	for _, st := range stories {
		m, err := s.Ledger.Message(context.Background(), st.account, st.id)
		if err != nil {
			t.Errorf("message %s: %v", st.id, err)
			continue
		}
		if st.unmatched {
			unmatched++
		}
		checkStory(t, st, m)
	}
	return unmatched
}

// end returns the state the record of st must end in: the strongest its
// reports name (failed over read over delivered), or, with no reports or
// none that can find it, the state it had before them.
func (st *story) end() record.State {
	if st.unmatched {
		return st.before // no report can find its record
	}
	switch {
	case slices.Contains(st.states, record.StateFailed):
		return record.StateFailed
	case slices.Contains(st.states, record.StateRead):
		return record.StateRead
	case slices.Contains(st.states, record.StateDelivered):
		return record.StateDelivered
	}
	return st.before // no reports
}

// checkStory holds m, the record of st, to its story: it ends where the
// reports lead, its history takes its steps in turn and each reported
// state once, and it is refunded if and only if a report failed it and
// it is not an SMS.
func checkStory(t *testing.T, st *story, m *record.Message) {
	t.Helper()
	want := st.end()
	if m.State != want {
		t.Errorf("message %s reported %v is %s, want %s", st.id, st.states, m.State, want)
		return
	}
	seen := historySteps(t, st.id, m.History)
	for state, times := range seen {
		if times > 1 && state != record.StatePending && state != record.StateAttempting && state != record.StateQueued {
			t.Errorf("message %s has %d steps %s: %v", st.id, times, state, m.History)
		}
	}
	for _, state := range st.states {
		if seen[state] != 1 && !st.unmatched {
			t.Errorf("message %s reported %s lacks that step: %v", st.id, state, m.History)
		}
	}
	if want == record.StateFailed && m.Refunded != (st.kind != sms.Kind) {
		t.Errorf("%s message %s reported failed: refunded %v", st.kind, st.id, m.Refunded)
	}
	if want != record.StateFailed && m.Refunded {
		t.Errorf("message %s is %s but refunded", st.id, m.State)
	}
}

// historySteps checks that the steps of history, message id's, come in
// turn, and returns how many times each state was stepped into: pending
// and attempting alternate, once per wait to retry a certain refusal; a
// queued send starts queued or scheduled, and goes back to queued from
// attempting for each retry a worker asked for; every other step comes
// once, which the caller checks from the counts.
func historySteps(t *testing.T, id string, history []record.StateChange) map[record.State]int {
	t.Helper()
	seen := map[record.State]int{}
	for i, c := range history {
		seen[c.State]++
		prev := record.State("")
		if i > 0 {
			prev = history[i-1].State
		}
		switch {
		case c.State == record.StatePending && i > 0 && prev != record.StateAttempting,
			c.State == record.StateAttempting && prev != record.StatePending && !prev.Waiting(),
			c.State == record.StateQueued && i > 0 && prev != record.StateAttempting,
			c.State == record.StateScheduled && i > 0:
			t.Errorf("message %s: step %d, %s, out of turn: %v", id, i, c.State, history)
		}
	}
	return seen
}
