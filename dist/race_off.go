//go:build !race

package dist

func raceRelease() {}
func raceAcquire() {}
