package recommend

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/fathom-ml/fathom/internal/parallel"
	"github.com/fathom-ml/fathom/ml"
)

// ALS factors a sparse matrix of ratings r_ui ≈ x_u·y_i into user factors
// X and item factors Y of Rank columns by alternating least squares, as
// Spark ML's ALS (see the package documentation for the objective, the
// blocking and the distribution).
type ALS struct {
	// Rank is the number of latent factors [10].
	Rank int `json:"rank" yaml:"rank"`
	// MaxIter is the number of iterations, each solving every user then
	// every item (ALS-WR's order; MLlib solves the items first) [10].
	MaxIter int `json:"maxIter" yaml:"maxIter"`
	// RegParam is λ, scaled by each user's (item's) number of ratings —
	// of positive ratings with ImplicitPrefs — as ALS-WR and MLlib [0.1].
	RegParam float64 `json:"regParam" yaml:"regParam"`
	// ImplicitPrefs fits implicit feedback: preference 1 for r > 0,
	// confidence 1 + Alpha·|r| (Hu, Koren, Volinsky) [false].
	ImplicitPrefs bool `json:"implicitPrefs" yaml:"implicitPrefs"`
	// Alpha scales the confidence of implicit feedback [1].
	Alpha float64 `json:"alpha" yaml:"alpha"`
	// Nonnegative constrains every factor to be ≥ 0 (each solve is a
	// nonnegative least-squares problem) [false].
	Nonnegative bool `json:"nonnegative" yaml:"nonnegative"`
	// ColdStartStrategy is what the model predicts for a user or item it
	// has not seen: "nan" (a NaN prediction) or "drop" (the row is
	// dropped) [nan].
	ColdStartStrategy string `json:"coldStartStrategy" yaml:"coldStartStrategy"`
	// Seed makes the initial factors: each one is drawn from (seed, id)
	// alone, so the fit does not depend on how the ratings are
	// partitioned [0].
	Seed int64 `json:"seed" yaml:"seed"`
	// NumUserBlocks and NumItemBlocks cut each side's entities into
	// contiguous blocks (in id order); block b belongs to rank b mod the
	// number of ranks, which solves it and sends its factors [10, 10].
	NumUserBlocks int `json:"numUserBlocks" yaml:"numUserBlocks"`
	NumItemBlocks int `json:"numItemBlocks" yaml:"numItemBlocks"`
	// UserCol, ItemCol, RatingCol name the input columns (integer ids and
	// a numeric rating); PredictionCol the output [user, item, rating,
	// prediction].
	UserCol       string `json:"userCol" yaml:"userCol"`
	ItemCol       string `json:"itemCol" yaml:"itemCol"`
	RatingCol     string `json:"ratingCol" yaml:"ratingCol"`
	PredictionCol string `json:"predictionCol" yaml:"predictionCol"`
	// BlockSize is the number of users (items) scored together by the
	// recommendForAll methods [4096].
	BlockSize int `json:"blockSize" yaml:"blockSize"`
	// CheckpointInterval is accepted for Spark configs and ignored
	// (there is no lineage to cut).
	CheckpointInterval int `json:"checkpointInterval" yaml:"checkpointInterval"`
}

// NewALS returns an ALS with Spark's defaults.
func NewALS() *ALS {
	return &ALS{Rank: 10, MaxIter: 10, RegParam: 0.1, Alpha: 1, ColdStartStrategy: "nan",
		NumUserBlocks: 10, NumItemBlocks: 10, UserCol: "user", ItemCol: "item", RatingCol: "rating",
		PredictionCol: ml.PredictionCol, BlockSize: 4096, CheckpointInterval: 10}
}

// Type returns "ALS".
func (e *ALS) Type() string { return "ALS" }

// Copy returns a copy of the estimator.
func (e *ALS) Copy() ml.Estimator { c := *e; return &c }

func init() {
	ml.RegisterStage("ALS", func() ml.Stage { return NewALS() })
	ml.RegisterModel("ALSModel", decodeModel)
}

func (e *ALS) check() error {
	switch {
	case e.Rank < 1 || e.Rank > 1024:
		return fmt.Errorf("ALS: rank must be in [1, 1024], got %d", e.Rank)
	case e.MaxIter < 0:
		return fmt.Errorf("ALS: maxIter must be ≥ 0, got %d", e.MaxIter)
	case !(e.RegParam >= 0) || math.IsInf(e.RegParam, 0):
		return fmt.Errorf("ALS: regParam must be ≥ 0, got %g", e.RegParam)
	case !(e.Alpha >= 0) || math.IsInf(e.Alpha, 0):
		return fmt.Errorf("ALS: alpha must be ≥ 0, got %g", e.Alpha)
	case e.ColdStartStrategy != "nan" && e.ColdStartStrategy != "drop":
		return fmt.Errorf("ALS: coldStartStrategy must be nan or drop, got %q", e.ColdStartStrategy)
	case e.NumUserBlocks < 1 || e.NumItemBlocks < 1:
		return fmt.Errorf("ALS: numUserBlocks and numItemBlocks must be ≥ 1, got %d and %d", e.NumUserBlocks, e.NumItemBlocks)
	case e.BlockSize < 1:
		return fmt.Errorf("ALS: blockSize must be ≥ 1, got %d", e.BlockSize)
	case e.UserCol == "" || e.ItemCol == "" || e.RatingCol == "" || e.PredictionCol == "":
		return fmt.Errorf("ALS: userCol, itemCol, ratingCol and predictionCol must be named")
	}
	return nil
}

// Fit fits the model on the frame's user, item and rating columns.
func (e *ALS) Fit(d ml.Data) (ml.Model, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	c := d.C()
	r, err := FrameRatings(d.Frame, e.UserCol, e.ItemCol, e.RatingCol, "")
	if err != nil {
		return nil, fmt.Errorf("ALS: rank %d: %w", c.Rank(), err)
	}
	return e.FitRatings(r, c)
}

// FitStats are a fit's timings and traffic (this rank's; not saved with
// the model).
type FitStats struct {
	// PrepSeconds is the time to index the ratings (ids to dense indices,
	// the compressed rows of both sides; with several ranks, the shuffle
	// of the ratings to the ranks that own them).
	PrepSeconds float64
	// IterSeconds is each iteration's time.
	IterSeconds []float64
	// FactorBytes is the size of all factors, (users + items)·rank·8.
	FactorBytes int64
	// SentBytesPerIter and ReceivedBytesPerIter are the factor bytes this
	// rank contributed to, and took from, the all-gathers of one iteration
	// (0 on one process).
	SentBytesPerIter, ReceivedBytesPerIter int64
	// ShuffleBytes is what this rank received while the ratings were
	// distributed to their owners (0 on one process).
	ShuffleBytes int64
}

// FitRatings fits on this rank's ratings r; c joins the ranks (ml.Single
// for one process). Every rank gets the same model, equal to the
// single-process one (see the package documentation).
func (e *ALS) FitRatings(r *Ratings, c ml.Comm) (*ALSModel, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	if c == nil {
		c = ml.Single
	}
	rank := c.Rank()
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("ALS: rank %d: %w", rank, err)
	}
	t0 := time.Now()
	k := e.Rank
	// The big arrays (rating rows, factors) live in an arena freed on
	// return; the model gets copies of the factors.
	ar := &arena{}
	defer ar.free()
	sh, err := shareRatings(r, c, e.NumUserBlocks, e.NumItemBlocks, ar)
	if err != nil {
		return nil, fmt.Errorf("ALS: rank %d: %w", rank, err)
	}
	nu, ni := len(sh.users.ids), len(sh.items.ids)
	if nu == 0 {
		return nil, fmt.Errorf("ALS: no ratings (on any of the %d ranks)", c.Size())
	}
	st := FitStats{PrepSeconds: time.Since(t0).Seconds(), FactorBytes: int64(nu+ni) * int64(k) * 8,
		ShuffleBytes: sh.shuffleBytes}
	// Factors are kept with row stride ld ≥ k (zero padded for the
	// assembly kernels).
	ld := stride(k)
	uf := arenaMake[float64](ar, nu*ld)
	vf := arenaMake[float64](ar, ni*ld)
	parallel.For(nu, 4096, func(lo, hi int) {
		for u := lo; u < hi; u++ {
			initFactor(uf[u*ld:u*ld+k], e.Seed, sideUser, sh.users.ids[u], e.Nonnegative)
		}
	})
	parallel.For(ni, 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			initFactor(vf[i*ld:i*ld+k], e.Seed, sideItem, sh.items.ids[i], e.Nonnegative)
		}
	})
	for range e.MaxIter {
		t := time.Now()
		if err := e.halfStep(sh.byUser, sh.ownUsers, uf, vf, ld, "user", sh.users.ids); err != nil {
			return nil, fmt.Errorf("ALS: rank %d: %w", rank, err)
		}
		s1, r1, err := exchange(c, sh.userLists, uf, ld, k)
		if err != nil {
			return nil, fmt.Errorf("ALS: rank %d: user factors: %w", rank, err)
		}
		if err := e.halfStep(sh.byItem, sh.ownItems, vf, uf, ld, "item", sh.items.ids); err != nil {
			return nil, fmt.Errorf("ALS: rank %d: %w", rank, err)
		}
		s2, r2, err := exchange(c, sh.itemLists, vf, ld, k)
		if err != nil {
			return nil, fmt.Errorf("ALS: rank %d: item factors: %w", rank, err)
		}
		st.SentBytesPerIter, st.ReceivedBytesPerIter = s1+s2, r1+r2
		st.IterSeconds = append(st.IterSeconds, time.Since(t).Seconds())
	}
	return &ALSModel{Rank: k, UserCol: e.UserCol, ItemCol: e.ItemCol, PredictionCol: e.PredictionCol,
		ColdStartStrategy: e.ColdStartStrategy, BlockSize: e.BlockSize,
		UserIDs: sh.users.ids, UserFactors: unpad(uf, ld, k), ItemIDs: sh.items.ids, ItemFactors: unpad(vf, ld, k),
		Stats: st, users: sh.users, items: sh.items}, nil
}

const (
	sideUser = 1
	sideItem = 2
)

// halfStep solves the owned entities of one side (dst) given the other
// side's factors src: for entity e with ratings R_e,
//
//	explicit:  (Σ y yᵀ + λ·n_e·I) x = Σ r·y
//	implicit:  (YᵀY + Σ α|r|·y yᵀ + λ·n⁺_e·I) x = Σ_{r>0} (1 + α|r|)·y
//
// (sums over R_e, y the rated entity's factor; n_e = |R_e|, n⁺_e the
// number of positive ratings), by Cholesky, or by NNLS when Nonnegative.
func (e *ALS) halfStep(m *csr, own []int32, dst, src []float64, ld int, side string, ids []int32) error {
	k := e.Rank
	var yty []float64
	if e.ImplicitPrefs {
		yty = gramAll(src, len(src)/ld, ld, k)
	}
	var (
		mu    sync.Mutex
		first error
	)
	parallel.For(len(own), 64, func(lo, hi int) {
		a := make([]float64, k*k)
		b := make([]float64, k)
		var g gram
		var work nnlsWork
		for _, x := range own[lo:hi] {
			p0, p1 := m.ptr[x], m.ptr[x+1]
			idx, val := m.idx[p0:p1], m.val[p0:p1]
			var n int
			if e.ImplicitPrefs {
				n = g.implicit(a, b, src, ld, k, e.Alpha, idx, val)
				for q, v := range yty {
					a[q] += v
				}
			} else {
				g.explicit(a, b, src, ld, k, idx, val)
				n = len(idx)
			}
			reg := e.RegParam * float64(n)
			for j := range k {
				a[j*k+j] += reg
			}
			var err error
			if e.Nonnegative {
				err = nnls(a, b, k, &work)
			} else {
				err = cholSolve(a, b, k)
			}
			if err != nil {
				mu.Lock()
				if first == nil {
					first = sideError(side, ids[x], err)
				}
				mu.Unlock()
				return
			}
			copy(dst[int(x)*ld:int(x)*ld+k], b)
		}
	})
	return first
}

// unpad returns a copy of the factors f (row stride ld) with stride k.
func unpad(f []float64, ld, k int) []float64 {
	n := len(f) / ld
	out := make([]float64, n*k)
	for x := range n {
		copy(out[x*k:x*k+k], f[x*ld:x*ld+k])
	}
	return out
}
