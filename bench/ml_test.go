package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/ml"
)

// TestMLRecipes decodes every recipe's params over its registered stage
// (once the algorithms are registered) and refuses a bogus param.
func TestMLRecipes(t *testing.T) {
	for _, algo := range MLAlgos() {
		r := MLRecipes[algo]
		if !slices.Contains(ml.StageTypes(), r.Stage) {
			t.Logf("%s: stage %s not registered in this build; skipped", algo, r.Stage)
			continue
		}
		if _, err := ML(MLOptions{Algo: algo, Rows: 1, Params: []string{"bogusParam=1"}}); err == nil || !strings.Contains(err.Error(), "bogusParam") {
			t.Errorf("%s: a bogus param: %v", algo, err)
		}
		if err := CheckMLRecipe(r); err != nil {
			t.Errorf("%s: %v", algo, err)
		}
	}
	if _, err := ML(MLOptions{Algo: "nope"}); err == nil || !strings.Contains(err.Error(), `unknown algorithm "nope" (want one of gnb, kmeans, linsvc, logreg, mlp, pca)`) {
		t.Errorf("unknown algorithm: %v", err)
	}
}

// kmeans and pca on the first 3000 Fashion-MNIST rows: inertia and
// explained variance instead of a test accuracy; kmeans from given
// centers (ReadCenters, behind --init-centers).
func TestMLUnsupervised(t *testing.T) {
	if reason := FashionMNISTMissing(); reason != "" {
		t.Skip(reason)
	}
	dir := t.TempDir()
	// two centers: all pixels 0, all pixels 0.5
	var b strings.Builder
	for _, v := range []string{"0", "0.5"} {
		b.WriteString(strings.TrimSuffix(strings.Repeat(v+",", 784), ",") + "\n")
	}
	centers := filepath.Join(dir, "c.csv")
	if err := os.WriteFile(centers, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile, err := ReadCenters(centers)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		o   MLOptions
		key string
		lo  float64
		hi  float64
	}{
		{MLOptions{Algo: "kmeans", Rows: 3000}, "inertia", 1e4, 2e5},
		{MLOptions{Algo: "kmeans", Rows: 3000, Params: fromFile}, "inertia", 1e4, 2e5},
		{MLOptions{Algo: "pca", Rows: 3000, Params: []string{"k=10"}}, "explained_variance_ratio_sum", 0.5, 0.9},
	} {
		res, err := ML(tc.o)
		if err != nil {
			t.Fatalf("%+v: %v", tc.o, err)
		}
		out, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var r map[string]any
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		v, ok := r[tc.key].(float64)
		if !ok || v < tc.lo || v > tc.hi || r["fit_seconds"] == nil || r["test_accuracy"] != nil || !res.Unsupervised {
			t.Fatalf("%+v: %s", tc.o, out)
		}
	}
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("1,2\n3,x\n"), 0o644)
	if _, err := ReadCenters(bad); err == nil || !strings.Contains(err.Error(), `line 2, field 2: "x" is not a number`) {
		t.Errorf("bad centers file: %v", err)
	}
	short := filepath.Join(dir, "short.csv")
	os.WriteFile(short, []byte("1,2\n3,4\n"), 0o644)
	sets, err := ReadCenters(short)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ML(MLOptions{Algo: "kmeans", Rows: 100, Params: sets}); err == nil || !strings.Contains(err.Error(), "initialCenters[0] has 2 elements, the features 784") {
		t.Errorf("centers of the wrong width: %v", err)
	}
}

func TestReadCentersErrors(t *testing.T) {
	dir := t.TempDir()
	for _, test := range []struct{ name, text, want string }{
		{"ragged.csv", "1,2\n3\n", "line 2 has 1 numbers, the lines before 2"},
		{"empty.csv", "\n\n", "no centers"},
	} {
		p := filepath.Join(dir, test.name)
		os.WriteFile(p, []byte(test.text), 0o644)
		if _, err := ReadCenters(p); err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%s: error %v, want %q", test.name, err, test.want)
		}
	}
	if got, err := ReadCenters(filepath.Join(dir, "two.csv")); err == nil {
		t.Errorf("missing file: %v", got)
	}
}
