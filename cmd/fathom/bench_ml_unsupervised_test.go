package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fathom bench ml kmeans and pca on the first 3000 Fashion-MNIST rows:
// inertia and explained variance instead of a test accuracy; kmeans from
// given centers (--init-centers).
func TestBenchMLUnsupervised(t *testing.T) {
	if reason := fashionMNISTMissing(); reason != "" {
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
	for _, tc := range []struct {
		args []string
		key  string
		lo   float64
		hi   float64
	}{
		{[]string{"bench", "ml", "kmeans", "--rows", "3000", "--json"}, "inertia", 1e4, 2e5},
		{[]string{"bench", "ml", "kmeans", "--rows", "3000", "--init-centers", centers, "--json"}, "inertia", 1e4, 2e5},
		{[]string{"bench", "ml", "pca", "--rows", "3000", "--param", "k=10", "--json"}, "explained_variance_ratio_sum", 0.5, 0.9},
	} {
		out, err := execute(t, tc.args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		r := lastJSON(t, out)
		v, ok := r[tc.key].(float64)
		if !ok || v < tc.lo || v > tc.hi || r["fit_seconds"] == nil || r["test_accuracy"] != nil {
			t.Fatalf("%v: %s", tc.args, out)
		}
	}
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("1,2\n3,x\n"), 0o644)
	if _, err := execute(t, "bench", "ml", "kmeans", "--init-centers", bad); err == nil || !strings.Contains(err.Error(), `line 2, field 2: "x" is not a number`) {
		t.Errorf("bad centers file: %v", err)
	}
	short := filepath.Join(dir, "short.csv")
	os.WriteFile(short, []byte("1,2\n3,4\n"), 0o644)
	if _, err := execute(t, "bench", "ml", "kmeans", "--rows", "100", "--init-centers", short); err == nil || !strings.Contains(err.Error(), "initialCenters[0] has 2 elements, the features 784") {
		t.Errorf("centers of the wrong width: %v", err)
	}
}
