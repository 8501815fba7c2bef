//go:build !unix

package optim

func processCPUTime() int64 { return 0 }
