package data

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MaxInputBytesEnv names the environment variable that bounds the memory a
// reader of outside input may allocate for one file (see [MaxInputBytes]).
const MaxInputBytesEnv = "FATHOM_MAX_INPUT_BYTES"

// DefaultMaxInputBytes is the memory bound for one input file when
// FATHOM_MAX_INPUT_BYTES is not set: 4 GiB, twenty times what
// Fashion-MNIST's training images take as float32.
const DefaultMaxInputBytes = 4 << 30

// MaxInputBytes returns the memory bound for reading one input file:
// FATHOM_MAX_INPUT_BYTES if set (a byte count, decimal, with an optional
// KiB, MiB, GiB or TiB suffix), else DefaultMaxInputBytes. The IDX reader
// counts against it the decoded data and its float32 copy, and refuses a
// file whose header declares more before allocating (a gzip bomb stops
// there). Readers that take a limit (ReadIDXLimit, MNISTOptions) use this
// one when theirs is 0.
func MaxInputBytes() (int64, error) {
	v := os.Getenv(MaxInputBytesEnv)
	if v == "" {
		return DefaultMaxInputBytes, nil
	}
	n, err := parseBytes(v)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: %v", MaxInputBytesEnv, v, err)
	}
	return n, nil
}

// parseBytes parses "1048576", "512MiB", "4GiB".
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}} {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a positive byte count such as 1073741824 or 4GiB")
	}
	if n > (1<<63-1)/mult {
		return 0, fmt.Errorf("byte count overflows")
	}
	return n * mult, nil
}
