package pgstore

// PendingMoves counts the moves waiting for their group commit, so that
// a test can tell when moves have gathered behind one under way.
func PendingMoves(s *Store) int {
	if s.moves == nil {
		return 0
	}
	s.moves.mu.Lock()
	defer s.moves.mu.Unlock()
	return len(s.moves.pending)
}
