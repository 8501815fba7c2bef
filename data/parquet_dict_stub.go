package data

import (
	"encoding/binary"
	"fmt"
)

// decodeDictF32 decodes len(dst) dictionary indices from b (a bit width
// byte, then RLE/bit-packed hybrid runs) into dst[i] = dict[index].
// A simple stand-in for the fast decoder.
func decodeDictF32(dst []float32, dict []float32, b []byte) error {
	if len(dst) == 0 {
		return nil
	}
	if len(b) == 0 {
		return fmt.Errorf("dictionary indices: no bit width: %w", errPage)
	}
	bw := int(b[0])
	b = b[1:]
	if bw > 32 {
		return fmt.Errorf("dictionary indices: bit width %d: %w", bw, errPage)
	}
	w := (bw + 7) / 8
	for i := 0; i < len(dst); {
		h, k := binary.Uvarint(b)
		if k <= 0 {
			return fmt.Errorf("dictionary indices end after %d of %d: %w", i, len(dst), errPage)
		}
		b = b[k:]
		if h&1 == 0 {
			if len(b) < w {
				return fmt.Errorf("dictionary indices end after %d of %d: %w", i, len(dst), errPage)
			}
			v := uint64(0)
			for j := range w {
				v |= uint64(b[j]) << (8 * j)
			}
			b = b[w:]
			r := int(min(h>>1, uint64(len(dst)-i)))
			if r > 0 && v >= uint64(len(dict)) {
				return fmt.Errorf("dictionary index %d of %d: %w", v, len(dict), errPage)
			}
			for j := range r {
				dst[i+j] = dict[v]
			}
			i += r
			continue
		}
		g := h >> 1
		if g == 0 || g > uint64(len(b)) || int(g)*bw > len(b) {
			return fmt.Errorf("dictionary indices: %d bit-packed groups in %d bytes: %w", g, len(b), errPage)
		}
		nb := int(g) * bw
		r := min(int(g)*8, len(dst)-i)
		mask := uint64(1)<<bw - 1
		if bw <= 8 {
			// Eight indices from a word at a time.
			nd := uint64(len(dict))
			var tmp [8]byte
			for q := 0; q < r; q += 8 {
				gb := b[q/8*bw:]
				var x uint64
				if len(gb) >= 8 {
					x = binary.LittleEndian.Uint64(gb)
				} else {
					copy(tmp[:], gb)
					x = binary.LittleEndian.Uint64(tmp[:])
				}
				o := dst[i+q : i+min(q+8, r)]
				for e := range o {
					v := x >> (e * bw) & mask
					if v >= nd {
						return fmt.Errorf("dictionary index %d of %d: %w", v, len(dict), errPage)
					}
					o[e] = dict[v]
				}
			}
			b = b[nb:]
			i += r
			continue
		}
		for j := range r {
			bit := j * bw
			var x uint64
			for q := 0; q < 5 && bit/8+q < nb; q++ {
				x |= uint64(b[bit/8+q]) << (8 * q)
			}
			v := x >> (bit % 8) & mask
			if v >= uint64(len(dict)) {
				return fmt.Errorf("dictionary index %d of %d: %w", v, len(dict), errPage)
			}
			dst[i+j] = dict[v]
		}
		b = b[nb:]
		i += r
	}
	return nil
}
