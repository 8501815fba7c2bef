package cluster

import (
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
	"github.com/fathom-ml/fathom/internal/kernel"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mltest"
)

// blobs returns n rows of d features around c well separated centers,
// deterministic, as a frame with a float64 features column.
func blobs(n, d, c int, seed uint64) *data.Frame {
	rng := rand.New(rand.NewPCG(seed, 1))
	centers := make([]float64, c*d)
	for i := range centers {
		centers[i] = rng.NormFloat64() * 5
	}
	x := make([]float64, n*d)
	for i := range n {
		j := rng.IntN(c)
		for e := range d {
			x[i*d+e] = centers[j*d+e] + rng.NormFloat64()
		}
	}
	f, err := data.NewFrame(data.NewVectorColumn(ml.FeaturesCol, d, x, nil, nil))
	if err != nil {
		panic(err)
	}
	return f
}

func frameOf(d int, x []float64) *data.Frame {
	f, err := data.NewFrame(data.NewVectorColumn(ml.FeaturesCol, d, x, nil, nil))
	if err != nil {
		panic(err)
	}
	return f
}

func TestConformance(t *testing.T) {
	f := blobs(400, 6, 5, 7)
	for _, tc := range []struct {
		name string
		set  func(*KMeans)
	}{
		{"k-means|| hamerly", func(k *KMeans) {}},
		{"k-means|| lloyd", func(k *KMeans) { k.Algorithm = AlgorithmLloyd }},
		{"k-means++", func(k *KMeans) { k.InitMode = InitKMeansPlusPlus; k.K = 7 }},
		{"random", func(k *KMeans) { k.InitMode = InitRandom; k.K = 4 }},
		{"cosine", func(k *KMeans) { k.DistanceMeasure = Cosine }},
		{"initial centers", func(k *KMeans) {
			k.K = 3
			k.InitialCenters = [][]float64{{1, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 1}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mltest.Check(t, func() ml.Estimator {
				k := NewKMeans()
				k.K, k.MaxIter, k.Tol = 5, 50, 0
				tc.set(k)
				return k
			}, f, mltest.Options{})
			km := m.(*KMeansModel)
			total := int64(0)
			for _, s := range km.ClusterSizes {
				total += s
			}
			if total != 400 || km.K != len(km.ClusterSizes) {
				t.Fatalf("cluster sizes %v for 400 rows, k %d", km.ClusterSizes, km.K)
			}
		})
	}
}

// An empty partition: rank 0 has no rows; the fit equals the
// single-process one.
func TestEmptyPartition(t *testing.T) {
	f := blobs(200, 3, 4, 3)
	split := func(f *data.Frame, r, n int) *data.Frame {
		if r == 0 {
			return f.Slice(0, 0)
		}
		return f.Slice(f.Len()*(r-1)/(n-1), f.Len()*r/(n-1))
	}
	for _, mode := range []string{InitKMeansParallel, InitKMeansPlusPlus, InitRandom} {
		mltest.Check(t, func() ml.Estimator {
			k := NewKMeans()
			k.K, k.InitMode = 4, mode
			return k
		}, f, mltest.Options{Split: split, Ranks: []int{2, 3}})
	}
}

// The model's cost is the sum of squared distances to the nearest final
// center, and Transform's predictions are those nearest centers.
func TestCostAndPredictions(t *testing.T) {
	f := blobs(300, 4, 3, 11)
	k := NewKMeans()
	k.K = 3
	m, err := k.Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	km := m.(*KMeansModel)
	out, err := km.Transform(f)
	if err != nil {
		t.Fatal(err)
	}
	pred, _ := ml.Numbers(out, ml.PredictionCol)
	x, _ := ml.Features(f, ml.FeaturesCol)
	cost := 0.0
	sizes := make([]int64, km.K)
	for i := range x.Rows {
		best, arg := math.Inf(1), -1
		for j := range km.K {
			s := 0.0
			for e, v := range x.Row(i) {
				d := v - km.Center(j)[e]
				s += d * d
			}
			if s < best {
				best, arg = s, j
			}
		}
		if int(pred[i]) != arg {
			t.Fatalf("row %d: prediction %v, nearest center %d", i, pred[i], arg)
		}
		cost += best
		sizes[arg]++
	}
	if math.Abs(cost-km.TrainingCost) > 1e-9*cost {
		t.Fatalf("trainingCost %.17g, direct sum %.17g", km.TrainingCost, cost)
	}
	for j := range sizes {
		if sizes[j] != km.ClusterSizes[j] {
			t.Fatalf("cluster sizes %v, counted %v", km.ClusterSizes, sizes)
		}
	}
}

// Hamerly's bounds skip work but not results: from the same start the
// two algorithms end at the same centers after the same iterations.
func TestHamerlyEqualsLloyd(t *testing.T) {
	f := blobs(2000, 10, 8, 5)
	fit := func(alg string) *KMeansModel {
		k := NewKMeans()
		k.K, k.MaxIter, k.Tol, k.Algorithm, k.InitMode = 12, 100, 0, alg, InitRandom
		m, err := k.Fit(ml.Local(f))
		if err != nil {
			t.Fatal(err)
		}
		return m.(*KMeansModel)
	}
	a, b := fit(AlgorithmLloyd), fit(AlgorithmHamerly)
	if a.NumIter != b.NumIter {
		t.Fatalf("lloyd %d iterations, hamerly %d", a.NumIter, b.NumIter)
	}
	if d := mltest.DiffModels(a, b, 1e-9); d != "" {
		t.Fatalf("lloyd and hamerly differ: %s", d)
	}
	if a.NumIter < 3 {
		t.Fatalf("only %d iterations: the test does not exercise the bounds", a.NumIter)
	}
}

// Fewer distinct points than k: the model has as many centers as there
// are distinct points (Spark's behaviour), at cost 0, for every
// initialization.
func TestFewerDistinctPointsThanK(t *testing.T) {
	var x []float64
	for i := range 60 {
		x = append(x, float64(i%3), float64(i%3)*2)
	}
	f := frameOf(2, x)
	for _, mode := range []string{InitKMeansParallel, InitKMeansPlusPlus, InitRandom} {
		k := NewKMeans()
		k.K, k.InitMode = 5, mode
		m, err := k.Fit(ml.Local(f))
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		km := m.(*KMeansModel)
		if km.K != 3 || km.TrainingCost != 0 {
			t.Fatalf("%s: %d centers, cost %g; want 3 centers, cost 0", mode, km.K, km.TrainingCost)
		}
		for _, s := range km.ClusterSizes {
			if s != 20 {
				t.Fatalf("%s: cluster sizes %v, want 20 each", mode, km.ClusterSizes)
			}
		}
		mltest.Check(t, func() ml.Estimator { k := NewKMeans(); k.K, k.InitMode = 5, mode; return k }, f, mltest.Options{})
	}
}

func TestBadInput(t *testing.T) {
	f := blobs(20, 3, 2, 1)
	zero := frameOf(2, []float64{1, 2, 0, 0, 3, 4})
	nan := frameOf(2, []float64{1, 2, math.NaN(), 0})
	for _, tc := range []struct {
		name  string
		frame *data.Frame
		set   func(*KMeans)
		want  string
	}{
		{"k 1", f, func(k *KMeans) { k.K = 1 }, "k must be ≥ 2"},
		{"init mode", f, func(k *KMeans) { k.InitMode = "kmeans" }, "initMode must be"},
		{"distance", f, func(k *KMeans) { k.DistanceMeasure = "manhattan" }, "distanceMeasure must be"},
		{"algorithm", f, func(k *KMeans) { k.Algorithm = "elkan" }, "algorithm must be"},
		{"tol", f, func(k *KMeans) { k.Tol = -1 }, "tol must be"},
		{"centers count", f, func(k *KMeans) { k.InitialCenters = [][]float64{{1, 2, 3}} }, "initialCenters has 1 centers, k is 2"},
		{"centers width", f, func(k *KMeans) { k.InitialCenters = [][]float64{{1, 2, 3}, {1, 2}} }, "initialCenters[1] has 2 elements, the features 3"},
		{"no column", f, func(k *KMeans) { k.FeaturesCol = "x" }, `no column "x"`},
		{"zero row cosine", zero, func(k *KMeans) { k.DistanceMeasure = Cosine }, "row 2: the cosine distance is not defined for a zero vector"},
		{"NaN", nan, func(k *KMeans) {}, "row 2, element 1: NaN is not a finite number"},
		{"no rows", f.Slice(0, 0), func(k *KMeans) {}, "no rows to fit on"},
	} {
		k := NewKMeans()
		tc.set(k)
		_, err := k.Fit(ml.Local(tc.frame))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// evalOnRanks evaluates the silhouette of f split over n ranks.
func evalOnRanks(t *testing.T, f *data.Frame, n int) []float64 {
	t.Helper()
	gs := commtest.Groups(t, n, comm.TransportTCP, nil)
	out := make([]float64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, g := range gs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[r], errs[r] = NewClusteringEvaluator().Evaluate(mltest.SplitRows(f, r, n), ml.Group(g))
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	return out
}

// A rank whose rows are invalid fails with an error naming the row; the
// other ranks fail with ml.ErrOtherRank instead of waiting.
func TestBadRowOnOneRank(t *testing.T) {
	good := blobs(30, 2, 2, 9)
	bad := frameOf(2, []float64{1, 2, math.Inf(1), 0})
	mltest.FailOnOneRank(t, func() ml.Estimator { return NewKMeans() }, 3, 1, func(r int) *data.Frame {
		if r == 1 {
			return bad
		}
		return good
	}, "row 2, element 1: +Inf is not a finite number", "another rank's data is invalid")
}

// The cosine cost is Σ (1 − cos) to the nearest center, computed
// directly here.
func TestCosineCost(t *testing.T) {
	f := blobs(200, 5, 3, 13)
	k := NewKMeans()
	k.K, k.DistanceMeasure = 3, Cosine
	m, err := k.Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	km := m.(*KMeansModel)
	x, _ := ml.Features(f, ml.FeaturesCol)
	cost := 0.0
	for i := range x.Rows {
		r := x.Row(i)
		best := math.Inf(1)
		for j := range km.K {
			c := km.Center(j)
			dot, nr, nc := 0.0, 0.0, 0.0
			for e := range r {
				dot += r[e] * c[e]
				nr += r[e] * r[e]
				nc += c[e] * c[e]
			}
			best = min(best, 1-dot/math.Sqrt(nr*nc))
		}
		cost += best
	}
	if math.Abs(cost-km.TrainingCost) > 1e-9*cost {
		t.Fatalf("cosine cost %.17g, direct %.17g", km.TrainingCost, cost)
	}
	for j := range km.K {
		c := km.Center(j)
		if n := math.Sqrt(kernel.DotF64(c, c)); math.Abs(n-1) > 1e-12 {
			t.Fatalf("center %d has norm %g, want 1", j, n)
		}
	}
}
