// Package otp is the dual-channel OTP: one request whose code goes by SMS
// and by chat at the same time, through the Notifier's SMS and chat
// channels. Its Request is a notify.Composite; the Notifier prepares both
// parts before it charges either, sends them concurrently and answers one
// receipt with both legs.
//
//	r, err := n.Send(ctx, &otp.Request{Account: "acme", To: "9876543210",
//		OTP: "482913", BrandName: "Acme"})
package otp
