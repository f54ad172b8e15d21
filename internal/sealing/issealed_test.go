package sealing

// IsSealed reports whether s has the form of a sealed value. Only the
// tests need to ask.
func IsSealed(s string) bool {
	_, _, ok := split(s)
	return ok
}
