//go:build race

package comm

import "sync/atomic"

// The race detector cannot see the happens-before edges the shared-memory
// rings create (atomic head/tail stores on memory mapped at different
// addresses in each rank). In race builds every publish and every observation
// of a ring counter also goes through this one Go atomic, which models those
// edges faithfully (a publish releases, an observation acquires).
var raceSync atomic.Uint64

func raceRelease() { raceSync.Add(1) }
func raceAcquire() { raceSync.Add(1) }
