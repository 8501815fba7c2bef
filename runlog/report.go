package runlog

import (
	"bytes"
	"fmt"
	"math"
	"strconv"

	"github.com/fathom-ml/fathom/internal/atomicfile"
	"github.com/fathom-ml/fathom/metrics"
)

// WriteMetricsCSV writes one row per epoch: epoch, training loss and
// metric, evaluation loss and metric (empty without evaluation data),
// learning rate and seconds of the training pass. The evaluation columns
// are named val_loss and val_<metric>, for a validation split (see
// WriteMetricsCSVSplit). The file is written to a temporary name and
// renamed.
func WriteMetricsCSV(path string, task metrics.Task, hist []Epoch) error {
	return WriteMetricsCSVSplit(path, task, hist, "val")
}

// WriteMetricsCSVSplit is WriteMetricsCSV with the evaluation columns named
// after the split they hold: split_loss and split_<metric>, e.g. test_loss
// when the test split is evaluated every epoch.
func WriteMetricsCSVSplit(path string, task metrics.Task, hist []Epoch, split string) error {
	var b bytes.Buffer
	m := task.Headline()
	fmt.Fprintf(&b, "epoch,train_loss,train_%s,%s_loss,%s_%s,lr,seconds,eval_seconds\n", m, split, split, m)
	num := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 8, 64)
	}
	for _, r := range hist {
		tm, _ := r.Train.Get(m)
		vl, vm := math.NaN(), math.NaN()
		if r.Eval != nil {
			vl = r.Eval.Loss
			vm, _ = r.Eval.Get(m)
		}
		fmt.Fprintf(&b, "%d,%s,%s,%s,%s,%s,%s,%s\n", r.Epoch, num(r.Train.Loss), num(tm), num(vl), num(vm),
			num(r.LR), num(r.Seconds), num(r.EvalSeconds))
	}
	return atomicfile.WriteBytes(path, b.Bytes())
}
