//go:build race

package memstore

// raceEnabled reports whether the race detector is on; the heaviest tests
// then do fewer iterations, enough to show the same property.
const raceEnabled = true
