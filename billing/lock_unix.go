//go:build unix

package billing

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f without waiting; it fails when
// another process holds it.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
