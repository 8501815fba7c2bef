package job

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const baseConfig = `data:
  source: iris
  standardize: true
model:
  - {type: linear, out: 8}
  - {type: relu}
  - {type: linear, out: 3}
loss: cross_entropy
optimizer:
  type: adam
  lr: 0.01
epochs: 5
batch_size: 16
seed: 3
`

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(baseConfig), "base.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Data.Source != "iris" || !c.Data.Standardize || len(c.Model) != 3 || c.Model[0].Out != 8 ||
		c.Loss.Type != "cross_entropy" || c.Optimizer.Type != "adam" || c.Optimizer.LR != 0.01 ||
		c.Epochs != 5 || c.BatchSize != 16 || c.Seed != 3 {
		t.Fatalf("parsed %+v", c)
	}
	// Mapping forms of the shorthand keys.
	c, err = ParseConfig([]byte(strings.Replace(baseConfig, "loss: cross_entropy", "loss: {type: cross_entropy, label_smoothing: 0.1}", 1)), "x", nil)
	if err != nil || c.Loss.LabelSmoothing != 0.1 {
		t.Fatalf("loss mapping: %+v %v", c.Loss, err)
	}
}

func TestConfigOverrides(t *testing.T) {
	c, err := ParseConfig([]byte(baseConfig), "base.yaml", []string{
		"epochs=1", "optimizer.lr=0.5", "model.0.out=32", "data.test_fraction=0.25",
		"schedule.type=step", "schedule.step_size=2", "output.dir=/tmp/x", "loss=mse", "data.shape=[2, 2]",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Epochs != 1 || c.Optimizer.LR != 0.5 || c.Model[0].Out != 32 || *c.Data.TestFraction != 0.25 ||
		c.Schedule.Type != "step" || c.Schedule.StepSize != 2 || c.Output.Dir != "/tmp/x" || c.Loss.Type != "mse" ||
		len(c.Data.Shape) != 2 {
		t.Fatalf("overridden %+v", c)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, test := range []struct {
		name, text string
		sets       []string
		want       []string // substrings of the message
		line       int
	}{
		{"unknown top key", baseConfig + "epoch: 3\n", nil, []string{`unknown key "epoch"`, "the config"}, 15},
		{"unknown nested key", strings.Replace(baseConfig, "  lr: 0.01", "  lr: 0.01\n  learning_rate: 2", 1), nil,
			[]string{`unknown key "learning_rate" in optimizer`}, 12},
		{"unknown layer key", strings.Replace(baseConfig, "{type: relu}", "{type: relu, inplace: true}", 1), nil,
			[]string{`unknown key "inplace" in model[1]`}, 6},
		{"unknown data key", strings.Replace(baseConfig, "  standardize: true", "  standardise: true", 1), nil,
			[]string{`unknown key "standardise" in data`}, 3},
		{"wrong type", strings.Replace(baseConfig, "epochs: 5", "epochs: five", 1), nil, []string{"line 12", "five"}, 0},
		{"not a mapping", "- 1\n- 2\n", nil, []string{"must be a mapping"}, 1},
		{"model not a list", strings.Replace(baseConfig, "model:\n  - {type: linear, out: 8}\n  - {type: relu}\n  - {type: linear, out: 3}", "model: {type: linear}", 1), nil,
			[]string{"model: want a list"}, 4},
		{"bad yaml", "data: [\n", nil, []string{"base.yaml"}, 0},
		{"missing source", strings.Replace(baseConfig, "  source: iris\n", "", 1), nil, []string{"data.source is missing"}, 0},
		{"bad source", strings.Replace(baseConfig, "source: iris", "source: imagenet", 1), nil, []string{`unknown source "imagenet"`}, 0},
		{"bad optimizer", strings.Replace(baseConfig, "type: adam", "type: adamax", 1), nil, []string{`unknown optimizer "adamax"`}, 0},
		{"bad loss", strings.Replace(baseConfig, "loss: cross_entropy", "loss: hinge", 1), nil, []string{`unknown type "hinge"`}, 0},
		{"zero epochs", baseConfig, []string{"epochs=0"}, []string{"epochs: want at least 1"}, 0},
		{"set unknown key", baseConfig, []string{"optimizer.lrr=1"}, []string{`unknown key "lrr" in optimizer`}, 0},
		{"set bad index", baseConfig, []string{"model.7.out=1"}, []string{"list of 3 items"}, 0},
		{"set into scalar", baseConfig, []string{"epochs.x=1"}, []string{"single value"}, 0},
		{"set no equals", baseConfig, []string{"epochs"}, []string{"key=value"}, 0},
		{"csv without path", strings.Replace(baseConfig, "source: iris", "source: csv", 1), nil, []string{"data.train is required"}, 0},
		{"float epochs", strings.Replace(baseConfig, "epochs: 5", "epochs: 5.7", 1), nil, []string{"epochs: want an integer", `"5.7"`}, 12},
		{"float layer out", strings.Replace(baseConfig, "{type: linear, out: 3}", "{type: linear, out: 3.5}", 1), nil, []string{"model[2].out: want an integer"}, 7},
		{"float batch size by --set", baseConfig, []string{"batch_size=16.0"}, []string{"batch_size: want an integer", "--set"}, 0},
		{"float kernel", baseConfig, []string{"model.0={type: conv2d, out: 4, kernel: 2.5}"}, []string{"model[0].kernel: want an integer or [height, width]"}, 0},
		{"float kernel pair", baseConfig, []string{"model.0={type: conv2d, out: 4, kernel: [3, 2.5]}"}, []string{"model[0].kernel: want an integer or [height, width]"}, 0},
		{"float shape", baseConfig, []string{"data.shape=[1, 2.5]"}, []string{"data.shape[1]: want an integer"}, 0},
		{"float seed", baseConfig, []string{"seed=1.5"}, []string{"seed: want an integer"}, 0},
		{"float patience", baseConfig, []string{"early_stopping.patience=2.5"}, []string{"early_stopping.patience: want an integer"}, 0},
		{"negative gamma", baseConfig, []string{"schedule.type=exponential", "schedule.gamma=-0.5"}, []string{"schedule: gamma"}, 0},
	} {
		_, err := ParseConfig([]byte(test.text), "base.yaml", test.sets)
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%s: error %v is not a *ConfigError", test.name, err)
			continue
		}
		for _, w := range test.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", test.name, err, w)
			}
		}
		if !strings.HasPrefix(err.Error(), "base.yaml") {
			t.Errorf("%s: error %q does not name the file", test.name, err)
		}
		if test.line != 0 && ce.Line != test.line {
			t.Errorf("%s: error %q at line %d, want %d", test.name, err, ce.Line, test.line)
		}
	}
}

// TestExamplesParse checks every example config, with and without the
// --set epochs=1 the tests and users apply.
func TestExamplesParse(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, f := range files {
		for _, sets := range [][]string{nil, {"epochs=1"}} {
			c, err := Load(f, sets)
			if err != nil {
				t.Errorf("%s %v: %v", f, sets, err)
				continue
			}
			if sets != nil && c.Epochs != 1 {
				t.Errorf("%s: --set epochs=1 gave %d epochs", f, c.Epochs)
			}
		}
	}
}

// TestModelSizeErrors builds models whose sizes do not chain: the error
// names the file, the layer's line and index, and the problem.
func TestModelSizeErrors(t *testing.T) {
	dir := t.TempDir()
	for _, test := range []struct {
		name, from, to string
		want           []string
	}{
		{"in mismatch", "{type: linear, out: 3}", "{type: linear, in: 16, out: 3}", []string{"bad.yaml:7:", "model[2] (linear)", "in=16"}},
		{"conv on vectors", "{type: relu}", "{type: conv2d, out: 4, kernel: 3}", []string{"bad.yaml:6:", "model[1] (conv2d)", "[C, H, W]"}},
		{"class count", "{type: linear, out: 3}", "{type: linear, out: 4}", []string{"bad.yaml:7:", "3 classes"}},
	} {
		p := filepath.Join(dir, "bad.yaml")
		if err := os.WriteFile(p, []byte(strings.Replace(baseConfig, test.from, test.to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(p, []string{"output.dir=" + dir})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Run(t.Context(), c, RunOptions{})
		for _, w := range test.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v does not contain %q", test.name, err, w)
			}
		}
	}
}

// FuzzParseConfig feeds arbitrary text to the config parser: it must
// return a config or an error, never panic, and an accepted config must
// pass validation again.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(baseConfig), "epochs=2")
	f.Add([]byte("data: {source: csv, train: a.csv}\nmodel: [{type: linear, out: 1}]\nloss: mse\noptimizer: sgd\nepochs: 1\nbatch_size: 1\n"), "optimizer.lr=0.1")
	f.Add([]byte("{}"), "model.0.out=1")
	f.Add([]byte("a: &x [1]\nb: *x\n"), "a.b.c=[1, {x: 2}]")
	f.Add([]byte(""), "=")
	f.Add([]byte("data: {source: iris}\nloss: mse\nmodel:\n  - type: residual\n    layers:\n"+residualLaughs(9, "      ")), "epochs=1")
	for _, e := range []string{"iris", "linear-regression", "fashion-mlp", "fashion-cnn"} {
		if b, err := os.ReadFile("../../examples/" + e + ".yaml"); err == nil {
			f.Add(b, "data.shape=[1, 28, 28]")
		}
	}
	f.Fuzz(func(t *testing.T, text []byte, set string) {
		c, err := ParseConfig(text, "fuzz.yaml", []string{set})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if err := c.validate(); err != nil {
			t.Fatalf("accepted config fails validation: %v", err)
		}
	})
}

func TestClipGradConfigRejectsNegative(t *testing.T) {
	_, err := ParseConfig([]byte(`
data: {source: iris}
model: [{type: linear, out: 3}]
loss: cross_entropy
optimizer: {type: sgd, lr: 0.1, clip_grad_norm: -1}
epochs: 1
batch_size: 8
`), "neg.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "clip_grad_norm") {
		t.Fatalf("negative clip_grad_norm: error %v, want one naming clip_grad_norm", err)
	}
}

// TestSchedules checks that each schedule: key sets the per-epoch learning
// rates the trainer used before it took package optim's schedules.
func TestSchedules(t *testing.T) {
	for _, test := range []struct {
		sets []string
		want []float64 // per epoch, from lr 0.01
	}{
		{[]string{"schedule.type=step", "schedule.step_size=2", "schedule.gamma=0.5"}, []float64{0.01, 0.01, 0.005, 0.005, 0.0025}},
		{[]string{"schedule.type=exponential", "schedule.gamma=0.5"}, []float64{0.01, 0.005, 0.0025, 0.00125, 0.000625}},
		// Cosine over t_max=2 epochs, then held at eta_min.
		{[]string{"schedule.type=cosine", "schedule.t_max=2", "schedule.eta_min=0.001"}, []float64{0.01, 0.0055, 0.001, 0.001, 0.001}},
		{[]string{"schedule=none"}, []float64{0.01, 0.01, 0.01, 0.01, 0.01}},
	} {
		c, err := ParseConfig([]byte(baseConfig), "base.yaml", append(test.sets, "output.dir="+t.TempDir(), "output.plot=false"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(t.Context(), c, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range r.Epochs {
			if math.Abs(e.LR-test.want[i]) > 1e-15 {
				t.Errorf("%v: epoch %d lr %v, want %v", test.sets, i+1, e.LR, test.want[i])
			}
		}
	}
}

// TestDeprecatedDataKeys: data.path, data.test_path and a number under
// data.test are accepted for one release, each warned once on the
// config layer's writer, and give the config their new names give.
func TestDeprecatedDataKeys(t *testing.T) {
	var warn strings.Builder
	configSpec.Warn = &warn
	defer func() { configSpec.Warn = nil }()
	const rest = "label: y}\nmodel: [{type: linear, out: 1}]\nloss: mse\noptimizer: {type: sgd, lr: 0.1}\nepochs: 1\nbatch_size: 4\n"
	for _, test := range []struct {
		old, new string
		warned   []string
	}{
		{"data: {source: csv, path: a.csv, test_path: b.csv, ", "data: {source: csv, train: a.csv, test: b.csv, ", []string{"data.path", "data.test_path"}},
		{"data: {source: csv, path: a.csv, test: 0.3, ", "data: {source: csv, train: a.csv, test_fraction: 0.3, ", []string{"data.path", "data.test"}},
	} {
		warn.Reset()
		newC, err := ParseConfig([]byte(test.new+rest), "new.yaml", nil)
		if err != nil || warn.Len() != 0 {
			t.Fatalf("%s: %v, warnings %q", test.new, err, warn.String())
		}
		oldC, err := ParseConfig([]byte(test.old+rest), "old.yaml", nil)
		if err != nil {
			t.Fatalf("%s: %v", test.old, err)
		}
		if !reflect.DeepEqual(oldC.Data, newC.Data) {
			t.Errorf("%s: data %+v, the new names give %+v", test.old, oldC.Data, newC.Data)
		}
		for _, k := range test.warned {
			if n := strings.Count(warn.String(), "old.yaml:1: "+k+" is deprecated"); n != 1 {
				t.Errorf("%s: %s warned %d times: %q", test.old, k, n, warn.String())
			}
		}
		if n := strings.Count(warn.String(), "\n"); n != len(test.warned) {
			t.Errorf("%s: %d warning lines, want %d: %q", test.old, n, len(test.warned), warn.String())
		}
	}
	warn.Reset()
	c, err := ParseConfig([]byte(baseConfig), "set.yaml", []string{"data.test=0.4"})
	if err != nil || c.Data.TestFraction == nil || *c.Data.TestFraction != 0.4 || strings.Count(warn.String(), "data.test is deprecated") != 1 {
		t.Errorf("--set data.test=0.4: %v, %+v, warnings %q", err, c, warn.String())
	}
}
