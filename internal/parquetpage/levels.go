package parquetpage

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Definition and repetition levels: the RLE/bit-packed hybrid of the
// Parquet format (parquet-format's Encodings.md), bit width that of the
// highest level.

// AllLevels reports whether levels (RLE/bit-packed hybrid) starts with
// one run of at least n levels of max: the page has no nulls.
func AllLevels(b []byte, n int, max int16) bool {
	h, k := binary.Uvarint(b)
	if k <= 0 || h&1 != 0 || h>>1 < uint64(n) {
		return false
	}
	w := (bits.Len16(uint16(max)) + 7) / 8
	if len(b) < k+w {
		return false
	}
	v := 0
	for i := range w {
		v |= int(b[k+i]) << (8 * i)
	}
	return v == int(max)
}

// DecodeLevels decodes len(dst) levels of at most max from b, encoded
// in the RLE/bit-packed hybrid of the Parquet format (bit width that of
// max).
func DecodeLevels(dst []int16, b []byte, max int16) error {
	return WalkLevels(b, len(dst), max, func(v, at, k int) error {
		for j := range k {
			dst[at+j] = int16(v)
		}
		return nil
	})
}

// WalkLevels reads n levels of at most max from b, encoded in the
// RLE/bit-packed hybrid of the Parquet format (bit width that of max),
// and calls run for each run of k levels of value v from level at on (a
// bit-packed group level by level, k = 1); an error from run stops it.
// Malformed runs are ErrPage.
func WalkLevels(b []byte, n int, max int16, run func(v, at, k int) error) error {
	bw := bits.Len16(uint16(max))
	w := (bw + 7) / 8
	for i := 0; i < n; {
		h, k := binary.Uvarint(b)
		if k <= 0 {
			return fmt.Errorf("levels end after %d of %d: %w", i, n, ErrPage)
		}
		b = b[k:]
		if h&1 == 0 { // a run of one value
			if len(b) < w {
				return fmt.Errorf("levels end after %d of %d: %w", i, n, ErrPage)
			}
			v := 0
			for j := range w {
				v |= int(b[j]) << (8 * j)
			}
			b = b[w:]
			if v > int(max) {
				return fmt.Errorf("level %d above %d: %w", v, max, ErrPage)
			}
			r := int(min(h>>1, uint64(n-i)))
			if r > 0 {
				if err := run(v, i, r); err != nil {
					return err
				}
			}
			i += r
			continue
		}
		// Groups of eight values of bw bits, least significant first.
		g := h >> 1
		if g == 0 || g > uint64(len(b)) || int(g)*bw > len(b) {
			return fmt.Errorf("levels: %d groups of bit-packed levels in %d bytes: %w", g, len(b), ErrPage)
		}
		nb := int(g) * bw
		r := min(int(g)*8, n-i)
		mask := uint32(1)<<bw - 1
		for j := range r {
			bit := j * bw
			var x uint32
			for q := 0; q < 3 && bit/8+q < nb; q++ {
				x |= uint32(b[bit/8+q]) << (8 * q)
			}
			v := int(x >> (bit % 8) & mask)
			if v > int(max) {
				return fmt.Errorf("level %d above %d: %w", v, max, ErrPage)
			}
			if err := run(v, i+j, 1); err != nil {
				return err
			}
		}
		b = b[nb:]
		i += r
	}
	return nil
}
