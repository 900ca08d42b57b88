package push

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push/pushstore"
	"github.com/notifykit/notify/internal/rules"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// Registry keeps the devices (Web Push subscriptions and FCM tokens) an
// account's recipients registered, so that an app sends to a person (its
// user ID) rather than to each of their browsers and phones. It is safe
// for concurrent use when its stores are.
type Registry struct {
	devices      pushstore.Devices
	suppressions store.Suppressions
}

// NewRegistry returns a registry on devices (memstore.PushDevices,
// pgstore's) that reads the account's suppression list from suppressions
// (the Notifier's ledger), so that a device the push service declared
// gone is no longer sent to.
func NewRegistry(devices pushstore.Devices, suppressions store.Suppressions) (*Registry, error) {
	if devices == nil || suppressions == nil {
		return nil, errors.New("push.NewRegistry: needs a pushstore.Devices and a store.Suppressions")
	}
	return &Registry{devices: devices, suppressions: suppressions}, nil
}

// Register checks a subscription or a token (exactly one) by the
// channel's rules and keeps it for recipient, registered at at: a device
// registered again is replaced, and moves to recipient if it was
// another's; a recipient keeps at most pushstore.MaxDevices. A bad field
// is an InvalidArgument error naming it ("recipient",
// "subscription.endpoint", "token"); a store failure is CodeUnavailable.
// It returns the device kept.
func (r *Registry) Register(ctx context.Context, account, recipient string, sub *Subscription, token string, at time.Time) (pushstore.Device, error) {
	var fe record.FieldErrors
	checkName(&fe, recipient)
	var d pushstore.Device
	switch token = strings.TrimSpace(token); {
	case sub == nil && token == "":
		fe.Add("subscription", "a subscription or a token is required")
	case sub != nil && token != "":
		fe.Add("token", "must not be set with a subscription: register one device at a time")
	case sub != nil:
		d.To = checkSubscription(&fe, "subscription", sub)
		d.P256dh, d.Auth = sub.Keys.P256dh, sub.Keys.Auth
	default:
		if why := tokenRule(token); why != "" {
			fe.Add("token", why)
		}
		d.To = token
	}
	if err := notify.InvalidFields(fe); err != nil {
		return pushstore.Device{}, err
	}
	// As a store keeps it, so that the answer is what a read gives.
	d.Recipient, d.RegisteredAt = recipient, at.UTC().Truncate(time.Microsecond)
	if err := r.devices.RegisterDevice(ctx, account, d); err != nil {
		return pushstore.Device{}, storeError("register the device", err)
	}
	return d, nil
}

// Unregister forgets the account's device to (an endpoint or a token, in
// any spelling Recipient reads): CodeNotFound when there is none.
func (r *Registry) Unregister(ctx context.Context, account, to string) error {
	c, err := Recipient(to)
	if err != nil {
		return err
	}
	if err := r.devices.UnregisterDevice(ctx, account, c); err != nil {
		return storeError("unregister the device", err)
	}
	return nil
}

// Devices returns the devices of the account's recipient, the most
// recently registered first.
func (r *Registry) Devices(ctx context.Context, account, recipient string) ([]pushstore.Device, error) {
	var fe record.FieldErrors
	checkName(&fe, recipient)
	if err := notify.InvalidFields(fe); err != nil {
		return nil, err
	}
	ds, err := r.devices.Devices(ctx, account, []string{recipient})
	if err != nil {
		return nil, storeError("read the devices", err)
	}
	return ds, nil
}

// BulkFor reads the devices of the account's recipients for a bulk push
// (BulkRequest.Registered), in one read of the registry whatever their
// number: each recipient's devices, newest first, a
// device shared by two recipients once. A device the push service
// declared gone (on the suppression list as a hard bounce) is left out
// and forgotten. A recipient without a device left is listed in
// Unreachable, which the bulk request refuses naming it
// ("recipients.1") once its idempotency key is found new, so that the
// caller learns whom the push cannot reach and a repeat of the key still
// answers the first send. Names that break the rules are an
// InvalidArgument error naming each ("recipients.0"); a store failure
// is CodeUnavailable.
func (r *Registry) BulkFor(ctx context.Context, account string, recipients []string) (*Registered, error) {
	var fe record.FieldErrors
	if len(recipients) == 0 || len(recipients) > notify.MaxBulkRecipients {
		fe.Addf("recipients", "must name 1 to %d recipients", notify.MaxBulkRecipients)
		return nil, notify.InvalidFields(fe)
	}
	for i, name := range recipients {
		if why := nameRule(name); why != "" {
			fe.Add(fmt.Sprintf("recipients.%d", i), why)
		}
	}
	if err := notify.InvalidFields(fe); err != nil {
		return nil, err
	}
	// One read of every name's devices, grouped in the names' order (a
	// name given twice once), split here by recipient.
	ds, err := r.devices.Devices(ctx, account, recipients)
	if err != nil {
		return nil, storeError("read the devices", err)
	}
	tos := make([]string, len(ds))
	of := make(map[string][]pushstore.Device, len(recipients))
	for i, d := range ds {
		tos[i] = d.To
		of[d.Recipient] = append(of[d.Recipient], d)
	}
	gone, err := r.gone(ctx, account, tos)
	if err != nil {
		return nil, err
	}
	reg := &Registered{Names: slices.Clone(recipients)}
	seen := make(map[string]bool, len(tos))
	for i, name := range recipients {
		kept := 0
		for _, d := range of[name] {
			if gone[d.To] {
				continue
			}
			kept++
			if seen[d.To] {
				continue
			}
			seen[d.To] = true
			if d.P256dh != "" {
				reg.Subscriptions = append(reg.Subscriptions, &Subscription{Endpoint: d.To, Keys: Keys{P256dh: d.P256dh, Auth: d.Auth}})
			} else {
				reg.Tokens = append(reg.Tokens, d.To)
			}
		}
		if kept == 0 {
			reg.Unreachable = append(reg.Unreachable, i)
		}
	}
	return reg, nil
}

// gone reads which of tos the suppression list holds as gone (a hard
// bounce: the push service's 404 or 410, FCM's UNREGISTERED), and
// forgets them in the registry: they can never be sent to again.
func (r *Registry) gone(ctx context.Context, account string, tos []string) (map[string]bool, error) {
	if len(tos) == 0 {
		return nil, nil
	}
	entries, err := r.suppressions.LookupSuppressions(ctx, account, Kind, tos)
	if err != nil {
		return nil, storeError("read the suppression list", err)
	}
	gone := map[string]bool{}
	for i, e := range entries {
		if e.Reason == store.SuppressHardBounce && i < len(tos) {
			gone[tos[i]] = true
		}
	}
	for to := range gone {
		// Best effort: a device this fails to forget is skipped again,
		// by the same read, next time.
		_ = r.devices.UnregisterDevice(ctx, account, to)
	}
	return gone, nil
}

// checkName adds the rule a recipient's name breaks to fe.
func checkName(fe *record.FieldErrors, name string) {
	if why := nameRule(name); why != "" {
		fe.Add("recipient", why)
	}
}

// nameRule is the rule a recipient's name breaks, or "".
func nameRule(name string) string {
	switch {
	case strings.TrimSpace(name) == "":
		return "is required: the app's name of the person (a user ID)"
	case len(name) > pushstore.MaxRecipientLen:
		return fmt.Sprintf("must be at most %d bytes", pushstore.MaxRecipientLen)
	case !utf8.ValidString(name) || rules.Text(name) != "":
		return "must be text without control characters"
	}
	return ""
}

// storeError is a registry store's failure: not found as such, anything
// else unavailable (a retry may succeed), the cause kept.
func storeError(what string, err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notify.Errorf(notify.CodeNotFound, "push: no such device")
	case errors.Is(err, store.ErrInvalid):
		return notify.Errorf(notify.CodeInvalidArgument, "push: %s: %w", what, err)
	}
	return notify.Errorf(notify.CodeUnavailable, "push: %s: %w", what, err)
}
