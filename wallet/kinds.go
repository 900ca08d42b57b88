package wallet

import (
	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/channel/sms"
)

// KindPrices are the prices of one kind of PriceList.Kinds, in minor units
// per billable unit (the envelope's Units, as its channel counts them),
// by route (Envelope.Route, the way within the channel its Prepare chose).
// A zero price makes a message free; a negative one is a configuration
// error, as in every price of a PriceList.
type KindPrices struct {
	// Unit is the price of a message whose route Routes does not name,
	// the empty route included.
	Unit int64
	// Routes are the prices of the routes that have their own, by
	// Envelope.Route. Default nil: Unit for every route.
	Routes map[string]int64
}

// unit returns the price of one unit on route.
func (k KindPrices) unit(route string) int64 {
	if price, ok := k.Routes[route]; ok {
		return price
	}
	return k.Unit
}

// builtInField names the PriceList field that prices kind, when the list
// prices it by a field of its own.
func builtInField(kind notify.Kind) (string, bool) {
	switch kind {
	case sms.Kind:
		return "SMS", true
	case chat.Kind:
		return "Chat", true
	case email.Kind:
		return "Email", true
	case push.Kind:
		return "Push", true
	}
	return "", false
}

// builtInKindError is the error of an entry of PriceList.Kinds for kind
// when the list prices it by a field of its own, or nil.
func builtInKindError(kind notify.Kind) error {
	field, ok := builtInField(kind)
	if !ok {
		return nil
	}
	return notify.Errorf(notify.CodeInternal,
		"wallet: PriceList.Kinds[%q]: %s messages are priced by PriceList.%s, not by Kinds", kind, kind, field)
}
