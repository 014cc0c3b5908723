package billing

// Crash abandons the service as a killed process would: the journal segment is left
// on disk, unlocked, with whatever was written, and nothing is drained.
func (s *Service) Crash() {
	s.journal.mu.Lock()
	defer s.journal.mu.Unlock()
	if s.journal.f != nil {
		_ = s.journal.f.Close()
		s.journal.f = nil
	}
}
