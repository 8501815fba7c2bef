//go:build !race

package comm

func raceRelease() {}
func raceAcquire() {}
