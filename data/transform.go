package data

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
)

// Standardizer centres each feature column on zero mean and scales it to unit
// standard deviation, as scikit-learn's StandardScaler and Spark's
// StandardScaler(withMean, withStd) do. Fit it on training data and apply it
// to every split; its fields are exported so a model file can store them.
type Standardizer struct {
	Mean []float64 `json:"mean"`
	// Std is the population standard deviation (divisor n). A constant
	// column has Std 0 and is only centred.
	Std []float64 `json:"std"`
}

// FitStandardizer computes the mean and standard deviation of each column of
// t, accumulating in float64 with the two-pass algorithm (Chan, Golub and
// LeVeque, "Algorithms for computing the sample variance", 1983).
func FitStandardizer(t *Table) *Standardizer {
	s := &Standardizer{Mean: make([]float64, t.Cols), Std: make([]float64, t.Cols)}
	if t.Rows == 0 {
		return s
	}
	for i := 0; i < t.Rows; i++ {
		for j, v := range t.Row(i) {
			s.Mean[j] += float64(v)
		}
	}
	for j := range s.Mean {
		s.Mean[j] /= float64(t.Rows)
	}
	for i := 0; i < t.Rows; i++ {
		for j, v := range t.Row(i) {
			d := float64(v) - s.Mean[j]
			s.Std[j] += d * d
		}
	}
	for j := range s.Std {
		s.Std[j] = math.Sqrt(s.Std[j] / float64(t.Rows))
	}
	return s
}

// Apply standardizes t's features in place.
func (s *Standardizer) Apply(t *Table) error {
	if len(s.Mean) != t.Cols || len(s.Std) != t.Cols {
		return fmt.Errorf("standardize: fitted on %d columns, table has %d", len(s.Mean), t.Cols)
	}
	inv := make([]float64, t.Cols)
	for j, sd := range s.Std {
		inv[j] = 1
		if sd > 0 {
			inv[j] = 1 / sd
		}
	}
	for i := 0; i < t.Rows; i++ {
		row := t.Row(i)
		for j, v := range row {
			row[j] = float32((float64(v) - s.Mean[j]) * inv[j])
		}
	}
	return nil
}

// MinMaxScaler maps each feature column linearly onto [0, 1] using the
// minimum and maximum seen when fitting (values outside that range map
// outside [0, 1]). A constant column maps to 0.
type MinMaxScaler struct {
	Min []float64 `json:"min"`
	Max []float64 `json:"max"`
}

// FitMinMax records the minimum and maximum of each column of t.
func FitMinMax(t *Table) *MinMaxScaler {
	m := &MinMaxScaler{Min: make([]float64, t.Cols), Max: make([]float64, t.Cols)}
	for j := range m.Min {
		m.Min[j], m.Max[j] = math.Inf(1), math.Inf(-1)
	}
	for i := 0; i < t.Rows; i++ {
		for j, v := range t.Row(i) {
			m.Min[j] = math.Min(m.Min[j], float64(v))
			m.Max[j] = math.Max(m.Max[j], float64(v))
		}
	}
	if t.Rows == 0 {
		clear(m.Min)
		clear(m.Max)
	}
	return m
}

// Apply rescales t's features in place.
func (m *MinMaxScaler) Apply(t *Table) error {
	if len(m.Min) != t.Cols || len(m.Max) != t.Cols {
		return fmt.Errorf("min-max: fitted on %d columns, table has %d", len(m.Min), t.Cols)
	}
	for i := 0; i < t.Rows; i++ {
		row := t.Row(i)
		for j, v := range row {
			span := m.Max[j] - m.Min[j]
			if span > 0 {
				row[j] = float32((float64(v) - m.Min[j]) / span)
			} else {
				row[j] = 0
			}
		}
	}
	return nil
}

// rng is the package's seeded random source: PCG-DXSM from math/rand/v2,
// whose output sequence for a seed is fixed by its specification, with our own
// bounded draws and shuffle so that results do not change between Go releases.
type rng struct{ src *rand.PCG }

func newRNG(seed uint64) *rng {
	return &rng{src: rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)}
}

// intn returns a uniform integer in [0, n), n > 0, by Lemire's multiply-and-
// reject method ("Fast Random Integer Generation in an Interval", ACM TOMACS
// 29(1), 2019).
func (r *rng) intn(n int) int {
	bound := uint64(n)
	hi, lo := bits.Mul64(r.src.Uint64(), bound)
	if lo < bound {
		threshold := -bound % bound
		for lo < threshold {
			hi, lo = bits.Mul64(r.src.Uint64(), bound)
		}
	}
	return int(hi)
}

// shuffle permutes p uniformly with the Fisher–Yates algorithm (Knuth, TAOCP
// vol. 2, 3.4.2, Algorithm P).
func (r *rng) shuffle(p []int) {
	for i := len(p) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		p[i], p[j] = p[j], p[i]
	}
}

// Permutation returns a random permutation of 0..n-1 determined by seed.
func Permutation(n int, seed uint64) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	newRNG(seed).shuffle(p)
	return p
}

// Shuffled returns a copy of t with its rows in a random order determined by
// seed.
func (t *Table) Shuffled(seed uint64) *Table {
	return t.Subset(Permutation(t.Rows, seed))
}

// SplitOptions says how to split a table. The fractions must be non-negative
// and sum to at most 1; Test gets whatever rows Train and Validation leave.
type SplitOptions struct {
	Train      float64
	Validation float64
	Seed       uint64
	// Stratify splits every class separately, so each split keeps the class
	// proportions of the whole table (the table must have Labels).
	Stratify bool
}

// Splits holds the parts of a split table; a part may have zero rows.
type Splits struct {
	Train, Validation, Test *Table
}

// Split divides t's rows at random into training, validation and test tables.
// Each group (the whole table, or each class when stratifying) gets
// round(n·Train) training rows, round(n·Validation) validation rows and the
// rest as test rows; the rows of each part are in random order.
func Split(t *Table, opts SplitOptions) (Splits, error) {
	if opts.Train < 0 || opts.Validation < 0 || opts.Train+opts.Validation > 1+1e-9 {
		return Splits{}, fmt.Errorf("split: fractions train %g and validation %g must be non-negative and sum to at most 1", opts.Train, opts.Validation)
	}
	r := newRNG(opts.Seed)
	var groups [][]int
	if opts.Stratify {
		if t.Labels == nil {
			return Splits{}, fmt.Errorf("split: stratifying needs class labels")
		}
		groups = make([][]int, len(t.Classes))
		for i, l := range t.Labels {
			groups[l] = append(groups[l], i)
		}
	} else {
		all := make([]int, t.Rows)
		for i := range all {
			all[i] = i
		}
		groups = [][]int{all}
	}
	var train, val, test []int
	for _, g := range groups {
		r.shuffle(g)
		n := len(g)
		nTrain := min(int(math.Round(float64(n)*opts.Train)), n)
		nVal := min(int(math.Round(float64(n)*opts.Validation)), n-nTrain)
		train = append(train, g[:nTrain]...)
		val = append(val, g[nTrain:nTrain+nVal]...)
		test = append(test, g[nTrain+nVal:]...)
	}
	if opts.Stratify { // mix the classes within each part
		r.shuffle(train)
		r.shuffle(val)
		r.shuffle(test)
	}
	return Splits{Train: t.Subset(train), Validation: t.Subset(val), Test: t.Subset(test)}, nil
}
