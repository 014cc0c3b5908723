package collab

// PageLimit is the page size asked for as n: def when n is 0, n itself when it is
// between 1 and max; ok is false otherwise, and the caller answers its own error.
func PageLimit(n, def, max int) (limit int, ok bool) {
	if n == 0 {
		n = def
	}
	return n, n >= 0 && n <= max
}
