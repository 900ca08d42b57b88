package memprovider_test

import (
	"context"
	"fmt"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/memprovider"
)

func Example() {
	p := memprovider.New("sms-test")
	env := &notify.Envelope{
		Kind:    sms.Kind,
		To:      "9876543210",
		Content: &sms.Message{Route: sms.RouteSMS, Text: "Your order has shipped."},
	}
	res, err := p.Send(context.Background(), env)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Provider, res.ProviderMessageID)
	for _, e := range p.Sent() {
		fmt.Println(e.To, sms.MessageOf(e).Text)
	}
	// Output:
	// sms-test mem-1
	// 9876543210 Your order has shipped.
}

func ExampleProvider_FailNext() {
	p := memprovider.New("sms-test")
	p.FailNext(1, notify.CodeUnavailable)
	env := &notify.Envelope{Kind: sms.Kind, To: "9876543210", Content: &sms.Message{Text: "hi"}}

	_, err := p.Send(context.Background(), env)
	fmt.Println(notify.CodeOf(err), notify.IsRetryable(err), p.Len())
	res, _ := p.Send(context.Background(), env)
	fmt.Println(res.ProviderMessageID, p.Len())

	// The vendor takes the message and its answer is lost: captured, and
	// an unknown outcome that nothing retries.
	p.FailNext(1, notify.CodeOutcomeUnknown)
	_, err = p.Send(context.Background(), env)
	fmt.Println(notify.CodeOf(err), notify.OutcomeOf(err), notify.IsRetryable(err), p.Len())
	// Output:
	// unavailable true 0
	// mem-1 1
	// outcome_unknown unknown false 2
}

func ExampleProvider_Wait() {
	p := memprovider.New("sms-test")
	env := &notify.Envelope{Kind: sms.Kind, To: "9876543210", Content: &sms.Message{Text: "hi"}}
	go func() { _, _ = p.Send(context.Background(), env) }()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.Wait(ctx, 1); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Len())
	// Output: 1
}

func ExampleProvider_SetHandler() {
	p := memprovider.New("sms-test")
	// Refuse one recipient for good; accept everyone else.
	p.SetHandler(func(_ context.Context, env *notify.Envelope) (*notify.Result, error) {
		if env.To == "9000000000" {
			return nil, notify.Errorf(notify.CodeRejected, "number barred")
		}
		return &notify.Result{}, nil
	})
	for _, to := range []string{"9000000000", "9876543210"} {
		env := &notify.Envelope{Kind: sms.Kind, To: to, Content: &sms.Message{Text: "hi"}}
		res, err := p.Send(context.Background(), env)
		if err != nil {
			fmt.Println(to, notify.CodeOf(err))
			continue
		}
		fmt.Println(to, res.ProviderMessageID)
	}
	// Output:
	// 9000000000 rejected
	// 9876543210 mem-1
}
