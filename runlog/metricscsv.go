package runlog

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

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
	return atomicfile.WriteBytes(path, []byte(strings.Join(metricsRows(task, hist, split), "")))
}

// metricsRows returns the lines of a metrics file, header first, each
// ending in a newline.
func metricsRows(task metrics.Task, hist []Epoch, split string) []string {
	m := task.Headline()
	rows := make([]string, 0, len(hist)+1)
	rows = append(rows, fmt.Sprintf("epoch,train_loss,train_%s,%s_loss,%s_%s,lr,seconds,eval_seconds\n", m, split, split, m))
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
		rows = append(rows, fmt.Sprintf("%d,%s,%s,%s,%s,%s,%s,%s\n", r.Epoch, num(r.Train.Loss), num(tm), num(vl), num(vm),
			num(r.LR), num(r.Seconds), num(r.EvalSeconds)))
	}
	return rows
}

// MetricsCSV keeps a run's metrics file up to date as its epochs finish:
// each Write appends the rows of the epochs the file does not hold yet,
// so a finished epoch's row is never rewritten. The file is written
// whole (to a temporary name, renamed) by the first Write, and again
// when the history no longer extends what the file holds (a run resumed
// or restarted from a checkpoint older than its last row). After every
// Write the file holds what WriteMetricsCSVSplit(Path, Task, hist, Split)
// writes.
type MetricsCSV struct {
	Path string
	Task metrics.Task
	// Split names the evaluation columns ("val" when empty), as
	// WriteMetricsCSVSplit does.
	Split string

	rows []string // the file's lines, header first
}

// Write brings the file up to hist, the run's epochs so far.
func (w *MetricsCSV) Write(hist []Epoch) error {
	split := w.Split
	if split == "" {
		split = "val"
	}
	rows := metricsRows(w.Task, hist, split)
	n := len(w.rows)
	if n > 0 && len(rows) >= n && slices.Equal(rows[:n], w.rows) {
		if len(rows) == n {
			return nil
		}
		if err := appendFile(w.Path, strings.Join(rows[n:], "")); err != nil {
			return err
		}
		w.rows = rows
		return nil
	}
	if err := atomicfile.WriteBytes(w.Path, []byte(strings.Join(rows, ""))); err != nil {
		return err
	}
	w.rows = rows
	return nil
}

// appendFile appends text to the existing file at path.
func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// A MetricsLog is a metrics file read back (ReadMetricsCSV).
type MetricsLog struct {
	// Epochs holds one record per row; metrics without a value are NaN,
	// and Eval is nil for a row without evaluation values.
	Epochs []Epoch
	// Headline is the metric of the file besides the loss ("accuracy",
	// "rmse"; "loss" when it has none), EvalSplit the split of its
	// evaluation columns ("val", "test"; "" without any).
	Headline, EvalSplit string
	// HasSteps reports whether the file has a steps column; without one,
	// every record's Steps is 0.
	HasSteps bool
}

// Task returns the task the headline metric belongs to: Classification
// for accuracy, Regression for rmse, and false when the file does not
// tell.
func (l MetricsLog) Task() (metrics.Task, bool) {
	switch l.Headline {
	case "accuracy":
		return metrics.Classification, true
	case "rmse":
		return metrics.Regression, true
	}
	return 0, false
}

// metricField returns the field of m a metrics file's column names:
// loss, accuracy (or acc) and rmse; nil for any other.
func metricField(m *metrics.Metrics, name string) *float64 {
	switch name {
	case "loss":
		return &m.Loss
	case "accuracy", "acc":
		return &m.Accuracy
	case "rmse":
		return &m.RMSE
	}
	return nil
}

// A metricsColumn is what one column of a metrics file holds.
type metricsColumn struct {
	split  string // "train" or "eval" for a metric column
	metric string // its metric, "loss", "accuracy", "rmse"
	field  string // "epoch", "lr", "seconds", "eval_seconds", "steps"
}

// parseMetricsHeader reads a metrics file's header into what each column
// holds and the log's headline metric, evaluation split and steps column.
func parseMetricsHeader(head []string) ([]metricsColumn, MetricsLog, error) {
	var l MetricsLog
	cols := make([]metricsColumn, len(head))
	seen := map[string]int{}
	for i, h := range head {
		h = strings.TrimSpace(h)
		if j, dup := seen[h]; dup {
			return nil, l, fmt.Errorf("header: column %q appears twice (columns %d and %d)", h, j+1, i+1)
		}
		seen[h] = i
		switch h {
		case "epoch", "lr", "seconds", "eval_seconds", "steps":
			cols[i].field = h
			continue
		}
		split, metric, ok := strings.Cut(h, "_")
		if !ok || metricField(&metrics.Metrics{}, metric) == nil {
			continue // not a metric this log records
		}
		if split == "train" {
			cols[i] = metricsColumn{split: "train", metric: metric}
		} else {
			if l.EvalSplit != "" && split != l.EvalSplit {
				continue // one evaluation split; a second is ignored
			}
			l.EvalSplit = split
			cols[i] = metricsColumn{split: "eval", metric: metric}
		}
		if metric != "loss" && l.Headline == "" {
			l.Headline = metric
			if metric == "acc" {
				l.Headline = "accuracy"
			}
		}
	}
	if _, ok := seen["epoch"]; !ok {
		return nil, l, errors.New("header: no epoch column")
	}
	_, l.HasSteps = seen["steps"]
	if l.Headline == "" {
		l.Headline = "loss"
	}
	return cols, l, nil
}

// ReadMetricsCSV reads a run's metrics file: columns epoch,
// train_<metric>, <split>_<metric> (the evaluation split: val, test, ...;
// metrics loss, accuracy and rmse), lr, seconds, eval_seconds and steps;
// other columns are ignored, empty cells are missing values. Epochs must
// increase from row to row.
func ReadMetricsCSV(r io.Reader) (MetricsLog, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return MetricsLog{}, fmt.Errorf("header: %w", err)
	}
	head = slices.Clone(head) // the reader reuses its record
	cols, l, err := parseMetricsHeader(head)
	if err != nil {
		return l, err
	}
	nan := math.NaN()
	for row := 2; ; row++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return l, err
		}
		e := Epoch{Train: metrics.Metrics{Loss: nan, Accuracy: nan, RMSE: nan}}
		for i, v := range rec {
			v = strings.TrimSpace(v)
			c := cols[i]
			if v == "" || (c.field == "" && c.split == "") {
				continue
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return l, fmt.Errorf("row %d, column %d (%s): %q is not a number", row, i+1, head[i], v)
			}
			switch {
			case c.field == "epoch":
				if x != math.Trunc(x) || x < 1 || x > 1e9 {
					return l, fmt.Errorf("row %d, column %d (epoch): %q is not an epoch number", row, i+1, v)
				}
				e.Epoch = int(x)
			case c.field == "steps":
				e.Steps = int(x)
			case c.field == "lr":
				e.LR = x
			case c.field == "seconds":
				e.Seconds = x
			case c.field == "eval_seconds":
				e.EvalSeconds = x
			case math.IsNaN(x) || math.IsInf(x, 0):
			case c.split == "train":
				*metricField(&e.Train, c.metric) = x
			default:
				if e.Eval == nil {
					e.Eval = &metrics.Metrics{Loss: nan, Accuracy: nan, RMSE: nan}
				}
				*metricField(e.Eval, c.metric) = x
			}
		}
		if e.Epoch == 0 {
			return l, fmt.Errorf("row %d: no epoch number", row)
		}
		if n := len(l.Epochs); n > 0 && e.Epoch <= l.Epochs[n-1].Epoch {
			return l, fmt.Errorf("row %d: epoch %d does not follow epoch %d", row, e.Epoch, l.Epochs[n-1].Epoch)
		}
		l.Epochs = append(l.Epochs, e)
	}
	return l, nil
}
