package parquetpage

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

// TestDecodeLevels: runs and bit-packed groups of the hybrid encoding,
// and truncated or out-of-range input as errors.
func TestDecodeLevels(t *testing.T) {
	// A run of 3 ones, a bit-packed group of 8 (1,0,1,1,0,0,1,0), a run of 2 zeros.
	b := []byte{3 << 1, 1, 1<<1 | 1, 0b01001101, 2 << 1, 0}
	got := make([]int16, 13)
	if err := DecodeLevels(got, b, 1); err != nil {
		t.Fatal(err)
	}
	if want := []int16{1, 1, 1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0}; !slices.Equal(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
	// Width 2 (max 3): a group of 8 levels 0..3,3..0.
	b = []byte{1<<1 | 1, 0b11100100, 0b00011011}
	got = make([]int16, 8)
	if err := DecodeLevels(got, b, 3); err != nil || !slices.Equal(got, []int16{0, 1, 2, 3, 3, 2, 1, 0}) {
		t.Fatalf("%v, %v", got, err)
	}
	run := func(n int, v byte) []byte { return append(binary.AppendUvarint(nil, uint64(n)<<1), v) }
	if !AllLevels(run(100, 1), 100, 1) || AllLevels(run(99, 1), 100, 1) || AllLevels(run(100, 0), 100, 1) || !AllLevels(run(300, 3), 300, 3) {
		t.Fatal("AllLevels")
	}
	for _, bad := range [][]byte{nil, {3 << 1}, {1<<1 | 1}, {0x80}, {3 << 1, 2}, {5<<1 | 1, 1}} {
		if err := DecodeLevels(make([]int16, 4), bad, 1); !errors.Is(err, ErrPage) {
			t.Errorf("% x: %v, want a page error", bad, err)
		}
	}
}
