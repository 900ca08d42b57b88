// Package push is the push notification channel: one notification to one
// browser's Web Push subscription or one app's FCM registration token,
// sent, priced, charged, recorded and reported as every message of the
// Notifier is, queued, scheduled, sent in bulk or as a step of a timed
// fallback (push first, SMS if it is not confirmed in time).
//
// A Request carries a title, a body, a data map, an optional link (the
// URL the notification opens) and image, a TTL and an urgency, and either
// a Subscription (Web Push: the endpoint and keys the browser's
// PushSubscription.toJSON() gives) or a Token (FCM). Prepare checks every
// field by the channel's rules, names each bad one, and picks the
// provider of the recipient's kind: Config.WebPush for a subscription
// (package provider/webpush), Config.FCM for a token (provider/fcm).
//
// # Recipients and the suppression list
//
// A subscription's recipient form is its endpoint, a token's the token
// (Recipient). A push service that answers that a subscription is gone
// (Web Push 404 or 410, FCM UNREGISTERED) refuses the message for certain:
// the charge is refunded and the recipient is put on the account's
// suppression list as a hard bounce, so the next push to it is refused
// (CodeSuppressed) before anything is charged.
//
// # Price
//
// A push is one unit, of class transactional or, with
// Request.Promotional, promotional; wallet.PriceList prices it by its
// Push rates.
//
// # What the app receives, and confirming delivery
//
// Push services report no delivery to the sender. The app receives the
// payload (Message.Payload for Web Push: a JSON object with message_id,
// title, body, link, image and data; FCM: the notification, and data with
// message_id), and confirms delivery by reporting it to the Notifier
// (notify.Notifier.Report with the provider's name, the account and
// MessageID, State record.StateDelivered). A timed fallback to another
// channel fires when no confirmation came in time.
package push
