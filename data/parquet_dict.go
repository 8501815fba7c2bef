package data

import (
	"encoding/binary"
	"fmt"
	"math"
)

// decodeDictF32 decodes len(dst) dictionary indices from b and sets
// dst[i] = dict[index i].
//
// b is the value section of a Parquet data page of encoding
// RLE_DICTIONARY or PLAIN_DICTIONARY (Parquet format specification,
// Encodings.md, "Dictionary Encoding"): one byte giving the bit width of
// the indices (0 to 32), then the indices in the "Run Length Encoding /
// Bit-Packing Hybrid" of the same document, without the 4-byte length
// prefix that definition levels carry. The hybrid is a sequence of runs,
// each headed by a ULEB128 varint h: when h's low bit is 0, an RLE run of
// h>>1 repeats of one index stored in ceil(width/8) little-endian bytes;
// when it is 1, h>>1 groups of 8 indices bit-packed least significant bit
// first in width bytes a group. The last group may carry padding indices
// beyond len(dst): they are ignored (not even range-checked), but the
// bytes the group count claims must be within b. Bytes after the last
// index needed are ignored.
//
// The error (wrapping errPage) says what is wrong and where (byte offset
// in b, index ordinal): a bit width above 32, a run header that is not a
// varint of at most 64 bits, a run whose bytes go past the end of b, an
// index not below len(dict), or b ending before len(dst) indices. It
// never panics; its work is bounded by len(dst) + len(b).
//
// Fast paths: RLE runs are fills; bit-packed indices of width 1 to 8 are
// unpacked 8 at a time from one 64-bit load and gathered from a
// 256-entry copy of the dictionary without bounds checks (index ranges
// checked branch-free per run, and not at all when the dictionary has
// 1<<width entries or more); widths 9 to 32 read one 64-bit word a value.
func decodeDictF32(dst []float32, dict []float32, b []byte) error {
	if len(dst) == 0 {
		return nil
	}
	if len(b) == 0 {
		return fmt.Errorf("dictionary indices: no bit width byte for %d values: %w", len(dst), errPage)
	}
	bw := uint(b[0])
	if bw > 32 {
		return fmt.Errorf("dictionary indices: bit width %d (at most 32): %w", bw, errPage)
	}
	vb := int(bw+7) / 8 // bytes of an RLE run's value
	var tab *[256]float32
	if bw <= 8 {
		// indices of up to 8 bits index a 256-entry table without
		// bounds checks; entries past the dictionary are zeros and the
		// indices that reach them are reported by the range checks.
		tab = new([256]float32)
		copy(tab[:], dict)
	}
	// the range checks are needed only when some index of bw bits can
	// be past the dictionary.
	check := uint64(len(dict)) < uint64(1)<<bw
	pos := 1
	for i := 0; i < len(dst); {
		h, k := binary.Uvarint(b[pos:])
		if k <= 0 {
			if k == 0 {
				return fmt.Errorf("dictionary indices: %d of %d decoded when the data ends at byte %d: %w", i, len(dst), pos, errPage)
			}
			return fmt.Errorf("dictionary indices: run header at byte %d overflows 64 bits: %w", pos, errPage)
		}
		hpos := pos
		pos += k
		rest := len(dst) - i
		if h&1 == 0 {
			if len(b)-pos < vb {
				return fmt.Errorf("dictionary indices: RLE run at byte %d: %d value bytes, %d left: %w", hpos, vb, len(b)-pos, errPage)
			}
			var v uint64
			for j := range vb {
				v |= uint64(b[pos+j]) << (8 * j)
			}
			pos += vb
			if v >= uint64(len(dict)) {
				return fmt.Errorf("dictionary indices: index %d (value %d) is past the dictionary of %d values: %w", i, v, len(dict), errPage)
			}
			n := rest
			if h>>1 < uint64(rest) {
				n = int(h >> 1)
			}
			fillF32(dst[i:i+n], dict[v])
			i += n
			continue
		}
		groups := h >> 1
		if bw > 0 && groups > uint64(len(b)-pos)/uint64(bw) {
			return fmt.Errorf("dictionary indices: bit-packed run at byte %d: %d groups of %d bytes, %d bytes left: %w", hpos, groups, bw, len(b)-pos, errPage)
		}
		n := rest
		if groups < uint64(rest+7)/8 { // then groups*8 < rest
			n = int(groups * 8)
		}
		// src runs to the end of b, not of the run: 64-bit loads may
		// read the next run's bytes and mask them out.
		src := b[pos:]
		var bad int
		if bw <= 8 {
			bad = unpackNarrow(dst[i:i+n], tab, src, bw, len(dict), check)
		} else {
			bad = unpackWide(dst[i:i+n], dict, src, bw)
		}
		if bad >= 0 {
			v := packedIndex(src, bw, bad)
			return fmt.Errorf("dictionary indices: index %d (value %d) is past the dictionary of %d values: %w", i+bad, v, len(dict), errPage)
		}
		pos += int(groups * uint64(bw))
		i += n
	}
	return nil
}

// fillF32 sets every element of s to v: zeros by clear, short runs by a
// loop, long ones by doubling copies.
func fillF32(s []float32, v float32) {
	if len(s) < 16 {
		for j := range s {
			s[j] = v
		}
		return
	}
	if math.Float32bits(v) == 0 {
		clear(s)
		return
	}
	s[0] = v
	for j := 1; j < len(s); j *= 2 {
		copy(s[j:], s[:j])
	}
}

// packedIndex returns index j of the bit-packed indices of width bw at
// the start of src (which holds it).
func packedIndex(src []byte, bw uint, j int) uint64 {
	o := uint(j) * bw
	var v uint64
	for k := range bw {
		bit := o + k
		v |= uint64(src[bit>>3]>>(bit&7)&1) << k
	}
	return v
}

// unpackNarrow sets dst[j] = tab[index j] for the first len(dst)
// indices of width bw ≤ 8 bit-packed at the start of src, which holds
// them (ceil(len(dst)*bw/8) bytes at least). With check, it returns the
// ordinal of an index ≥ n if there is one (the first one), else -1.
func unpackNarrow(dst []float32, tab *[256]float32, src []byte, bw uint, n int, check bool) int {
	if bw == 0 { // every index is 0
		if check && len(dst) > 0 {
			return 0
		}
		fillF32(dst, tab[0])
		return -1
	}
	mask := uint64(1)<<bw - 1
	// bad accumulates n-1-index for every index: its top bit is set
	// when some index is ≥ n (indices < 256 ≤ 2^63).
	nm1 := uint64(n) - 1
	var bad uint64
	j, p := 0, 0
	if bw == 8 {
		for ; j+8 <= len(dst) && p+8 <= len(src); j, p = j+8, p+8 {
			g := src[p : p+8 : p+8]
			d := dst[j : j+8 : j+8]
			d[0], d[1], d[2], d[3] = tab[g[0]], tab[g[1]], tab[g[2]], tab[g[3]]
			d[4], d[5], d[6], d[7] = tab[g[4]], tab[g[5]], tab[g[6]], tab[g[7]]
			if check {
				bad |= overByte(binary.LittleEndian.Uint64(g), n)
			}
		}
		if bad != 0 {
			return firstBad(src, bw, 0, j, n)
		}
	} else {
		s1, s2, s3, s4, s5, s6, s7 := bw, 2*bw, 3*bw, 4*bw, 5*bw, 6*bw, 7*bw
		for ; j+8 <= len(dst) && p+8 <= len(src); j, p = j+8, p+int(bw) {
			x := binary.LittleEndian.Uint64(src[p:])
			i0, i1, i2, i3 := x&mask, x>>s1&mask, x>>s2&mask, x>>s3&mask
			i4, i5, i6, i7 := x>>s4&mask, x>>s5&mask, x>>s6&mask, x>>s7&mask
			d := dst[j : j+8 : j+8]
			d[0], d[1], d[2], d[3] = tab[uint8(i0)], tab[uint8(i1)], tab[uint8(i2)], tab[uint8(i3)]
			d[4], d[5], d[6], d[7] = tab[uint8(i4)], tab[uint8(i5)], tab[uint8(i6)], tab[uint8(i7)]
			if check {
				bad |= (nm1 - i0) | (nm1 - i1) | (nm1 - i2) | (nm1 - i3) |
					(nm1 - i4) | (nm1 - i5) | (nm1 - i6) | (nm1 - i7)
			}
		}
		if bad>>63 != 0 {
			return firstBad(src, bw, 0, j, n)
		}
	}
	// the rest (the end of b, or a last group cut by len(dst)) bit by
	// bit-window, reading only the bytes that exist.
	for ; j < len(dst); j++ {
		v := packedIndex(src, bw, j)
		if check && v >= uint64(n) {
			return j
		}
		dst[j] = tab[uint8(v)]
	}
	return -1
}

// overByte returns a nonzero value when some byte of x is ≥ n (1 ≤ n ≤
// 256): each byte plus 256-n, in 16-bit lanes that cannot carry into
// each other, reaches bit 8 exactly then.
func overByte(x uint64, n int) uint64 {
	const lanes = 0x00ff00ff00ff00ff
	c := uint64(256-n) * 0x0001000100010001
	return ((x&lanes + c) | (x>>8&lanes + c)) & 0x0100010001000100
}

// firstBad returns the ordinal of the first index ≥ n among indices
// [from, to) bit-packed at width bw at the start of src.
func firstBad(src []byte, bw uint, from, to, n int) int {
	for j := from; j < to; j++ {
		if packedIndex(src, bw, j) >= uint64(n) {
			return j
		}
	}
	return -1 // not reached: a caller saw one
}

// unpackWide sets dst[j] = dict[index j] for the first len(dst) indices
// of width 9 ≤ bw ≤ 32 bit-packed at the start of src, which holds them.
// It returns the ordinal of the first index ≥ len(dict), or -1.
func unpackWide(dst []float32, dict []float32, src []byte, bw uint) int {
	mask := uint64(1)<<bw - 1
	o := uint(0) // bit offset of index j
	j := 0
	// an index at bit offset o is within the 64-bit word at byte o>>3
	// (o&7 + bw ≤ 39 bits).
	for ; j < len(dst) && int(o>>3)+8 <= len(src); j, o = j+1, o+bw {
		v := binary.LittleEndian.Uint64(src[o>>3:]) >> (o & 7) & mask
		if v >= uint64(len(dict)) {
			return j
		}
		dst[j] = dict[v]
	}
	for ; j < len(dst); j++ {
		v := packedIndex(src, bw, j)
		if v >= uint64(len(dict)) {
			return j
		}
		dst[j] = dict[v]
	}
	return -1
}
