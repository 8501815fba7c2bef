package modelfile

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/atomicfile"
	"github.com/fathom-ml/fathom/metrics"
)

// Predictions are a model's outputs for a table's rows.
type Predictions struct {
	Task metrics.Task
	// Classes names the classes (classification).
	Classes []string
	// Class holds each row's predicted class index and Probs its class
	// probabilities, row-major [rows × len(Classes)] (classification).
	Class []int64
	Probs []float32
	// Values holds each row's predicted number (regression).
	Values []float32
}

// Rows returns the number of predicted rows.
func (p *Predictions) Rows() int {
	if p.Task == metrics.Regression {
		return len(p.Values)
	}
	return len(p.Class)
}

// Table returns the predictions as a table: for classification, one
// probability column per class ("prob_<class>") and the predicted class as
// the label column "prediction"; for regression, the prediction as the
// numeric target column "prediction".
func (p *Predictions) Table() *data.Table {
	if p.Task == metrics.Regression {
		return &data.Table{Rows: len(p.Values), Cols: 0, X: []float32{}, LabelName: "prediction", Y: p.Values}
	}
	cols := make([]string, len(p.Classes))
	for i, c := range p.Classes {
		cols[i] = "prob_" + c
	}
	return &data.Table{Rows: len(p.Class), Cols: len(p.Classes), X: p.Probs, Columns: cols,
		LabelName: "prediction", Labels: p.Class, Classes: p.Classes}
}

// WriteCSV writes a header and one row per prediction: for
// classification the predicted class name and one probability column per
// class ("prediction,prob_<class>..."), for regression the predicted
// value ("prediction").
func (p *Predictions) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	f := func(v float32) string { return strconv.FormatFloat(float64(v), 'g', -1, 32) }
	if p.Task == metrics.Regression {
		cw.Write([]string{"prediction"})
		for _, v := range p.Values {
			cw.Write([]string{f(v)})
		}
	} else {
		c := len(p.Classes)
		head := []string{"prediction"}
		for _, name := range p.Classes {
			head = append(head, "prob_"+name)
		}
		cw.Write(head)
		rec := make([]string, c+1)
		for i, k := range p.Class {
			rec[0] = p.Classes[k]
			for j := range c {
				rec[j+1] = f(p.Probs[i*c+j])
			}
			cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSONLines writes one JSON object per row: {"prediction": class
// name, "probabilities": {class: p, ...}, "row": n} for classification,
// {"prediction": value, "row": n} for regression (rows count from 1).
func (p *Predictions) WriteJSONLines(w io.Writer) error {
	for i := range p.Rows() {
		var line map[string]any
		if p.Task == metrics.Regression {
			line = map[string]any{"row": i + 1, "prediction": p.Values[i]}
		} else {
			c := len(p.Classes)
			probs := map[string]float32{}
			for j, name := range p.Classes {
				probs[name] = p.Probs[i*c+j]
			}
			line = map[string]any{"row": i + 1, "prediction": p.Classes[p.Class[i]], "probabilities": probs}
		}
		b, err := json.Marshal(line)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes the predictions to path in the format its extension
// names: .csv (WriteCSV), .parquet, .parq or .pq (Table, as Parquet), or .jsonl
// or .json (WriteJSONLines). The file is written to a temporary name and
// renamed.
func (p *Predictions) WriteFile(path string) error {
	var b strings.Builder
	if data.IsParquetFile(path) {
		return data.WriteParquet(path, p.Table())
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".csv":
		if err := p.WriteCSV(&b); err != nil {
			return err
		}
	case ".jsonl", ".json":
		if err := p.WriteJSONLines(&b); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%s: unknown format %q (want .csv, .parquet or .jsonl)", path, ext)
	}
	return atomicfile.WriteBytes(path, []byte(b.String()))
}
