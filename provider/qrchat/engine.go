package qrchat

import "strings"

// engineRefusal is an error of a WAHA engine that is known to refuse a
// message before the engine has sent anything: the recipient cannot be
// addressed at all. WAHA answers every engine error as HTTP 500 (its
// exception filter turns an exception that is not an HTTP one into
// {"statusCode": 500, "exception": {"message", "name", ...}, ...}), so
// only the text tells such a refusal from a failure that may come after
// the message left.
type engineRefusal struct {
	// text is looked for in the answer's message, case-insensitively.
	text string
	// why is what the refusal means, for the error's message.
	why string
}

// engineRefusals is the one table of engine errors that are certain,
// permanent refusals (CodeRejected: not retried, refunded). Every other
// HTTP 500 of the gateway stays of unknown outcome: the engine may have
// sent the message before it failed ("Target closed", "Cannot read
// properties of undefined", "Media upload failed on all hosts", "Lid is
// missing in chat table" and the like are not here for that reason).
// Each row names where its text was seen.
var engineRefusals = [...]engineRefusal{
	// WEBJS: WhatsApp Web's createWid refuses the chat ID before a
	// message is built ("Evaluation failed: Error: wid error: invalid
	// wid"). Seen in WAHA's answers and in whatsapp-web.js, which WEBJS
	// runs: wwebjs/whatsapp-web.js#3438, chrishubert/whatsapp-api#199,
	// wppconnect-team/wppconnect#2136.
	{"wid error: invalid wid", "the chat ID is not a valid address on the network"},
	// WEBJS: WhatsApp Web finds no LID (the network's own ID) for the
	// number, before sending: wppconnect-team/wa-js#2816.
	{"no lid for user", "the network has no account for the number"},
	// GOWS: whatsmeow asks the network for the number's LID before it
	// sends, and the network has none: "2 UNKNOWN: no LID found for
	// 91XXXXXXXXXX@s.whatsapp.net from server". devlikeapro/waha#1714,
	// devlikeapro/waha#2094, devlikeapro/waha#2214, tulir/whatsmeow#1041.
	{"no lid found for", "the network has no account for the number"},
	// GOWS: whatsmeow refuses a recipient with a device part ("2 UNKNOWN:
	// message recipient must be a user JID with no device part"), before
	// sending: devlikeapro/waha#1977.
	{"recipient must be a user jid", "the chat ID is not a user's address"},
}

// refusedByEngine returns what the engine's error msg means when it is
// one of engineRefusals.
func refusedByEngine(msg string) (why string, ok bool) {
	lower := strings.ToLower(msg)
	for _, r := range engineRefusals {
		if strings.Contains(lower, r.text) {
			return r.why, true
		}
	}
	return "", false
}
