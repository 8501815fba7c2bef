//go:build unix

package optim

import "syscall"

// processCPUTime returns the user+system CPU time of the process in
// nanoseconds, to report benchmark work independently of how much of the
// (shared) machine the process got.
func processCPUTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
