package email_test

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/notifykit/notify/channel/email"
)

// The from_name limit is declared on email.Request's tag and
// published as MaxFromNameLen: the two must say the same.
func TestMaxFromNameLenIsTheTag(t *testing.T) {
	f, _ := reflect.TypeFor[email.Request]().FieldByName("FromName")
	if want := "max=" + strconv.Itoa(email.MaxFromNameLen); !strings.Contains(f.Tag.Get("validate"), want) {
		t.Errorf("FromName's tag %q lacks %s", f.Tag.Get("validate"), want)
	}
}
