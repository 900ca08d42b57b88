//go:build !unix

package memstore

// cpuTime is not measured on this platform.
func cpuTime() (int64, bool) { return 0, false }
