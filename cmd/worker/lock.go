package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// errJournalBusy: another worker process runs or resumes a run of the
// journal; two processes working on one run could run a command twice.
var errJournalBusy = errors.New("journal is in use by another worker process")

// lockJournal takes an exclusive advisory lock on JOURNAL.lock for as long
// as the process works on the journal. The kernel releases it when the
// process dies, so a crash or kill -9 never leaves a stale lock.
func lockJournal(path string) (release func(), err error) {
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock journal: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w", path, errJournalBusy)
		}
		return nil, fmt.Errorf("lock journal: %w", err)
	}
	return func() { f.Close() }, nil
}
