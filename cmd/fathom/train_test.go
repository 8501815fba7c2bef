package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/bench"
	"github.com/fathom-ml/fathom/data"
)

// TestTrainIrisJSON runs `fathom train examples/iris.yaml --json` for
// several seeds; every run must reach 0.95 test accuracy.
func TestTrainIrisJSON(t *testing.T) {
	for _, seed := range []int{1, 2, 3, 4, 5} {
		dir := t.TempDir()
		out, err := captureStdout(t, true, func() error {
			return runTrain(context.Background(), "../../examples/iris.yaml",
				[]string{"seed=" + strconv.Itoa(seed), "output.dir=" + dir}, true, io.Discard)
		})
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 61 { // 60 epochs and the final line
			t.Fatalf("seed %d: %d JSON lines, want 61", seed, len(lines))
		}
		final := lastJSON(t, out)
		acc, _ := final["test_accuracy"].(float64)
		if acc < 0.95 {
			t.Errorf("seed %d: test accuracy %v, want ≥ 0.95", seed, acc)
		}
		for _, k := range []string{"train_loss", "seconds_per_epoch", "model_path"} {
			if final[k] == nil {
				t.Errorf("seed %d: final line lacks %q: %v", seed, k, final)
			}
		}
		if final["model_path"] != filepath.Join(dir, "model.safetensors") {
			t.Errorf("model_path %v", final["model_path"])
		}
	}
}

// TestBadInputs checks that bad files and configs give errors saying what
// and where, through the CLI code paths.
func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badCSV := write("bad.csv", "x1,x2,y\n1,2,3\n4,oops,6\n")
	csvCfg := write("csv.yaml", "data: {source: csv, train: bad.csv, label: y}\nmodel: [{type: linear, out: 1}]\nloss: mse\noptimizer: {type: sgd, lr: 0.1}\nepochs: 1\nbatch_size: 4\n")
	missingCfg := write("missing.yaml", "data: {source: csv, train: nowhere.csv, label: y}\nmodel: [{type: linear, out: 1}]\nloss: mse\noptimizer: {type: sgd, lr: 0.1}\nepochs: 1\nbatch_size: 4\n")
	iris, _ := os.ReadFile("../../examples/iris.yaml")
	unknown := write("unknown.yaml", strings.Replace(string(iris), "epochs: 60", "epochs: 60\nepohcs: 3", 1))
	chain := write("chain.yaml", strings.Replace(string(iris), "{type: linear, out: 3}", "{type: linear, in: 32, out: 3}", 1))
	irisCSV := write("iris.csv", string(data.IrisCSV()))
	badIris := write("badiris.csv", strings.Replace(string(data.IrisCSV()), "5.1,3.5,1.4,0.2", "5.1,3.5,abc,0.2", 1))

	// A trained model for the predict/eval cases.
	modelDir := t.TempDir()
	if _, err := captureStdout(t, true, func() error {
		return runTrain(context.Background(), "../../examples/iris.yaml", []string{"epochs=2", "output.dir=" + modelDir}, true, io.Discard)
	}); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(modelDir, "model.safetensors")
	raw, _ := os.ReadFile(model)
	corrupt := write("corrupt.safetensors", string(raw[:len(raw)/2]))

	for _, test := range []struct {
		name string
		run  func() error
		want []string
	}{
		{"missing config", func() error { return runTrain(nil, filepath.Join(dir, "nope.yaml"), nil, true, io.Discard) }, []string{"nope.yaml", "no such file"}},
		{"missing data file", func() error { return runTrain(nil, missingCfg, nil, true, io.Discard) }, []string{"nowhere.csv"}},
		{"non-numeric CSV cell", func() error { return runTrain(nil, csvCfg, []string{"output.dir=" + dir}, true, io.Discard) }, []string{"bad.csv:3", `"x2"`, "oops"}},
		{"unknown key", func() error { return runTrain(nil, unknown, nil, true, io.Discard) }, []string{"unknown.yaml:", `unknown key "epohcs"`}},
		{"sizes do not chain", func() error { return runTrain(nil, chain, []string{"output.dir=" + dir}, true, io.Discard) }, []string{"chain.yaml:", "model[2] (linear)", "in=32"}},
		{"missing model", func() error {
			return runPredict(filepath.Join(dir, "none.safetensors"), irisCSV, "", 10, io.Discard, io.Discard)
		}, []string{"none.safetensors"}},
		{"corrupt model", func() error { return runPredict(corrupt, irisCSV, "", 10, io.Discard, io.Discard) }, []string{"corrupt.safetensors"}},
		{"missing predict input", func() error { return runPredict(model, filepath.Join(dir, "none.csv"), "", 10, io.Discard, io.Discard) }, []string{"none.csv"}},
		{"non-numeric predict input", func() error { return runPredict(model, badIris, "", 10, io.Discard, io.Discard) }, []string{"badiris.csv:2", "petal_length", "abc"}},
		{"bad output format", func() error {
			return runPredict(model, irisCSV, filepath.Join(dir, "p.xlsx"), 10, io.Discard, io.Discard)
		}, []string{".xlsx"}},
		{"eval without labels", func() error { return runEval(model, evalOptions{source: badCSV, batch: 10}, io.Discard, io.Discard) }, []string{"bad.csv"}},
		{"bench unknown model", func() error { return runBenchTrain(nil, "rnn", 1, 0) }, []string{`"rnn"`}},
	} {
		_, err := captureStdout(t, false, test.run)
		if err == nil {
			t.Errorf("%s: no error", test.name)
			continue
		}
		for _, w := range test.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", test.name, err, w)
			}
		}
	}
}

// TestFashionMLPIntegration trains examples/fashion-mlp.yaml for one
// epoch; the test accuracy must pass 0.8.
func TestFashionMLPIntegration(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on Fashion-MNIST; skipped with -short")
	}
	if reason := bench.FashionMNISTMissing(); reason != "" {
		t.Skip(reason)
	}
	out, err := captureStdout(t, true, func() error {
		return runTrain(context.Background(), "../../examples/fashion-mlp.yaml", []string{"epochs=1", "output.dir=" + t.TempDir()}, true, io.Discard)
	})
	if err != nil {
		t.Fatal(err)
	}
	final := lastJSON(t, out)
	if acc, _ := final["test_accuracy"].(float64); acc <= 0.8 {
		t.Fatalf("test accuracy %v after one epoch, want > 0.8", acc)
	}
	t.Logf("fashion-mlp, 1 epoch: %v", final)
}
