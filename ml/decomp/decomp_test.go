package decomp

import (
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mltest"
)

// Peer values: testdata/peer_numpy.py (numpy 1.x LAPACK SVD and
// scikit-learn 1.2 PCA(svd_solver='full') on testdata/small.csv), vectors
// with fathom's sign rule.
var (
	numpyS  = []float64{60.338842680207335, 31.03998302351921, 26.525078634630493, 17.32302136542249, 12.18450217168975, 6.293970365699342}
	numpyV  = []float64{0.00904827340986029, -0.05187289775382283, 0.033977323115636095, 0.13528680448022054, 0.07807025615660396, 0.037993724388830356, 0.20083957886143355, 0.08044728408876252, 0.13196934027161206, 0.19671281105134097, 0.9656945164989343, -0.03832209243154295, 0.39434016633988567, -0.07667193514880508, 0.8889914315272505, 0.8643373045425634, -0.21516967079361554, -0.43383379715282133}
	skRatio = []float64{0.4378571702851718, 0.23898303917404531, 0.19415166070272186}
	skPC    = []float64{0.043303235082502896, -0.02322064095399294, 0.03560528033402776, 0.016434807821976052, 0.04640242359529113, 0.05285593078997442, 0.1094128801477387, 0.11533416797976977, 0.12117334446172134, -0.1864884658747269, 0.9317754320114451, -0.303554736226857, 0.4889283617050477, 0.3402433914854296, 0.7761889019898609, 0.8438333116185504, -0.005884340656350571, -0.5353884998079795}
)

func readSmall(t *testing.T) (*data.Frame, []float64) {
	t.Helper()
	b, err := os.ReadFile("testdata/small.csv")
	if err != nil {
		t.Fatal(err)
	}
	var x []float64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		for _, s := range strings.Split(line, ",") {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(err)
			}
			x = append(x, v)
		}
	}
	return frameOf(6, x), x
}

func frameOf(d int, x []float64) *data.Frame {
	f, err := data.NewFrame(data.NewVectorColumn(ml.FeaturesCol, d, x, nil, nil))
	if err != nil {
		panic(err)
	}
	return f
}

func near(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol*max(math.Abs(want[i]), 1e-300) && math.Abs(got[i]-want[i]) > tol {
			t.Fatalf("%s[%d] = %.17g, want %.17g (tolerance %g)", what, i, got[i], want[i], tol)
		}
	}
}

func TestSVDAgainstNumpy(t *testing.T) {
	f, _ := readSmall(t)
	for _, solver := range []string{SolverGramian, SolverRandomized} {
		s, err := ComputeSVD(ml.Local(f), ml.FeaturesCol, 6, SVDOptions{Solver: solver, ComputeU: true})
		if err != nil {
			t.Fatal(err)
		}
		// singular values within 1e-8 relative of LAPACK's
		for i, v := range s.S {
			if math.Abs(v-numpyS[i]) > 1e-8*numpyS[i] {
				t.Fatalf("%s: σ%d = %.17g, numpy %.17g", solver, i+1, v, numpyS[i])
			}
		}
		v3 := make([]float64, 6*3)
		for i := range 6 {
			copy(v3[i*3:], s.V[i*6:i*6+3])
		}
		near(t, solver+" V", v3, numpyV, 1e-8)
		// U has orthonormal columns: UᵀU = I
		for a := range 6 {
			for b := range 6 {
				dot := 0.0
				for i := range 40 {
					dot += s.U[i*6+a] * s.U[i*6+b]
				}
				want := 0.0
				if a == b {
					want = 1
				}
				if math.Abs(dot-want) > 1e-9 {
					t.Fatalf("%s: (UᵀU)[%d][%d] = %g", solver, a, b, dot)
				}
			}
		}
	}
}

func TestPCAAgainstSklearn(t *testing.T) {
	f, x := readSmall(t)
	for _, solver := range []string{SolverGramian, SolverRandomized} {
		p := NewPCA()
		p.K, p.Solver = 3, solver
		m, err := p.Fit(ml.Local(f))
		if err != nil {
			t.Fatal(err)
		}
		pm := m.(*PCAModel)
		near(t, solver+" explained variance", pm.ExplainedVariance, skRatio, 1e-10)
		near(t, solver+" pc", pm.PC, skPC, 1e-8)
		// Spark's transform: x·pc, no centering
		out, err := pm.Transform(f)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := ml.Features(out, "pcaFeatures")
		for c := range 3 {
			want := 0.0
			for j := range 6 {
				want += x[6+j] * pm.PC[j*3+c]
			}
			if math.Abs(got.Row(1)[c]-want) > 1e-12*max(1, math.Abs(want)) {
				t.Fatalf("row 2, component %d: %g, want x·pc = %g", c, got.Row(1)[c], want)
			}
		}
	}
}

// wide returns rows × d values with a decaying spectrum (column j scaled
// by 0.97^j, then mixed by a random rotation-like matrix) and column
// offsets, deterministic.
func wide(rows, d int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 2))
	z := make([]float64, rows*d)
	for i := range z {
		z[i] = rng.NormFloat64() * math.Pow(0.97, float64(i%d))
	}
	mix := make([]float64, d*d)
	for i := range mix {
		mix[i] = rng.NormFloat64() / math.Sqrt(float64(d))
	}
	x := make([]float64, rows*d)
	for i := range rows {
		for j := range d {
			s := 3.0 + float64(j%5)
			for l := range d {
				s += z[i*d+l] * mix[l*d+j]
			}
			x[i*d+j] = s
		}
	}
	return x
}

// The subspace iteration on a formed Gramian (d > 256, k ≤ d/4) gives the
// eigenpairs of the full symmetric eigensolver.
func TestSubspaceEqualsFullEigen(t *testing.T) {
	const n, d, k = 700, 300, 20
	x := wide(n, d, 3)
	g := gramOf(x, n, d)
	full, err := symEigen(g, d, k)
	if err != nil {
		t.Fatal(err)
	}
	fixSigns(full.vectors, d, k)
	sub, err := topEigen(&rows{c: ml.Single, x: x, n: n, d: d, total: n}, k, SolverGramian)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "eigenvalues", sub.values, full.values, 1e-11)
	near(t, "eigenvectors", sub.vectors, full.vectors, 1e-10)
}

func gramOf(x []float64, n, d int) []float64 {
	g := make([]float64, d*d)
	for i := range n {
		r := x[i*d : (i+1)*d]
		for a := range d {
			for b := range d {
				g[a*d+b] += r[a] * r[b]
			}
		}
	}
	return g
}

func TestPCAConformance(t *testing.T) {
	small := wide(120, 9, 1)
	for i := range 120 {
		small[i*9+4] = 2.5 // a constant column
	}
	fs := frameOf(9, small)
	fw := frameOf(280, wide(400, 280, 2))
	for _, tc := range []struct {
		name   string
		f      *data.Frame
		k      int
		solver string
	}{
		{"gramian small", fs, 4, SolverGramian},
		{"randomized small", fs, 3, SolverRandomized},
		{"gramian subspace", fw, 8, SolverGramian},
		{"randomized wide", fw, 8, SolverRandomized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mltest.Check(t, func() ml.Estimator {
				p := NewPCA()
				p.K, p.Solver = tc.k, tc.solver
				return p
			}, tc.f, mltest.Options{})
			pm := m.(*PCAModel)
			s := 0.0
			for _, v := range pm.ExplainedVariance {
				s += v
			}
			if !(s > 0 && s <= 1+1e-12) {
				t.Fatalf("explained variance %v sums to %g", pm.ExplainedVariance, s)
			}
			if tc.f == fs {
				// the constant column has no loading
				for c := range tc.k {
					if v := pm.PC[4*tc.k+c]; math.Abs(v) > 1e-9 {
						t.Fatalf("component %d loads %g on the constant column", c, v)
					}
				}
			}
		})
	}
}

// A rank with no rows: the fit equals the single-process one.
func TestPCAEmptyPartition(t *testing.T) {
	f := frameOf(9, wide(90, 9, 4))
	split := func(f *data.Frame, r, n int) *data.Frame {
		if r == 0 {
			return f.Slice(0, 0)
		}
		return f.Slice(f.Len()*(r-1)/(n-1), f.Len()*r/(n-1))
	}
	mltest.Check(t, func() ml.Estimator { p := NewPCA(); p.K = 3; return p }, f, mltest.Options{Split: split, Ranks: []int{2, 3}})
}

// ComputeSVD over 3 ranks: the same S and V as in one process, and each
// rank's rows of U.
func TestSVDDistributed(t *testing.T) {
	const n, d, k = 150, 7, 4
	x := wide(n, d, 5)
	f := frameOf(d, x)
	one, err := ComputeSVD(ml.Local(f), ml.FeaturesCol, k, SVDOptions{ComputeU: true})
	if err != nil {
		t.Fatal(err)
	}
	const ranks = 3
	gs := commtest.Groups(t, ranks, comm.TransportTCP, nil)
	res := make([]*SVD, ranks)
	errs := make([]error, ranks)
	var wg sync.WaitGroup
	for r, g := range gs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[r], errs[r] = ComputeSVD(ml.Partitioned(mltest.SplitRows(f, r, ranks), ml.Group(g)), ml.FeaturesCol, k, SVDOptions{ComputeU: true})
		}()
	}
	wg.Wait()
	var u []float64
	for r := range ranks {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		near(t, "S", res[r].S, one.S, 1e-9)
		near(t, "V", res[r].V, one.V, 1e-9)
		u = append(u, res[r].U...)
	}
	near(t, "U", u, one.U, 1e-9)
}

func TestBadInput(t *testing.T) {
	f := frameOf(3, wide(10, 3, 6))
	constant := frameOf(2, []float64{1, 2, 1, 2, 1, 2})
	for _, tc := range []struct {
		name string
		f    *data.Frame
		set  func(*PCA)
		want string
	}{
		{"k 0", f, func(p *PCA) { p.K = 0 }, "k must be ≥ 1"},
		{"k > d", f, func(p *PCA) { p.K = 4 }, "k = 4 components from 3 features"},
		{"solver", f, func(p *PCA) { p.Solver = "arpack" }, "solver must be"},
		{"one row", f.Slice(0, 1), func(p *PCA) { p.K = 1 }, "1 rows; the covariance needs at least 2"},
		{"all constant", constant, func(p *PCA) { p.K = 1 }, "every column of \"features\" is constant"},
		{"no column", f, func(p *PCA) { p.InputCol = "x" }, `no column "x"`},
	} {
		p := NewPCA()
		tc.set(p)
		_, err := p.Fit(ml.Local(tc.f))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := ComputeSVD(ml.Local(f), ml.FeaturesCol, 4, SVDOptions{}); err == nil || !strings.Contains(err.Error(), "k = 4; it must be in [1, 3]") {
		t.Errorf("SVD k 4 of 3 columns: %v", err)
	}
	// a rank-deficient matrix: singular values below rCond·σ₁ are dropped
	s, err := ComputeSVD(ml.Local(constant), ml.FeaturesCol, 2, SVDOptions{})
	if err != nil || len(s.S) != 1 || math.Abs(s.S[0]-math.Sqrt(15)) > 1e-12 {
		t.Errorf("SVD of a rank-1 matrix: %v, %v; want one singular value √15", s, err)
	}
}

// A rank whose rows are invalid fails naming the row; the others fail
// with ml.ErrOtherRank instead of waiting.
func TestPCABadRowOnOneRank(t *testing.T) {
	good := frameOf(3, wide(20, 3, 8))
	bad := frameOf(3, []float64{1, 2, 3, 4, math.NaN(), 6})
	mltest.FailOnOneRank(t, func() ml.Estimator { return NewPCA() }, 3, 2, func(r int) *data.Frame {
		if r == 2 {
			return bad
		}
		return good
	}, "row 2, element 2: NaN is not a finite number", "another rank's data is invalid")
}
