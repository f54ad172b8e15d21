//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Lock takes the server lock of the database file at path: an exclusive
// flock(2) on path+".lock" (made 0600 when missing), held until release
// is called or the process ends (the file's directory is made 0700 when
// missing) (the kernel drops it even on kill -9, so
// a crash never leaves a stale lock). A server takes it before it opens
// the store, so that a second server on the same file refuses to start;
// administrative commands (user ..., credentials rotate) do not take it
// and may run beside a server, their writes serialised by SQLite's own
// locking. SQLite's locking alone could not tell the two apart: a server
// holds no lock while idle.
//
// The lock file is named after the file itself, its symbolic links (to
// the file or to a directory above it) resolved, so that a second server
// naming the same file by another path is refused too.
func Lock(path string) (release func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("sqlite %s: cannot make its directory: %w", path, err)
	}
	real := path
	if p, err := filepath.EvalSymlinks(path); err == nil {
		real = p
	} else if d, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		real = filepath.Join(d, filepath.Base(path)) // the file is not made yet
	}
	name := real + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite %s: cannot open the lock file: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("sqlite %s: another hds server is using this database (%s is locked)", path, name)
		}
		return nil, fmt.Errorf("sqlite %s: cannot lock %s: %w", path, name, err)
	}
	return func() { f.Close() }, nil
}
