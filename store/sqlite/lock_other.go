//go:build !unix

package sqlite

// Lock is the server lock of the database file at path. On this system
// it takes none: two servers on one file are not detected (SQLite's own
// locking still keeps the file consistent).
func Lock(path string) (release func(), err error) { return func() {}, nil }
