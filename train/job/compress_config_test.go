package job

import (
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/prune"
	"github.com/fathom-ml/fathom/tensor"
)

// TestPrecisionAndPruneConfig: precision, loss_scale and prune parse into
// the trainer's and prune's settings, and bad values are errors naming the
// key.
func TestPrecisionAndPruneConfig(t *testing.T) {
	c, err := ParseConfig([]byte(baseConfig), "base.yaml", []string{"precision=fp16", "loss_scale={init: 1024, growth_interval: 50}",
		"prune={method: structured, sparsity: 0.5, norm: l2, start_epoch: 1, end_epoch: 2, every_steps: 10}", "epochs=3"})
	if err != nil {
		t.Fatal(err)
	}
	p, ls, err := c.precision()
	if err != nil || p != tensor.PrecisionFP16 || ls == nil || ls.Init != 1024 || ls.Interval != 50 {
		t.Fatalf("precision %v, loss scale %+v, %v", p, ls, err)
	}
	s, err := c.Prune.schedule(c.Epochs, 100)
	if err != nil {
		t.Fatal(err)
	}
	if want := (prune.Schedule{Method: prune.StructuredMethod, Sparsity: 0.5, Norm: prune.L2, Begin: 100, End: 200, Every: 10}); s != want {
		t.Errorf("schedule %+v, want %+v", s, want)
	}
	for _, test := range []struct {
		sets []string
		want string
	}{
		{[]string{"precision=int4"}, "precision"},
		{[]string{"precision=bf16", "loss_scale={init: 8}"}, "loss_scale"},
		{[]string{"precision=fp16", "loss_scale={backoff: 2}"}, "backoff"},
		{[]string{"prune={sparsity: 1}"}, "prune.sparsity"},
		{[]string{"prune={sparsity: 0.5, method: random}"}, "prune.method"},
		{[]string{"prune={sparsity: 0.5, scope: row}"}, "prune.scope"},
		{[]string{"prune={sparsity: 0.5, start_epoch: 9}", "epochs=3"}, "prune.start_epoch"},
		{[]string{"prune={sparsity: 0.5, shrink: true}"}, "prune.shrink"},
		{[]string{"prune={sparsity: 0.5, speed: 2}"}, "speed"},
	} {
		_, err := ParseConfig([]byte(baseConfig), "base.yaml", test.sets)
		if err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%v: error %v, want one naming %s", test.sets, err, test.want)
		}
	}
}
