// Package nilness tells whether an interface value holds nothing usable,
// so that constructors can refuse a typed nil (a *Provider that is nil,
// wrapped in a non-nil notify.Provider) with an error instead of
// panicking at its first method call.
package nilness

import "reflect"

// Is reports whether v is nil or holds a nil pointer, map, slice, func,
// channel or interface.
func Is(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}
