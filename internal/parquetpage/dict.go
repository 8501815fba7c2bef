package parquetpage

import (
	"encoding/binary"
	"fmt"
	"math"
)

// DecodeDictF32 decodes len(dst) dictionary indices from b and sets
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
// The error (wrapping ErrPage) says what is wrong and where (byte offset
// in b, index ordinal): a bit width above 32, a run header that is not a
// varint of at most 64 bits, a run whose bytes go past the end of b, an
// index not below len(dict), or b ending before len(dst) indices. It
// never panics; its work is bounded by len(dst) + len(b).
//
// Fast paths: RLE runs are fills; bit-packed indices of width 1 to 8 are
// unpacked 8 at a time from one 64-bit load and gathered from a
// 256-entry copy of the dictionary without bounds checks (index ranges
// checked branch-free per run, and not at all when the dictionary has
// 1<<width entries or more); widths 9 to 32 take 4 (width ≤ 14), 2
// (≤ 28) or 1 index from each 64-bit load.
func DecodeDictF32(dst []float32, dict []float32, b []byte) error {
	if len(dst) == 0 {
		return nil
	}
	if len(b) == 0 {
		return errDictNoWidth(len(dst))
	}
	bw := uint(b[0])
	if bw > 32 {
		return fmt.Errorf("dictionary indices: bit width %d (at most 32): %w", bw, ErrPage)
	}
	vb := int(bw+7) / 8 // bytes of an RLE run's value
	var nd dictNarrow   // on the stack: 1 KiB
	if bw <= 8 {
		nd.init(dict, bw)
	}
	pos := 1
	for i := 0; i < len(dst); {
		h, k := binary.Uvarint(b[pos:])
		if k <= 0 {
			return errDictHeader(k, i, len(dst), pos)
		}
		hpos := pos
		pos += k
		rest := len(dst) - i
		if h&1 == 0 {
			if len(b)-pos < vb {
				return errDictRLEShort(hpos, vb, len(b)-pos)
			}
			var v uint64
			for j := range vb {
				v |= uint64(b[pos+j]) << (8 * j)
			}
			pos += vb
			if v >= uint64(len(dict)) {
				return errDictIndex(i, v, len(dict))
			}
			n := rest
			if h>>1 < uint64(rest) {
				n = int(h >> 1)
			}
			fillRunF32(dst[i:i+n], dict[v])
			i += n
			continue
		}
		groups := h >> 1
		if bw > 0 && groups > uint64(len(b)-pos)/uint64(bw) {
			return errDictPacked(hpos, groups, bw, len(b)-pos)
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
			bad = nd.unpack(dst[i:i+n], src)
		} else {
			bad = unpackDictWide(dst[i:i+n], dict, src, bw)
		}
		if bad >= 0 {
			return errDictIndex(i+bad, packedIndexAt(src, bw, bad), len(dict))
		}
		pos += int(groups * uint64(bw))
		i += n
	}
	return nil
}

// The errors of the dictionary index decoders (DecodeDictF32,
// DecodeDictIdx8): what is wrong with the indices and where.

func errDictNoWidth(n int) error {
	return fmt.Errorf("dictionary indices: no bit width byte for %d values: %w", n, ErrPage)
}

// errDictHeader: binary.Uvarint returned k ≤ 0 for the run header at
// byte pos, after i of n indices.
func errDictHeader(k, i, n, pos int) error {
	if k == 0 {
		return fmt.Errorf("dictionary indices: %d of %d decoded when the data ends at byte %d: %w", i, n, pos, ErrPage)
	}
	return fmt.Errorf("dictionary indices: run header at byte %d overflows 64 bits: %w", pos, ErrPage)
}

func errDictRLEShort(hpos, vb, left int) error {
	return fmt.Errorf("dictionary indices: RLE run at byte %d: %d value bytes, %d left: %w", hpos, vb, left, ErrPage)
}

func errDictPacked(hpos int, groups uint64, bw uint, left int) error {
	return fmt.Errorf("dictionary indices: bit-packed run at byte %d: %d groups of %d bytes, %d bytes left: %w", hpos, groups, bw, left, ErrPage)
}

func errDictIndex(i int, v uint64, n int) error {
	return fmt.Errorf("dictionary indices: value %d has index %d, past the dictionary of %d values: %w", i, v, n, ErrPage)
}

// DecodeDictIdx8 decodes len(dst) dictionary indices of bit width at
// most 8 from b, the value section of a dictionary-encoded data page (as
// DecodeDictF32 reads it), into dst: the indices themselves, each below
// dictLen, for a caller that looks them up later (a dictionary of at most
// 256 values). It checks what DecodeDictF32 checks, with the same errors;
// a bit width above 8 is an error too. Bit-packed indices are unpacked 8
// at a time from one 64-bit load into one 64-bit store (copied at width
// 8), range-checked branch-free per run as DecodeDictF32 does, and not
// at all when dictLen is 1<<width or more.
func DecodeDictIdx8(dst []uint8, dictLen int, b []byte) error {
	if len(dst) == 0 {
		return nil
	}
	if len(b) == 0 {
		return errDictNoWidth(len(dst))
	}
	bw := uint(b[0])
	if bw > 8 {
		return fmt.Errorf("dictionary indices: bit width %d (at most 8 for byte indices): %w", bw, ErrPage)
	}
	u := idxUnpacker{bw: bw, n: dictLen, check: uint64(dictLen) < uint64(1)<<bw}
	if u.check && bw > 0 {
		u.lanes, u.add, u.carry = indexOverConsts(bw, dictLen)
	}
	vb := int(bw+7) / 8 // 0 or 1
	pos := 1
	for i := 0; i < len(dst); {
		h, k := binary.Uvarint(b[pos:])
		if k <= 0 {
			return errDictHeader(k, i, len(dst), pos)
		}
		hpos := pos
		pos += k
		rest := len(dst) - i
		if h&1 == 0 {
			if len(b)-pos < vb {
				return errDictRLEShort(hpos, vb, len(b)-pos)
			}
			var v uint64
			if vb == 1 {
				v = uint64(b[pos])
			}
			pos += vb
			if v >= uint64(dictLen) {
				return errDictIndex(i, v, dictLen)
			}
			n := rest
			if h>>1 < uint64(rest) {
				n = int(h >> 1)
			}
			fillRunU8(dst[i:i+n], uint8(v))
			i += n
			continue
		}
		groups := h >> 1
		if bw > 0 && groups > uint64(len(b)-pos)/uint64(bw) {
			return errDictPacked(hpos, groups, bw, len(b)-pos)
		}
		n := rest
		if groups < uint64(rest+7)/8 { // then groups*8 < rest
			n = int(groups * 8)
		}
		src := b[pos:]
		if bad := u.unpack(dst[i:i+n], src); bad >= 0 {
			return errDictIndex(i+bad, packedIndexAt(src, bw, bad), dictLen)
		}
		pos += int(groups * uint64(bw))
		i += n
	}
	return nil
}

// fillRunU8 sets every element of s to v.
func fillRunU8(s []uint8, v uint8) {
	if v == 0 {
		clear(s)
		return
	}
	for len(s) >= 8 {
		binary.LittleEndian.PutUint64(s, uint64(v)*0x0101010101010101)
		s = s[8:]
	}
	for j := range s {
		s[j] = v
	}
}

// idxUnpacker unpacks bit-packed indices of width bw ≤ 8 to bytes,
// range-checked against a dictionary of n values when check (as
// dictNarrow does).
type idxUnpacker struct {
	bw                uint
	n                 int
	check             bool
	lanes, add, carry uint64
}

// unpack sets dst[j] to index j of the indices bit-packed at the start of
// src, which holds them. It returns the ordinal of the first index past
// the dictionary, or -1.
func (u *idxUnpacker) unpack(dst []uint8, src []byte) int {
	bw := u.bw
	if bw == 0 { // every index is 0
		if u.check && len(dst) > 0 {
			return 0
		}
		clear(dst)
		return -1
	}
	// whole groups whose 64-bit load stays within src
	g := len(dst) / 8
	if len(src) < 8 {
		g = 0
	} else {
		g = min(g, (len(src)-8)/int(bw)+1)
	}
	var bad uint64
	if bw == 8 {
		copy(dst[:8*g], src)
		if u.check {
			for p := 0; p < 8*g; p += 8 {
				bad |= indexOver(binary.LittleEndian.Uint64(src[p:]), 8, u.lanes, u.add, u.carry)
			}
		}
	} else {
		bad = unpackBitsU8(dst[:8*g], src, bw, u.check, u.lanes, u.add, u.carry)
	}
	if bad != 0 {
		return firstBadIndex(src, bw, 0, 8*g, u.n)
	}
	// the rest bit by bit, reading only the bytes that exist
	for j := 8 * g; j < len(dst); j++ {
		v := packedIndexAt(src, bw, j)
		if u.check && v >= uint64(u.n) {
			return j
		}
		dst[j] = uint8(v)
	}
	return -1
}

// unpackBitsU8 sets dst[j] to index j for the len(dst)/8 whole groups of
// indices of width bw < 8 at the start of src, each group read by one
// 64-bit load (src holds 8 bytes from the start of every group) and
// written by one 64-bit store. With check, it returns indexOver's
// accumulation over the groups.
func unpackBitsU8(dst []uint8, src []byte, bw uint, check bool, lanes, add, carry uint64) uint64 {
	m := uint64(1)<<bw - 1
	s, s2, s3, s4 := bw&63, 2*bw&63, 3*bw&63, 4*bw&63
	var bad uint64
	for p := 0; len(dst) >= 8; p += int(bw) {
		x := binary.LittleEndian.Uint64(src[p:])
		if check {
			bad |= indexOver(x, bw, lanes, add, carry)
		}
		// index k moves from bit k*bw to bit 8k: indices 0-3, then 4-7
		y := x >> s4
		v := x&m | (x>>s&m)<<8 | (x>>s2&m)<<16 | (x>>s3&m)<<24
		v |= (y&m | (y>>s&m)<<8 | (y>>s2&m)<<16 | (y>>s3&m)<<24) << 32
		binary.LittleEndian.PutUint64(dst, v)
		dst = dst[8:]
	}
	return bad
}

// fillRunF32 sets every element of s to v: zeros by clear, short runs by
// stores 8 at a time, long ones by doubling copies.
func fillRunF32(s []float32, v float32) {
	if len(s) >= 128 {
		if math.Float32bits(v) == 0 {
			clear(s)
			return
		}
		s[0] = v
		for j := 1; j < len(s); j *= 2 {
			copy(s[j:], s[:j])
		}
		return
	}
	for len(s) >= 8 {
		d := s[:8:8]
		d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = v, v, v, v, v, v, v, v
		s = s[8:]
	}
	for j := range s {
		s[j] = v
	}
}

// packedIndexAt returns index j of the bit-packed indices of width bw at
// the start of src (which holds it).
func packedIndexAt(src []byte, bw uint, j int) uint64 {
	o := uint(j) * bw
	var v uint64
	for k := range bw {
		bit := o + k
		v |= uint64(src[bit>>3]>>(bit&7)&1) << k
	}
	return v
}

// dictNarrow decodes bit-packed indices of width bw ≤ 8.
type dictNarrow struct {
	// tab holds the dictionary's first 256 values: indices of up to 8
	// bits index it without bounds checks; entries past the dictionary
	// are zeros, and the indices that reach them are reported by the
	// range checks.
	tab [256]float32
	bw  uint
	n   int // dictionary size
	// check: some index of bw bits can be past the dictionary, so the
	// indices are range-checked (by indexOver, with lanes, add and
	// carry).
	check             bool
	lanes, add, carry uint64
}

// init sets nd up for dictionary dict and indices of width bw ≤ 8.
func (nd *dictNarrow) init(dict []float32, bw uint) {
	nd.bw, nd.n, nd.check = bw, len(dict), uint64(len(dict)) < uint64(1)<<bw
	copy(nd.tab[:], dict)
	if nd.check {
		nd.lanes, nd.add, nd.carry = indexOverConsts(bw, len(dict))
	}
}

// unpack sets dst[j] = tab[index j] for the first len(dst) indices
// bit-packed at the start of src, which holds them (ceil(len(dst)*bw/8)
// bytes at least). It returns the ordinal of the first index past the
// dictionary, or -1.
func (nd *dictNarrow) unpack(dst []float32, src []byte) int {
	bw := nd.bw
	if bw == 0 { // every index is 0
		if nd.check && len(dst) > 0 {
			return 0
		}
		fillRunF32(dst, nd.tab[0])
		return -1
	}
	// whole groups whose 64-bit load stays within src, by the fast loops
	g := len(dst) / 8
	if len(src) < 8 {
		g = 0
	} else {
		g = min(g, (len(src)-8)/int(bw)+1)
	}
	var bad uint64
	if bw == 8 {
		bad = gatherDictBytes(dst[:8*g], src, &nd.tab, nd.check, nd.lanes, nd.add, nd.carry)
	} else {
		bad = gatherDictBits(dst[:8*g], src, &nd.tab, bw, nd.check, nd.lanes, nd.add, nd.carry)
	}
	if bad != 0 {
		return firstBadIndex(src, bw, 0, 8*g, nd.n)
	}
	// the rest (the end of b, or a last group cut by len(dst)) bit by
	// bit, reading only the bytes that exist.
	for j := 8 * g; j < len(dst); j++ {
		v := packedIndexAt(src, bw, j)
		if nd.check && v >= uint64(nd.n) {
			return j
		}
		dst[j] = nd.tab[uint8(v)]
	}
	return -1
}

// gatherDictBytes sets dst[j] = tab[src[j]] (indices of width 8) for the
// len(dst)/8 whole groups of dst. With check, it returns indexOver's
// accumulation over the groups (nonzero if an index is past the
// dictionary).
func gatherDictBytes(dst []float32, src []byte, tab *[256]float32, check bool, lanes, add, carry uint64) uint64 {
	var bad uint64
	for p := 0; len(dst) >= 8; p += 8 {
		g, d := src[p:p+8:p+8], dst[:8:8]
		d[0], d[1], d[2], d[3] = tab[g[0]], tab[g[1]], tab[g[2]], tab[g[3]]
		d[4], d[5], d[6], d[7] = tab[g[4]], tab[g[5]], tab[g[6]], tab[g[7]]
		if check {
			bad |= indexOver(binary.LittleEndian.Uint64(g), 8, lanes, add, carry)
		}
		dst = dst[8:]
	}
	return bad
}

// gatherDictBits sets dst[j] = tab[index j] for the len(dst)/8 whole groups
// of indices of width bw < 8 at the start of src, each group read by one
// 64-bit load (src holds 8 bytes from the start of every group). With
// check, it returns indexOver's accumulation over the groups.
func gatherDictBits(dst []float32, src []byte, tab *[256]float32, bw uint, check bool, lanes, add, carry uint64) uint64 {
	m := uint8(1)<<bw - 1
	// one shift count (bw) for the indices of a group, in two chains
	// (indices 0-3 and 4-7)
	s, s4 := bw&63, 4*bw&63
	var bad uint64
	for p := 0; len(dst) >= 8; p += int(bw) {
		x := binary.LittleEndian.Uint64(src[p:])
		if check {
			bad |= indexOver(x, bw, lanes, add, carry)
		}
		d := dst[:8:8]
		y := x >> s4
		d[0], d[4] = tab[uint8(x)&m], tab[uint8(y)&m]
		x, y = x>>s, y>>s
		d[1], d[5] = tab[uint8(x)&m], tab[uint8(y)&m]
		x, y = x>>s, y>>s
		d[2], d[6] = tab[uint8(x)&m], tab[uint8(y)&m]
		x, y = x>>s, y>>s
		d[3], d[7] = tab[uint8(x)&m], tab[uint8(y)&m]
		dst = dst[8:]
	}
	return bad
}

// indexOverConsts returns the constants of indexOver for indices of
// width bw ≤ 8 and a dictionary of n ≤ 1<<bw values: lanes selects the
// even indices of a group, each at the bottom of a lane of 2*bw bits;
// add holds (1<<bw)-n in every lane, carry bit bw of every lane.
func indexOverConsts(bw uint, n int) (lanes, add, carry uint64) {
	for k := uint(0); k < 8; k += 2 {
		lanes |= (uint64(1)<<bw - 1) << (k * bw)
		add |= (uint64(1)<<bw - uint64(n)) << (k * bw)
		carry |= uint64(1) << (k*bw + bw)
	}
	return lanes, add, carry
}

// indexOver returns a nonzero value when some index of the group of 8
// indices of width bw at the bottom of x is ≥ n (see indexOverConsts):
// an index plus (1<<bw)-n reaches bit bw of its lane exactly then, and
// the lanes are wide enough for no carry to cross into the next.
func indexOver(x uint64, bw uint, lanes, add, carry uint64) uint64 {
	return ((x&lanes + add) | (x>>(bw&63)&lanes + add)) & carry
}

// firstBadIndex returns the ordinal of the first index ≥ n among indices
// [from, to) bit-packed at width bw at the start of src.
func firstBadIndex(src []byte, bw uint, from, to, n int) int {
	for j := from; j < to; j++ {
		if packedIndexAt(src, bw, j) >= uint64(n) {
			return j
		}
	}
	return -1 // not reached: a caller saw one
}

// unpackDictWide sets dst[j] = dict[index j] for the first len(dst) indices
// of width 9 ≤ bw ≤ 32 bit-packed at the start of src, which holds them.
// It returns the ordinal of the first index ≥ len(dict), or -1.
func unpackDictWide(dst []float32, dict []float32, src []byte, bw uint) int {
	mask := uint64(1)<<bw - 1
	// an index at bit offset o is within the 64-bit word at byte o>>3
	// (o&7 + bw ≤ 39 bits): the first f indices are read so.
	f := 0
	if len(src) >= 8 {
		f = min(len(dst), ((len(src)-8)*8+7)/int(bw)+1)
	}
	n := uint64(len(dict))
	s := bw & 63
	o := uint(0) // bit offset of index j
	j := 0
	if bw <= 14 {
		// 4 indices in one 64-bit word (o&7 + 4*bw ≤ 63 bits)
		for ; j+4 <= len(dst) && j < f; j += 4 {
			q := o >> 3
			x := binary.LittleEndian.Uint64(src[q:q+8:q+8]) >> (o & 7)
			v0, v1, v2, v3 := x&mask, x>>s&mask, x>>(2*s)&mask, x>>(3*s&63)&mask
			if max(v0, v1, v2, v3) >= n {
				break // the loop below finds it
			}
			d := dst[j : j+4 : j+4]
			d[0], d[1], d[2], d[3] = dict[v0], dict[v1], dict[v2], dict[v3]
			o += 4 * bw
		}
	} else if bw <= 28 {
		// 2 indices in one 64-bit word
		for ; j+2 <= len(dst) && j < f; j += 2 {
			q := o >> 3
			x := binary.LittleEndian.Uint64(src[q:q+8:q+8]) >> (o & 7)
			v0, v1 := x&mask, x>>s&mask
			if max(v0, v1) >= n {
				break
			}
			dst[j], dst[j+1] = dict[v0], dict[v1]
			o += 2 * bw
		}
	}
	for ; j < f; j++ {
		q := o >> 3
		v := binary.LittleEndian.Uint64(src[q:q+8:q+8]) >> (o & 7) & mask
		if v >= n {
			return j
		}
		dst[j] = dict[v]
		o += bw
	}
	for ; j < len(dst); j++ {
		v := packedIndexAt(src, bw, j)
		if v >= uint64(len(dict)) {
			return j
		}
		dst[j] = dict[v]
	}
	return -1
}
