package cluster

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parallel"
	"github.com/fathom-ml/fathom/ml"
)

// Initialization modes and algorithms.
const (
	InitKMeansParallel = "k-means||"
	InitKMeansPlusPlus = "k-means++"
	InitRandom         = "random"

	AlgorithmAuto    = "auto"
	AlgorithmLloyd   = "lloyd"
	AlgorithmHamerly = "hamerly"
)

// sparkSeed is Spark's default seed for KMeans: the Java hashCode of
// "org.apache.spark.ml.clustering.KMeans".
const sparkSeed = -1689246527

// KMeans is Spark ML's KMeans estimator. Its zero value is not usable:
// start from NewKMeans.
type KMeans struct {
	FeaturesCol   string `json:"featuresCol" yaml:"featuresCol"`
	PredictionCol string `json:"predictionCol" yaml:"predictionCol"`
	// K is the number of clusters [2]; fewer come out when the data has
	// fewer than K distinct points (see the package doc).
	K int `json:"k" yaml:"k"`
	// MaxIter bounds the Lloyd iterations [20].
	MaxIter int `json:"maxIter" yaml:"maxIter"`
	// Tol ends the iterations once no center moved farther than Tol
	// (Euclidean distance) in one [1e-4].
	Tol float64 `json:"tol" yaml:"tol"`
	// Seed drives the initialization [Spark's: the hash of the class name].
	Seed int64 `json:"seed" yaml:"seed"`
	// InitMode is "k-means||" (default), "k-means++" or "random".
	InitMode string `json:"initMode" yaml:"initMode"`
	// InitSteps is the number of k-means|| rounds [2].
	InitSteps int `json:"initSteps" yaml:"initSteps"`
	// DistanceMeasure is "euclidean" (default) or "cosine".
	DistanceMeasure string `json:"distanceMeasure" yaml:"distanceMeasure"`
	// Algorithm (not in Spark) is "auto" (default: Hamerly's), "lloyd"
	// (every distance, every iteration) or "hamerly" (bounds skip the
	// points whose center cannot have changed). Both give the same
	// assignments up to ties; see the package doc.
	Algorithm string `json:"algorithm" yaml:"algorithm"`
	// InitialCenters (not in Spark's params; Spark's initialModel) are
	// the starting centers, K rows of the features' width; set, they
	// replace InitMode.
	InitialCenters [][]float64 `json:"initialCenters,omitempty" yaml:"initialCenters"`
}

// NewKMeans returns a KMeans with Spark's defaults.
func NewKMeans() *KMeans {
	return &KMeans{
		FeaturesCol:     ml.FeaturesCol,
		PredictionCol:   ml.PredictionCol,
		K:               2,
		MaxIter:         20,
		Tol:             1e-4,
		Seed:            sparkSeed,
		InitMode:        InitKMeansParallel,
		InitSteps:       2,
		DistanceMeasure: Euclidean,
		Algorithm:       AlgorithmAuto,
	}
}

// Type is "KMeans".
func (km *KMeans) Type() string { return "KMeans" }

// Copy returns an independent copy.
func (km *KMeans) Copy() ml.Estimator {
	c := *km
	c.InitialCenters = make([][]float64, len(km.InitialCenters))
	for i, r := range km.InitialCenters {
		c.InitialCenters[i] = slices.Clone(r)
	}
	if km.InitialCenters == nil {
		c.InitialCenters = nil
	}
	return &c
}

func (km *KMeans) validate() error {
	switch {
	case km.FeaturesCol == "":
		return errors.New("KMeans: featuresCol must be set")
	case km.K < 2:
		return fmt.Errorf("KMeans: k must be ≥ 2 (Spark's bound), got %d", km.K)
	case km.MaxIter < 0:
		return fmt.Errorf("KMeans: maxIter must be ≥ 0, got %d", km.MaxIter)
	case !(km.Tol >= 0) || math.IsInf(km.Tol, 0):
		return fmt.Errorf("KMeans: tol must be finite and ≥ 0, got %g", km.Tol)
	case km.InitSteps < 1:
		return fmt.Errorf("KMeans: initSteps must be ≥ 1, got %d", km.InitSteps)
	}
	switch km.InitMode {
	case InitKMeansParallel, InitKMeansPlusPlus, InitRandom:
	default:
		return fmt.Errorf("KMeans: initMode must be k-means||, k-means++ or random, got %q", km.InitMode)
	}
	switch km.DistanceMeasure {
	case Euclidean, Cosine:
	default:
		return fmt.Errorf("KMeans: distanceMeasure must be euclidean or cosine, got %q", km.DistanceMeasure)
	}
	switch km.Algorithm {
	case AlgorithmAuto, AlgorithmLloyd, AlgorithmHamerly:
	default:
		return fmt.Errorf("KMeans: algorithm must be auto, lloyd or hamerly, got %q", km.Algorithm)
	}
	if km.InitialCenters != nil && len(km.InitialCenters) != km.K {
		return fmt.Errorf("KMeans: initialCenters has %d centers, k is %d", len(km.InitialCenters), km.K)
	}
	return nil
}

// Fit reads this rank's rows, agrees with the other ranks on the width and
// the row counts, initializes the centers (every rank the same) and runs
// Lloyd's iterations, each rank assigning its own rows and the per-center
// sums and counts all-reduced.
func (km *KMeans) Fit(d ml.Data) (ml.Model, error) {
	if err := km.validate(); err != nil {
		return nil, err
	}
	c := d.C()
	p, localErr := readPoints(d.Frame, km.FeaturesCol, km.DistanceMeasure == Cosine)
	if localErr != nil {
		localErr = fmt.Errorf("KMeans: %w", localErr)
	}
	// meta: the width (as max and −min) and a failure flag; then the rows
	// of each rank (their global offsets).
	width := 0
	if p != nil {
		width = p.d
	}
	meta := []float64{float64(width), -float64(width), 0}
	if localErr != nil {
		meta = []float64{math.Inf(-1), math.Inf(-1), 1}
	}
	if err := c.AllReduce(meta, ml.OpMax); err != nil {
		return nil, fmt.Errorf("KMeans: %w", err)
	}
	if localErr != nil {
		return nil, localErr
	}
	if meta[2] != 0 {
		return nil, fmt.Errorf("KMeans: %w", ml.ErrOtherRank)
	}
	if meta[0] != -meta[1] && p.n > 0 {
		return nil, fmt.Errorf("KMeans: column %q has %d elements on rank %d and %g on another", km.FeaturesCol, width, c.Rank(), math.Max(meta[0], -meta[1]))
	}
	p.d = int(meta[0])
	if p.n == 0 {
		p.x = nil
	}
	rows := make([]float64, c.Size())
	rows[c.Rank()] = float64(p.n)
	if err := c.AllReduce(rows, ml.OpSum); err != nil {
		return nil, fmt.Errorf("KMeans: %w", err)
	}
	g := &group{c: c, p: p}
	for r, v := range rows {
		if r < c.Rank() {
			g.offset += int(v)
		}
		g.total += int(v)
	}
	if g.total == 0 {
		return nil, errors.New("KMeans: no rows to fit on")
	}
	if p.d == 0 {
		return nil, fmt.Errorf("KMeans: column %q has vectors of 0 elements", km.FeaturesCol)
	}

	var centers []float64
	var err error
	if km.InitialCenters != nil {
		centers, err = km.givenCenters(p.d)
	} else {
		centers, err = km.initCenters(g)
		if err == nil && km.DistanceMeasure == Cosine {
			err = normalizeRows(centers, p.d)
		}
	}
	if err != nil {
		return nil, err
	}
	k := len(centers) / p.d
	run := &lloyd{g: g, k: k, d: p.d, c: centers, cosine: km.DistanceMeasure == Cosine,
		bounds: km.Algorithm != AlgorithmLloyd}
	iters, err := run.iterate(km.MaxIter, km.Tol)
	if err != nil {
		return nil, fmt.Errorf("KMeans: %w", err)
	}
	cost, sizes, err := run.final()
	if err != nil {
		return nil, fmt.Errorf("KMeans: %w", err)
	}
	if run.cosine {
		cost /= 2 // ‖x − c‖² = 2(1 − cos) between unit vectors
	}
	return &KMeansModel{
		FeaturesCol:     km.FeaturesCol,
		PredictionCol:   km.PredictionCol,
		DistanceMeasure: km.DistanceMeasure,
		K:               k,
		NumFeatures:     p.d,
		NumIter:         iters,
		TrainingCost:    cost,
		ClusterSizes:    sizes,
		Centers:         run.c,
	}, nil
}

// givenCenters checks InitialCenters against the width d and returns them
// as one k × d slice (normalized for the cosine measure).
func (km *KMeans) givenCenters(d int) ([]float64, error) {
	out := make([]float64, 0, km.K*d)
	for i, r := range km.InitialCenters {
		if len(r) != d {
			return nil, fmt.Errorf("KMeans: initialCenters[%d] has %d elements, the features %d", i, len(r), d)
		}
		for j, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("KMeans: initialCenters[%d][%d] is %g", i, j, v)
			}
		}
		if km.DistanceMeasure == Cosine {
			s := math.Sqrt(kernel.DotF64(r, r))
			if s == 0 {
				return nil, fmt.Errorf("KMeans: initialCenters[%d] is a zero vector (no cosine distance)", i)
			}
			for _, v := range r {
				out = append(out, v/s)
			}
			continue
		}
		out = append(out, r...)
	}
	return out, nil
}

// group is this rank's rows and their place among every rank's.
type group struct {
	c      ml.Comm
	p      *points
	offset int // global index of this rank's first row
	total  int // rows over every rank
}

// lloyd is the state of Lloyd's iterations on one rank: the centers (the
// same on every rank), and for Hamerly's algorithm each row's center a,
// an upper bound u on its distance to it and a lower bound l on its
// distance to any other, with the rank's per-center sums kept up to date
// as rows change centers.
type lloyd struct {
	g      *group
	k, d   int
	c      []float64 // k × d
	cosine bool
	bounds bool

	a      []int32
	u, l   []float64
	sums   []float64 // k × d, this rank's rows
	counts []float64 // k
}

// iterate runs up to maxIter iterations and returns how many ran: it
// stops after the one in which no center moved farther than tol.
func (s *lloyd) iterate(maxIter int, tol float64) (int, error) {
	n := s.g.p.n
	if s.bounds {
		s.a = make([]int32, n)
		s.u = make([]float64, n)
		s.l = make([]float64, n)
	}
	var moves []float64
	for it := 1; it <= maxIter; it++ {
		if !s.bounds || it == 1 {
			acc := s.fullPass(true)
			s.sums, s.counts = acc[:s.k*s.d], acc[s.k*s.d:s.k*s.d+s.k]
		} else {
			s.hamerlyPass(moves)
		}
		var err error
		if moves, err = s.update(); err != nil {
			return it, err
		}
		if slices.Max(moves) <= tol {
			return it, nil
		}
	}
	return maxIter, nil
}

// update all-reduces the rank's sums and counts, moves each center to the
// mean of its rows (a center with no rows stays where it is, as Spark's)
// and returns how far each moved.
func (s *lloyd) update() ([]float64, error) {
	k, d := s.k, s.d
	buf := make([]float64, k*d+k)
	copy(buf, s.sums)
	copy(buf[k*d:], s.counts)
	if err := s.g.c.AllReduce(buf, ml.OpSum); err != nil {
		return nil, err
	}
	moves := make([]float64, k)
	for j := range k {
		cnt := buf[k*d+j]
		if cnt == 0 {
			continue
		}
		sum := buf[j*d : (j+1)*d]
		scale := 1 / cnt
		if s.cosine {
			norm := math.Sqrt(kernel.DotF64(sum, sum))
			if norm == 0 {
				continue // unit rows that cancel: no direction, the center stays
			}
			scale = 1 / norm
		}
		old := s.c[j*d : (j+1)*d]
		m := 0.0
		for i, v := range sum {
			nv := v * scale
			e := nv - old[i]
			m += e * e
			old[i] = nv
		}
		moves[j] = math.Sqrt(m)
	}
	return moves, nil
}

// fullPass computes every row's distance to every center (a GEMM per
// block of rows), assigns each row its nearest center (and with bounds
// set, initializes u and l) and returns [k × d sums (when sums is set) | k
// counts | cost] over this rank's rows.
func (s *lloyd) fullPass(sums bool) []float64 {
	p, k, d := s.g.p, s.k, s.d
	cn := norms(s.c, k, d)
	size := k*d + k + 1
	return parallel.MapReduce(p.n, block, make([]float64, size), func(lo, hi int) []float64 {
		acc := make([]float64, size)
		dist := make([]float64, block*k)
		for b := lo; b < hi; b += block {
			e := min(b+block, hi)
			sqDist(p.x[b*d:e*d], p.norm2[b:e], e-b, d, s.c, cn, k, dist)
			for i := b; i < e; i++ {
				j, best, second := argmin2(dist[(i-b)*k : (i-b+1)*k])
				if s.bounds && sums {
					s.a[i] = int32(j)
					s.u[i] = math.Sqrt(best)
					s.l[i] = math.Sqrt(second)
				}
				acc[k*d+j]++
				acc[k*d+k] += best
				if sums {
					kernel.AxpyF64(1, p.row(i), acc[j*d:(j+1)*d])
				}
			}
		}
		return acc
	}, addInto)
}

// addInto adds part to acc and returns acc: how the passes combine the
// partial sums of their chunks of rows.
func addInto(acc, part []float64) []float64 {
	for i, v := range part {
		acc[i] += v
	}
	return acc
}

// hamerlyPass is one assignment step of Hamerly's algorithm after the
// centers moved by moves: the bounds are loosened by the moves, and only
// the rows whose bounds no longer prove their center nearest get their
// distances computed (gathered into blocks, one GEMM per block); the
// rank's sums and counts are updated for the rows that changed center.
func (s *lloyd) hamerlyPass(moves []float64) {
	p, k, d := s.g.p, s.k, s.d
	cn := norms(s.c, k, d)
	// half the distance from each center to its nearest other center
	cc := make([]float64, k*k)
	sqDist(s.c, cn, k, d, s.c, cn, k, cc)
	half := make([]float64, k)
	for j := range k {
		m := math.Inf(1)
		for o := range k {
			if o != j {
				m = min(m, cc[j*k+o])
			}
		}
		half[j] = math.Sqrt(m) / 2
	}
	// the largest and second largest moves, for l −= max_{j≠a} move_j
	top, m1, m2 := 0, -1.0, -1.0
	for j, v := range moves {
		if v > m1 {
			m2 = m1
			top, m1 = j, v
		} else if v > m2 {
			m2 = v
		}
	}
	m2 = max(m2, 0)
	size := k*d + k
	delta := parallel.MapReduce(p.n, block, make([]float64, size), func(lo, hi int) []float64 {
		var acc []float64
		idx := make([]int, 0, block)
		rows := make([]float64, 0, block*d)
		rn := make([]float64, 0, block)
		dist := make([]float64, block*k)
		for b := lo; b < hi; b += block {
			e := min(b+block, hi)
			idx = idx[:0]
			for i := b; i < e; i++ {
				a := int(s.a[i])
				s.u[i] += moves[a]
				if a == top {
					s.l[i] -= m2
				} else {
					s.l[i] -= m1
				}
				if s.u[i] > max(half[a], s.l[i]) {
					idx = append(idx, i)
				}
			}
			if len(idx) == 0 {
				continue
			}
			// The rows whose bounds fail get all k distances from one
			// GEMM: over the block in place when most fail, else over
			// the failing rows gathered. (Hamerly first tightens u with
			// one distance; reading the row from memory is the cost of
			// either, so the rows go straight to the GEMM.)
			at := func(r, i int) []float64 { return dist[(i-b)*k : (i-b+1)*k] }
			if 2*len(idx) > e-b {
				sqDist(p.x[b*d:e*d], p.norm2[b:e], e-b, d, s.c, cn, k, dist)
			} else {
				rows, rn = rows[:0], rn[:0]
				for _, i := range idx {
					rows = append(rows, p.row(i)...)
					rn = append(rn, p.norm2[i])
				}
				sqDist(rows, rn, len(idx), d, s.c, cn, k, dist)
				at = func(r, i int) []float64 { return dist[r*k : (r+1)*k] }
			}
			for r, i := range idx {
				j, best, second := argmin2(at(r, i))
				s.u[i], s.l[i] = math.Sqrt(best), math.Sqrt(second)
				if old := int(s.a[i]); old != j {
					if acc == nil {
						acc = make([]float64, size)
					}
					x := p.row(i)
					kernel.AxpyF64(-1, x, acc[old*d:(old+1)*d])
					kernel.AxpyF64(1, x, acc[j*d:(j+1)*d])
					acc[k*d+old]--
					acc[k*d+j]++
					s.a[i] = int32(j)
				}
			}
		}
		if acc == nil {
			acc = make([]float64, size)
		}
		return acc
	}, addInto)
	for i := range s.sums {
		s.sums[i] += delta[i]
	}
	for j := range s.counts {
		s.counts[j] += delta[k*d+j]
	}
}

// final assigns every row to the nearest final center and returns the
// cost (the sum of squared distances) and the cluster sizes over every
// rank.
func (s *lloyd) final() (float64, []int64, error) {
	k := s.k
	acc := s.fullPass(false)
	buf := slices.Clone(acc[s.k*s.d:])
	if err := s.g.c.AllReduce(buf, ml.OpSum); err != nil {
		return 0, nil, err
	}
	sizes := make([]int64, k)
	for j := range k {
		sizes[j] = int64(buf[j])
	}
	return buf[k], sizes, nil
}

// normalizeRows scales each row of c (rows of d) to unit length.
func normalizeRows(c []float64, d int) error {
	for j := 0; j < len(c)/d; j++ {
		r := c[j*d : (j+1)*d]
		s := math.Sqrt(kernel.DotF64(r, r))
		if s == 0 {
			return fmt.Errorf("KMeans: initial center %d is a zero vector (no cosine distance)", j)
		}
		for i := range r {
			r[i] /= s
		}
	}
	return nil
}
