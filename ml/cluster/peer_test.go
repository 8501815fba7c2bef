package cluster

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mltest"
)

// Peer values: testdata/peer_sklearn.py (scikit-learn 1.2 KMeans, lloyd,
// float64, from the first 5 rows of testdata/blobs.csv, tol 0; and
// silhouette_score(metric='sqeuclidean') of its labels).
var (
	skInertia    = 1137.8691942529704
	skCenters    = []float64{0.8989456676135441, 2.4234981852179227, 1.0564965211777668, -4.09653691172509, -2.193982406925808, -0.44266351165561946, -1.4755197499285695, 1.485076699603263, 0.37463620013582055, -1.1560246734581767, -2.5515522441285206, -0.8978513123460433, 2.6375431553641224, 1.2465161389314905, -1.9576510517449575, 1.5550241294777882, 1.0139107761720991, 0.9798721805938351, 0.44629056854093074, 1.7742438619064638}
	skSizes      = []int64{54, 70, 57, 57, 62}
	skSilhouette = 0.5555905717274203
)

func readBlobs(t *testing.T) (*data.Frame, [][]float64) {
	t.Helper()
	b, err := os.ReadFile("testdata/blobs.csv")
	if err != nil {
		t.Fatal(err)
	}
	var x []float64
	var rows [][]float64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r []float64
		for _, s := range strings.Split(line, ",") {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(err)
			}
			r = append(r, v)
		}
		rows = append(rows, r)
		x = append(x, r...)
	}
	return frameOf(4, x), rows
}

// From the same initial centers, fathom's Lloyd and Hamerly end at
// scikit-learn's centers and inertia, and the silhouette of the result is
// scikit-learn's.
func TestAgainstSklearn(t *testing.T) {
	f, rows := readBlobs(t)
	for _, alg := range []string{AlgorithmLloyd, AlgorithmHamerly} {
		km := NewKMeans()
		km.K, km.MaxIter, km.Tol, km.Algorithm = 5, 300, 0, alg
		km.InitialCenters = rows[:5]
		m, err := km.Fit(ml.Local(f))
		if err != nil {
			t.Fatal(err)
		}
		model := m.(*KMeansModel)
		for i, v := range model.Centers {
			if math.Abs(v-skCenters[i]) > 1e-10*max(1, math.Abs(v)) {
				t.Fatalf("%s: centers[%d] = %.17g, scikit-learn %.17g", alg, i, v, skCenters[i])
			}
		}
		if math.Abs(model.TrainingCost-skInertia) > 1e-10*skInertia {
			t.Fatalf("%s: cost %.17g, scikit-learn inertia %.17g", alg, model.TrainingCost, skInertia)
		}
		for j, s := range skSizes {
			if model.ClusterSizes[j] != s {
				t.Fatalf("%s: sizes %v, scikit-learn %v", alg, model.ClusterSizes, skSizes)
			}
		}
		out, err := model.Transform(f)
		if err != nil {
			t.Fatal(err)
		}
		sil, err := NewClusteringEvaluator().Evaluate(out, nil)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(sil-skSilhouette) > 1e-10 {
			t.Fatalf("%s: silhouette %.17g, scikit-learn %.17g", alg, sil, skSilhouette)
		}
		// over 3 ranks, the same silhouette
		for r, v := range evalOnRanks(t, out, 3) {
			if math.Abs(v-sil) > 1e-12 {
				t.Fatalf("rank %d of 3: silhouette %.17g, one process %.17g", r, v, sil)
			}
		}
	}
	mltest.Check(t, func() ml.Estimator {
		km := NewKMeans()
		km.K, km.InitialCenters = 5, rows[:5]
		return km
	}, f, mltest.Options{})
}
