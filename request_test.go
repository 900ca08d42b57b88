package notify

import (
	"reflect"
	"strings"
	"testing"
)

func TestValidOTP(t *testing.T) {
	for code, want := range map[string]bool{
		"1234": true, "12345678": true, "482913": true,
		"": false, "123": false, "123456789": false, "12a4": false, " 1234": false, "१२३४": false,
	} {
		if got := ValidOTP(code); got != want {
			t.Errorf("ValidOTP(%q) = %v, want %v", code, got, want)
		}
	}
}

// TestFingerprintCoversEveryContentField changes each field of an
// envelope's content, one at a time, and wants a new fingerprint: a field
// added later and forgotten in Envelope.fingerprint would let a reused
// idempotency key pass for another message.
func TestFingerprintCoversEveryContentField(t *testing.T) {
	base := func() *Envelope {
		return &Envelope{Kind: KindChat, To: "9876543210", Class: Transactional, Domain: "shop.example", Units: 1,
			SMS:   &SMSMessage{DLTValues: []string{"a"}},
			Email: &EmailMessage{},
			Chat:  &ChatMessage{Template: &ChatTemplate{Params: []string{"p"}}, Media: &ChatMedia{}}}
	}
	want := fingerprintOf(base())
	var walk func(path string, v reflect.Value, env *Envelope)
	changed := 0
	walk = func(path string, v reflect.Value, env *Envelope) {
		for i := 0; i < v.NumField(); i++ {
			f, name := v.Field(i), path+"."+v.Type().Field(i).Name
			switch name {
			case ".ID", ".Account", ".Provider", ".Price", ".IdempotencyKey":
				continue // not the request's content
			}
			switch f.Kind() {
			case reflect.String:
				f.SetString(f.String() + "x")
			case reflect.Int:
				f.SetInt(f.Int() + 1)
			case reflect.Bool:
				f.SetBool(!f.Bool())
			case reflect.Slice:
				f.Index(0).SetString("changed")
			case reflect.Pointer:
				if f.IsNil() {
					continue
				}
				walk(name, f.Elem(), env)
				v = reflectAt(reflect.ValueOf(env).Elem(), path) // env was renewed
				continue
			default:
				t.Fatalf("%s: a %s field; teach this test about it", name, f.Kind())
			}
			if fingerprintOf(env) == want {
				t.Errorf("changing %s leaves the fingerprint as it was", name)
			}
			changed++
			// Start the next field from a fresh envelope.
			fresh := base()
			*env = *fresh
			v = reflectAt(reflect.ValueOf(env).Elem(), path)
		}
	}
	env := base()
	walk("", reflect.ValueOf(env).Elem(), env)
	if changed < 30 {
		t.Fatalf("only %d fields were tried", changed)
	}
}

// reflectAt follows a path of field names such as ".Chat.Template".
func reflectAt(v reflect.Value, path string) reflect.Value {
	for _, name := range strings.Split(strings.TrimPrefix(path, "."), ".") {
		if name == "" {
			continue
		}
		v = v.FieldByName(name).Elem()
	}
	return v
}
