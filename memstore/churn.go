package memstore

// Go's maps keep the room a churn of inserts and deletes made them take:
// a map that holds a steady thousand keys while millions pass through it
// grows to several times the size those keys need (golang/go#70886). The
// maps here that forget as fast as they learn, one key at a time (the
// Ledger's sets of its open records, which every send enters and
// leaves), count their deletes and, every few turns over their size,
// copy what is left into a map sized for it: one pass over the live keys
// per churnTurns times their number of deletes, so memory stays flat at
// a constant amortized cost. (The Ledger's records and indexes are
// forgotten a whole map at a time instead: see Ledger.)

// churnTurns is how many times its live size a map may see deleted
// before it is rebuilt.
const churnTurns = 4

// churned reports whether a map of live keys that has seen deletes
// deletes since it was built should be rebuilt now.
func churned(deletes, live int) bool {
	return deletes > churnTurns*live+64
}

// rebuilt returns a map sized for m's keys, holding them: m without the
// room its churn made it take. (maps.Clone may keep that room.)
func rebuilt[K comparable, V any](m map[K]V) map[K]V {
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
