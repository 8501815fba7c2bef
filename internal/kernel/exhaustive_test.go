package kernel

import (
	"flag"
	"os"
)

// The variant tests run every registered variant on a representative subset
// of sizes and shapes by default: every edge class (0, 1, sub-vector, just
// past a vector or a tile, 1000+) in every dimension, but not every
// combination of them. The exhaustive set (every combination, and the
// largest inputs) runs with
//
//	go test ./internal/kernel/ -args -exhaustive
//
// or with FATHOM_EXHAUSTIVE=1 in the environment; CI runs it once.
var exhaustiveFlag = flag.Bool("exhaustive", false, "run the kernel variant tests on every size and shape combination (slow)")

// exhaustive reports whether the exhaustive sets were asked for.
func exhaustive() bool {
	return *exhaustiveFlag || os.Getenv("FATHOM_EXHAUSTIVE") == "1"
}
