package pgstore

// PendingMoves counts the moves waiting for their group commit, so that
// a test can tell when moves have gathered behind one under way.
func PendingMoves(s *Store) int {
	if s.moves == nil {
		return 0
	}
	n, _ := s.moves.moves.Waiting()
	return n
}
