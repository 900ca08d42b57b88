package chat_test

import (
	"strings"
	"testing"

	"github.com/notifykit/notify/channel/chat"
)

func TestTemplateValueRules(t *testing.T) {
	for v, broken := range map[string]bool{"Asha": false, "  ": true, "a\nb": true, "a\tb": true,
		"a     b": true, "a    b": false, strings.Repeat("x", chat.MaxParamText): false, strings.Repeat("x", chat.MaxParamText+1): true} {
		if got := chat.ParamTextRule(v, chat.MaxParamText) != ""; got != broken {
			t.Errorf("ParamTextRule(%q) broken = %v, want %v", v, got, broken)
		}
	}
	for name, ok := range map[string]bool{"first_name": true, "a1": true, "": false, "First": false, "a-b": false, strings.Repeat("a", 65): false} {
		if chat.ValidParamName(name) != ok {
			t.Errorf("ValidParamName(%q) = %v, want %v", name, !ok, ok)
		}
	}
	for _, c := range []struct {
		b      chat.Button
		broken bool
	}{
		{chat.Button{Kind: chat.ButtonURL, Value: "4711"}, false},
		{chat.Button{Kind: chat.ButtonURL, Value: "47 11"}, true},
		{chat.Button{Kind: chat.ButtonQuickReply, Value: strings.Repeat("p", 129)}, true},
		{chat.Button{Kind: chat.ButtonCopyCode, Value: "SAVE10"}, false},
		{chat.Button{Kind: chat.ButtonCopyCode, Value: strings.Repeat("c", 16)}, true},
		{chat.Button{Kind: "call", Value: "x"}, true},
		{chat.Button{Kind: chat.ButtonURL}, true},
	} {
		if got := chat.ButtonValueRule(c.b) != ""; got != c.broken {
			t.Errorf("ButtonValueRule(%+v) broken = %v, want %v", c.b, got, c.broken)
		}
	}
}
