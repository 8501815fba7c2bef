package job

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/runlog"
	"github.com/fathom-ml/fathom/train"
)

// TestLBFGSMatchesSklearn trains a linear softmax model (multinomial
// logistic regression) with optimizer: lbfgs and compares it with
// scikit-learn's LogisticRegression(solver="lbfgs") on the same rows,
// without a penalty and with its default L2 penalty C = 1 (weight_decay
// 1/(C·300 rows)). The reference numbers were computed once by
// testdata/gen_blobs_reference.py (scikit-learn, /usr/bin/python3), which
// also wrote the two CSV files.
func TestLBFGSMatchesSklearn(t *testing.T) {
	for _, test := range []struct {
		name string
		sets []string
		// Coefficients and intercepts centred over the classes (the
		// softmax does not change when a constant is added to every
		// class).
		w [3][4]float64
		b [3]float64
		// trainLoss is the mean log loss (unpenalized only; with a penalty
		// scikit-learn's minimum is of another objective).
		trainLoss, testLoss float64
	}{
		{"penalty=None", nil,
			[3][4]float64{
				{-0.505141743, -1.0696835474, -0.1143404736, 0.0375866657},
				{0.9931849488, 0.1067340358, -0.5608039414, -0.5771350952},
				{-0.4880432058, 0.9629495116, 0.6751444149, 0.5395484296},
			},
			[3]float64{1.12757759, -0.330486668, -0.797090922},
			0.5513083155238703, 0.5998756100907082},
		{"C=1", []string{"optimizer.weight_decay=0.0033333333333333335"},
			[3][4]float64{
				{-0.4931096084, -1.0285141287, -0.113735639, 0.0372992043},
				{0.9606462571, 0.1080483135, -0.5393069938, -0.5550642725},
				{-0.4675366487, 0.9204658152, 0.6530426327, 0.5177650683},
			},
			[3]float64{1.0800648741, -0.3239028951, -0.7561619789},
			0, 0},
	} {
		t.Run(test.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(`
data: {source: csv, train: testdata/blobs_train.csv, test: testdata/blobs_test.csv, label: label}
model: [{type: linear, out: 3}]
loss: cross_entropy
optimizer: {type: lbfgs}
epochs: 5
batch_size: 1
seed: 3
`), "blobs.yaml", append([]string{"output.dir=" + t.TempDir()}, test.sets...))
			if err != nil {
				t.Fatal(err)
			}
			r, err := Run(t.Context(), c, RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			last := r.Epochs[len(r.Epochs)-1]
			if test.trainLoss != 0 && math.Abs(last.Train.Loss-test.trainLoss) > 1e-5 {
				t.Errorf("training loss %.8f, scikit-learn %.8f", last.Train.Loss, test.trainLoss)
			}
			if test.testLoss != 0 && math.Abs(r.Test.Loss-test.testLoss) > 1e-4 {
				t.Errorf("test loss %.6f, scikit-learn %.6f", r.Test.Loss, test.testLoss)
			}
			if r.Test.Accuracy != 0.8 { // scikit-learn's in both cases
				t.Errorf("test accuracy %v, scikit-learn 0.8", r.Test.Accuracy)
			}
			params := r.Model.Net.Parameters()
			w, b := params[0].Float32s(), params[1].Float32s()
			for j := range 4 {
				mean := (float64(w[j]) + float64(w[4+j]) + float64(w[8+j])) / 3
				for k := range 3 {
					if got := float64(w[4*k+j]) - mean; math.Abs(got-test.w[k][j]) > 1e-3 {
						t.Errorf("W[%d][%d] = %.5f (centred), scikit-learn %.5f", k, j, got, test.w[k][j])
					}
				}
			}
			bm := (float64(b[0]) + float64(b[1]) + float64(b[2])) / 3
			for k := range 3 {
				if got := float64(b[k]) - bm; math.Abs(got-test.b[k]) > 1e-3 {
					t.Errorf("b[%d] = %.5f (centred), scikit-learn %.5f", k, got, test.b[k])
				}
			}
		})
	}
}

// TestLBFGSConfigErrors: what full-batch L-BFGS cannot honour is a config
// error naming the key.
func TestLBFGSConfigErrors(t *testing.T) {
	for _, test := range []struct {
		sets []string
		want string
	}{
		{[]string{"schedule.type=step", "schedule.step_size=1"}, "schedule: not supported with lbfgs"},
		{[]string{"optimizer.clip_grad_norm=1"}, "not supported with lbfgs"},
		{[]string{"optimizer.max_iter=-1"}, "must not be negative"},
	} {
		_, err := ParseConfig([]byte(baseConfig), "base.yaml", append([]string{"optimizer.type=lbfgs"}, test.sets...))
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%v: %v, want a ConfigError containing %q", test.sets, err, test.want)
		}
	}
}

// TestLBFGSEarlyStoppingAndResume: L-BFGS runs in train.Trainer, so early
// stopping ends a long run once the validation loss stops improving, and a
// run stopped after two epochs and resumed from its checkpoint ends with
// the uninterrupted run's weights, bit for bit, and the same per-epoch
// losses.
func TestLBFGSEarlyStoppingAndResume(t *testing.T) {
	lbfgs := []string{"optimizer.type=lbfgs", "optimizer.lr=1", "optimizer.max_iter=5", "data.validation=0.2"}
	run := func(ro RunOptions, sets ...string) (*Result, error) {
		t.Helper()
		c, err := ParseConfig([]byte(baseConfig), "base.yaml", append(slices.Clone(lbfgs), sets...))
		if err != nil {
			t.Fatal(err)
		}
		return Run(t.Context(), c, ro)
	}

	t.Run("early stopping", func(t *testing.T) {
		r, err := run(RunOptions{}, "epochs=200", "early_stopping.patience=3", "output.dir="+t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		n := len(r.Epochs)
		if !r.Stopped || n >= 200 || n < 4 {
			t.Fatalf("stopped %v after %d of 200 epochs, want early stopping", r.Stopped, n)
		}
		best := math.Inf(1)
		for _, e := range r.Epochs[:n-3] {
			best = min(best, e.Eval.Loss)
		}
		for _, e := range r.Epochs[n-3:] {
			if e.Eval.Loss < best {
				t.Errorf("epoch %d: validation loss %v improved on %v, yet training stopped", e.Epoch, e.Eval.Loss, best)
			}
		}
	})

	t.Run("resume", func(t *testing.T) {
		whole, err := run(RunOptions{}, "epochs=6", "output.dir="+t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		stop := errors.New("stopped after epoch 2")
		hooks := train.Hooks{EpochEnd: func(e runlog.Epoch) error {
			if e.Epoch == 2 {
				return stop
			}
			return nil
		}}
		if _, err := run(RunOptions{Hooks: hooks}, "epochs=6", "output.checkpoint_every=1", "output.dir="+dir); !errors.Is(err, stop) {
			t.Fatalf("first part: %v, want it stopped after epoch 2", err)
		}
		resumed, err := run(RunOptions{}, "epochs=6", "output.checkpoint_every=1", "output.resume=true", "output.dir="+dir)
		if err != nil {
			t.Fatal(err)
		}
		if resumed.WeightsSHA256 != whole.WeightsSHA256 {
			t.Errorf("resumed weights %s, uninterrupted %s", resumed.WeightsSHA256, whole.WeightsSHA256)
		}
		if len(resumed.Epochs) != len(whole.Epochs) {
			t.Fatalf("resumed run has %d epochs, uninterrupted %d", len(resumed.Epochs), len(whole.Epochs))
		}
		for i, e := range resumed.Epochs {
			w := whole.Epochs[i]
			if e.Train.Loss != w.Train.Loss || e.Eval.Loss != w.Eval.Loss {
				t.Errorf("epoch %d: losses %v/%v resumed, %v/%v uninterrupted", e.Epoch, e.Train.Loss, e.Eval.Loss, w.Train.Loss, w.Eval.Loss)
			}
		}
		if whole.Epochs[1].Train.Loss == whole.Epochs[5].Train.Loss {
			t.Errorf("training loss %v did not change after epoch 2: the comparison shows nothing", whole.Epochs[1].Train.Loss)
		}
	})
}
