package sms

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The brand limit is declared on Request's tag and used here
// for the account name that stands in for a missing brand: one number.
func TestMaxBrandLenIsTheTag(t *testing.T) {
	f, _ := reflect.TypeFor[Request]().FieldByName("Brand")
	if want := "max=" + strconv.Itoa(maxBrandLen); !strings.Contains(f.Tag.Get("validate"), want) {
		t.Errorf("Brand's tag %q lacks %s", f.Tag.Get("validate"), want)
	}
}
