package feature

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mltest"
)

func vectorsOf(t *testing.T, m ml.Model, f *data.Frame, col string) []float64 {
	t.Helper()
	out, err := m.Transform(f)
	if err != nil {
		t.Fatal(err)
	}
	vc, err := out.Vectors(col)
	if err != nil {
		t.Fatal(err)
	}
	return vc.Float64s()
}

func TestPeerNormalizerBinarizer(t *testing.T) {
	f := frame(t, ml.VectorOut("features", 3, peerX))
	rows02 := func(v []float64) []float64 { return append(v[0:3:3], v[6:9]...) }
	// Normalizer(norm=...).fit_transform, rows 0 and 2 (testdata/peer_sklearn.py).
	for _, tc := range []struct {
		p    float64
		want []float64
	}{
		{1, []float64{0.1111111111111111, -0.14814814814814814, 0.7407407407407407, -0.058823529411764705, 0.23529411764705882, 0.7058823529411765}},
		{2, []float64{0.14552137502179976, -0.19402850002906638, 0.9701425001453319, -0.07881104062391008, 0.3152441624956403, 0.9457324874869208}},
		{math.Inf(1), []float64{0.15, -0.2, 1, -0.08333333333333333, 0.3333333333333333, 1}},
	} {
		n := NewNormalizer("features", "n")
		n.P = tc.p
		checkNear(t, "Normalizer", rows02(vectorsOf(t, n, f, "n")), tc.want, 1e-15)
		roundTrip(t, n, f)
	}
	// p = 3 by hand on row 0: (1.5, −2, 10) / (1.5³ + 2³ + 10³)^(1/3).
	n := NewNormalizer("features", "n")
	n.P = 3
	norm := math.Cbrt(1.5*1.5*1.5 + 8 + 1000)
	checkNear(t, "Normalizer p=3", vectorsOf(t, n, f, "n")[:3], []float64{1.5 / norm, -2 / norm, 10 / norm}, 1e-15)

	b := NewBinarizer("features", "b")
	b.Threshold = 1
	checkNear(t, "Binarizer", rows02(vectorsOf(t, b, f, "b")), []float64{1, 0, 1, 0, 1, 1}, 0)
	roundTrip(t, b, f)
	s, err := NewBinarizer("x", "b").Transform(frame(t, data.NewColumn("x", []int64{-1, 0, 3}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Float64s("b"); !slices.Equal(v, []float64{0, 0, 1}) {
		t.Fatalf("Binarizer of a scalar column: %v", v)
	}
}

// TestPolynomialExpansion pins the example of Spark's documentation
// (ml-features, PolynomialExpansion, degree 3).
func TestPolynomialExpansion(t *testing.T) {
	f := frame(t, ml.VectorOut("features", 2, []float64{2, 1, 0, 0, 3, -1}))
	p := NewPolynomialExpansion("features", "poly")
	p.Degree = 3
	checkNear(t, "degree 3", vectorsOf(t, p, f, "poly"), []float64{
		2, 4, 8, 1, 2, 4, 1, 2, 1,
		0, 0, 0, 0, 0, 0, 0, 0, 0,
		3, 9, 27, -1, -3, -9, 1, 3, -1,
	}, 0)
	roundTrip(t, p, f)
	// Three variables, degree 2: x, x², y, xy, y², z, xz, yz, z².
	g := frame(t, ml.VectorOut("features", 3, []float64{2, 3, 5}))
	p.Degree = 2
	checkNear(t, "three variables", vectorsOf(t, p, g, "poly"), []float64{2, 4, 3, 6, 9, 5, 10, 15, 25}, 0)
	if polySize(3, 2) != 10 || polySize(2, 3) != 10 || polySize(10, 3) != 286 {
		t.Fatalf("polySize: %d %d %d", polySize(3, 2), polySize(2, 3), polySize(10, 3))
	}
}

func TestBucketizer(t *testing.T) {
	inf := math.Inf(1)
	f := frame(t, data.NewColumn("x", []float64{-0.5, 0, 0.3, math.NaN(), 0.5, 7, -9}, []bool{true, true, true, true, true, true, true}))
	b := NewBucketizer("x", "bucket", -inf, -0.5, 0, 0.5, inf)
	if _, err := b.Transform(f); err == nil || !strings.Contains(err.Error(), `column "x", row 4: null or NaN value`) {
		t.Fatalf("NaN: err = %v", err)
	}
	b.HandleInvalid = InvalidKeep
	out, err := b.Transform(f)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := out.Float64s("bucket"); !slices.Equal(v, []float64{1, 2, 2, 4, 3, 3, 0}) {
		t.Fatalf("keep: %v, want [1 2 2 4 3 3 0]", v)
	}
	b.HandleInvalid = InvalidSkip
	if out, err = b.Transform(f); err != nil {
		t.Fatal(err)
	}
	if v, _ := out.Float64s("bucket"); !slices.Equal(v, []float64{1, 2, 2, 3, 3, 0}) {
		t.Fatalf("skip: %v", v)
	}
	roundTrip(t, b, f)
	// The last bucket is closed; beyond the splits is an error.
	c := NewBucketizer("x", "bucket", 0, 1, 2)
	out, err = c.Transform(frame(t, data.NewColumn("x", []float64{2, 1, 0, 1.5}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := out.Float64s("bucket"); !slices.Equal(v, []float64{1, 1, 0, 1}) {
		t.Fatalf("closed last bucket: %v", v)
	}
	if _, err := c.Transform(frame(t, data.NewColumn("x", []float64{1, 2.5}, nil))); err == nil || !strings.Contains(err.Error(), "row 2: 2.5 is outside the splits [0, 2]") {
		t.Fatalf("outside: err = %v", err)
	}
	if _, err := NewBucketizer("x", "b", 0, 2, 1).Transform(f); err == nil || !strings.Contains(err.Error(), "splits must increase strictly") {
		t.Fatalf("bad splits: err = %v", err)
	}
}

func TestQuantileDiscretizer(t *testing.T) {
	inf := math.Inf(1)
	x := []float64{7, 1, 10, 4, 2, math.NaN(), 9, 3, 6, 5, 8}
	f := frame(t, data.NewColumn("x", x, nil))
	for _, tc := range []struct {
		buckets int
		splits  []float64
	}{
		// Ranks ⌈p·10⌉ of 1..10: p = ¼ → 3, ½ → 5, ¾ → 8.
		{4, []float64{-inf, 3, 5, 8, inf}},
		{2, []float64{-inf, 5, inf}},
		// Ranks 1, 2, ..., 9.
		{10, []float64{-inf, 1, 2, 3, 4, 5, 6, 7, 8, 9, inf}},
	} {
		q := NewQuantileDiscretizer()
		q.InputCol, q.OutputCol, q.NumBuckets, q.HandleInvalid = "x", "b", tc.buckets, InvalidKeep
		m, err := q.Fit(ml.Local(f))
		if err != nil {
			t.Fatal(err)
		}
		got := m.(*Bucketizer).Splits
		if !slices.Equal(got, tc.splits) {
			t.Errorf("%d buckets: splits %v, want %v", tc.buckets, got, tc.splits)
		}
	}
	// Equal quantiles merge.
	// Ranks 2, 4, 6 of 1 1 1 1 2 2 3 3: 1, 1, 2.
	g := frame(t, data.NewColumn("x", []float64{1, 1, 1, 1, 2, 2, 3, 3}, nil))
	q := NewQuantileDiscretizer()
	q.InputCol, q.OutputCol, q.NumBuckets = "x", "b", 4
	m, err := q.Fit(ml.Local(g))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.(*Bucketizer).Splits; !slices.Equal(got, []float64{-inf, 1, 2, inf}) {
		t.Errorf("ties: splits %v, want [-Inf 1 2 +Inf]", got)
	}
	q.NumBuckets = 1
	if _, err := q.Fit(ml.Local(g)); err == nil || !strings.Contains(err.Error(), "numBuckets must be ≥ 2, got 1") {
		t.Errorf("numBuckets 1: %v", err)
	}
}

func TestQuantileDiscretizerConformance(t *testing.T) {
	mltest.Check(t, func() ml.Estimator {
		q := NewQuantileDiscretizer()
		q.InputCol, q.OutputCol, q.NumBuckets, q.HandleInvalid = "gap", "bucket", 5, InvalidKeep
		return q
	}, testFrame(t), mltest.Options{})
}
