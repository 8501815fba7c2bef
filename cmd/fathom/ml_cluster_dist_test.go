package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mltest"
)

// TestMLClusterDecompDistributed runs `fathom run -n 2 -- fathom ml fit`
// on the k-means and PCA-then-logistic-regression example configs and
// compares each with the same fit in one process: the same k-means
// centers, PCA components and metrics within 1e-9.
func TestMLClusterDecompDistributed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	for _, typ := range []string{"KMeans", "PCA", "LogisticRegression", "VectorAssembler", "StandardScaler"} {
		if !slices.Contains(ml.StageTypes(), typ) {
			t.Skipf("stage %s not registered in this build", typ)
		}
	}
	exe := buildFathom(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, tc := range []struct {
		config string
		stage  int // the pipeline stage whose model is checked by type
		typ    string
	}{
		{"iris-kmeans.yaml", 2, "KMeansModel"},
		{"iris-pca-logreg.yaml", 3, "PCAModel"},
	} {
		config := filepath.Join("../../examples/ml", tc.config)
		args := func(dir string) []string {
			return []string{"ml", "fit", config, "--json", "--quiet", "--set", "output.dir=" + dir}
		}
		distDir := t.TempDir()
		cmd := exec.CommandContext(ctx, exe, append([]string{"run", "-n", "2", "--", exe}, args(distDir)...)...)
		cmd.Env = append(os.Environ(), "MASTER_ADDR=", "FATHOM_JOB_TOKEN=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: fathom run -n 2 -- fathom ml fit: %v\nstderr:\n%s", tc.config, err, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "[0] ") {
			t.Fatalf("%s: want one line from rank 0, got:\n%s", tc.config, stdout.String())
		}
		var dist map[string]any
		if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[0], "[0] ")), &dist); err != nil {
			t.Fatal(err)
		}
		oneDir := t.TempDir()
		out, err := execute(t, args(oneDir)...)
		if err != nil {
			t.Fatalf("%s: one process: %v", tc.config, err)
		}
		single := lastJSON(t, out)
		if dist["ranks"] != 2.0 || single["ranks"] != 1.0 {
			t.Fatalf("%s: 2 ranks %v; one process %v", tc.config, dist, single)
		}
		dm, sm := dist["metrics"].(map[string]any), single["metrics"].(map[string]any)
		for k, v := range sm {
			a, b := v.(float64), dm[k].(float64)
			if math.Abs(a-b) > 1e-9*max(math.Abs(a), 1) {
				t.Errorf("%s: %s %.17g on 2 ranks, %.17g in one process", tc.config, k, b, a)
			}
		}
		a, err := ml.LoadModel(filepath.Join(distDir, "model.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := ml.LoadModel(filepath.Join(oneDir, "model.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		if got := b.(*ml.PipelineModel).Stages[tc.stage].Type(); got != tc.typ {
			t.Fatalf("%s: stage %d is a %s, want %s", tc.config, tc.stage, got, tc.typ)
		}
		if d := mltest.DiffModels(b, a, 1e-9); d != "" {
			t.Errorf("%s: the model of 2 ranks differs: %s", tc.config, d)
		}
	}
}
