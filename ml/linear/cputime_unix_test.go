//go:build unix

package linear

import "syscall"

// cpuSeconds is the process's user+system CPU time: on a shared machine
// it says more than the wall clock.
func cpuSeconds() float64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return float64(u.Utime.Nano()+u.Stime.Nano()) / 1e9
}
