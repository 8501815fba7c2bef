package tensor

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
)

// RNG is a seeded pseudo-random generator for tensors: xoshiro256**
// (Blackman & Vigna, "Scrambled linear pseudorandom number generators",
// 2018), seeded through splitmix64 as its authors recommend. The stream
// depends only on the seed, so runs are reproducible across machines.
// Normal variates use the Box–Muller transform, which calls math.Log,
// math.Sqrt and math.Sincos; those are pure Go on every platform Go
// supports except s390x, so streams match bit for bit on amd64 and arm64.
//
// An RNG is not safe for concurrent use; give each goroutine its own (see
// Split). Its state can be saved and restored with MarshalBinary and
// UnmarshalBinary, e.g. in checkpoints.
type RNG struct {
	s [4]uint64
}

// NewRNG returns a generator seeded with seed.
func NewRNG(seed uint64) *RNG {
	r := &RNG{}
	r.Seed(seed)
	return r
}

// Seed resets the generator to the stream of seed.
func (r *RNG) Seed(seed uint64) {
	for i := range r.s {
		seed += 0x9e3779b97f4a7c15 // splitmix64
		z := seed
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		r.s[i] = z ^ z>>31
	}
}

// Uint64 returns 64 uniformly random bits.
func (r *RNG) Uint64() uint64 {
	s := &r.s
	res := bits.RotateLeft64(s[1]*5, 7) * 9
	t := s[1] << 17
	s[2] ^= s[0]
	s[3] ^= s[1]
	s[1] ^= s[2]
	s[0] ^= s[3]
	s[2] ^= t
	s[3] = bits.RotateLeft64(s[3], 45)
	return res
}

// Float64 returns a uniform number in [0, 1) with 53 random bits.
func (r *RNG) Float64() float64 { return float64(r.Uint64()>>11) * 0x1p-53 }

// Float32 returns a uniform number in [0, 1) with 24 random bits.
func (r *RNG) Float32() float32 { return float32(r.Uint64()>>40) * 0x1p-24 }

// Intn returns a uniform integer in [0, n) without modulo bias (Lemire,
// "Fast random integer generation in an interval", 2019). It panics if n ≤ 0.
func (r *RNG) Intn(n int) int {
	if n <= 0 {
		panic("tensor: RNG.Intn with n <= 0")
	}
	un := uint64(n)
	hi, lo := bits.Mul64(r.Uint64(), un)
	if lo < un {
		thresh := -un % un
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), un)
		}
	}
	return int(hi)
}

// NormFloat64 returns a standard normal variate (Box–Muller; the second
// variate of each pair is discarded so the state stays a pure function of
// the calls made).
func (r *RNG) NormFloat64() float64 {
	z, _ := r.normPair()
	return z
}

func (r *RNG) normPair() (float64, float64) {
	u1 := 1 - r.Float64() // (0, 1]: log is finite
	u2 := r.Float64()
	rad := math.Sqrt(-2 * math.Log(u1))
	s, c := math.Sincos(2 * math.Pi * u2)
	return rad * c, rad * s
}

// Perm returns a random permutation of 0..n-1 (Fisher–Yates).
func (r *RNG) Perm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	r.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

// Shuffle permutes n items with swap (Fisher–Yates).
func (r *RNG) Shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		swap(i, r.Intn(i+1))
	}
}

// Split returns a generator for another goroutine or worker: it takes
// over r's current stream, and r jumps 2¹²⁸ steps ahead (the xoshiro jump
// function), so the two never overlap in practice and repeated Splits give
// distinct streams.
func (r *RNG) Split() *RNG {
	c := &RNG{s: r.s}
	r.jump()
	return c
}

// jump advances the state by 2¹²⁸ calls of Uint64.
func (r *RNG) jump() {
	jumpPoly := [4]uint64{0x180ec6d33cfd0aba, 0xd5a61266f0c9392c, 0xa9582618e03fc9aa, 0x39abdc4529b1661c}
	var s [4]uint64
	for _, j := range jumpPoly {
		for b := 0; b < 64; b++ {
			if j&(1<<b) != 0 {
				for i := range s {
					s[i] ^= r.s[i]
				}
			}
			r.Uint64()
		}
	}
	r.s = s
}

// MarshalBinary returns the generator state (32 bytes).
func (r *RNG) MarshalBinary() ([]byte, error) {
	b := make([]byte, 32)
	for i, v := range r.s {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return b, nil
}

// UnmarshalBinary restores a state saved by MarshalBinary.
func (r *RNG) UnmarshalBinary(b []byte) error {
	if len(b) != 32 {
		return errors.New("tensor: RNG state must be 32 bytes")
	}
	var s [4]uint64
	for i := range s {
		s[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	if s == [4]uint64{} {
		return errors.New("tensor: RNG state is all zeros")
	}
	r.s = s
	return nil
}

// fillFloat fills a new tensor of type dt element by element from f.
func (r *RNG) fillFloat(dt DType, shape []int, f func() float64) *Tensor {
	t := empty(dt, shape)
	n := t.Numel()
	switch dt {
	case Float32:
		d := flat[float32](t)
		for i := range d {
			d[i] = float32(f())
		}
	case Float64:
		d := flat[float64](t)
		for i := range d {
			d[i] = f()
		}
	default:
		for i := 0; i < n; i++ {
			t.setFlat(i, f())
		}
	}
	return t
}

// Uniform returns a tensor of values drawn uniformly from [lo, hi).
func (r *RNG) Uniform(dt DType, lo, hi float64, shape ...int) *Tensor {
	if dt == Float32 {
		t := empty(dt, shape)
		d := flat[float32](t)
		l, w := float32(lo), float32(hi-lo)
		for i := range d {
			v := l + w*r.Float32()
			if v >= float32(hi) { // rounding can reach hi
				v = l
			}
			d[i] = v
		}
		return t
	}
	return r.fillFloat(dt, shape, func() float64 { return lo + (hi-lo)*r.Float64() })
}

// Normal returns a tensor of normal variates with the given mean and
// standard deviation.
func (r *RNG) Normal(dt DType, mean, std float64, shape ...int) *Tensor {
	t := empty(dt, shape)
	n := t.Numel()
	vals := make([]float64, n)
	for i := 0; i+1 < n; i += 2 {
		a, b := r.normPair()
		vals[i], vals[i+1] = mean+std*a, mean+std*b
	}
	if n%2 == 1 {
		a, _ := r.normPair()
		vals[n-1] = mean + std*a
	}
	copyRaw(t, FromFloat64(vals, t.shape...).castRaw(dt))
	return t
}

// Bernoulli returns a tensor of 1s (with probability p) and 0s.
func (r *RNG) Bernoulli(dt DType, p float64, shape ...int) *Tensor {
	return r.fillFloat(dt, shape, func() float64 {
		if r.Float64() < p {
			return 1
		}
		return 0
	})
}

// RandInt returns a tensor of integers drawn uniformly from [lo, hi).
func (r *RNG) RandInt(dt DType, lo, hi int, shape ...int) *Tensor {
	if hi <= lo {
		panic("tensor: RandInt needs lo < hi")
	}
	t := empty(dt, shape)
	if dt == Int64 {
		d := flat[int64](t)
		for i := range d {
			d[i] = int64(lo + r.Intn(hi-lo))
		}
		return t
	}
	for i := range t.Numel() {
		t.setFlat(i, float64(lo+r.Intn(hi-lo)))
	}
	return t
}
