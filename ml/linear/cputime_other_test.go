//go:build !unix

package linear

// cpuSeconds is 0 where getrusage is missing.
func cpuSeconds() float64 { return 0 }
