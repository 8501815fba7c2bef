package trials

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/fathom-ml/fathom/internal/atomicfile"
)

// SortByID orders results by trial ID.
func SortByID(rs []Result) {
	slices.SortFunc(rs, func(a, b Result) int { return a.ID - b.ID })
}

// Best returns the index in rs of the best completed trial (status done
// with a finite metric; ties go to the lower ID), or -1.
func Best(rs []Result, largerBetter bool) int {
	best := -1
	for i, r := range rs {
		if r.Status != Done || math.IsNaN(r.Metric) || math.IsInf(r.Metric, 0) {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := rs[best]
		better := r.Metric < b.Metric
		if largerBetter {
			better = r.Metric > b.Metric
		}
		if better || (r.Metric == b.Metric && r.ID < b.ID) {
			best = i
		}
	}
	return best
}

// jsonValue writes a param's YAML text as a JSON number when it is one,
// else as a string.
func jsonValue(s string) json.RawMessage {
	if v, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
		b, _ := json.Marshal(v)
		return b
	}
	b, _ := json.Marshal(s)
	return b
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Row returns r as a JSON object for the results file: trial, params (in
// the order searched; numbers as numbers), metric (null when not
// finite), epochs, status, seconds, rank, model, extra figures, error.
func (r Result) Row(metricName string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"trial":`)
	b.WriteString(strconv.Itoa(r.ID))
	b.WriteString(`,"params":{`)
	for i, p := range r.Params {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.Key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(jsonValue(p.Value))
	}
	b.WriteString("}")
	rest := struct {
		MetricName string              `json:"metric_name"`
		Metric     *float64            `json:"metric"`
		Epochs     int                 `json:"epochs"`
		Status     Status              `json:"status"`
		Seconds    float64             `json:"seconds"`
		Rank       int                 `json:"rank"`
		Model      string              `json:"model,omitempty"`
		Weights    string              `json:"weights_sha256,omitempty"`
		Extra      map[string]*float64 `json:"extra,omitempty"`
		Error      string              `json:"error,omitempty"`
	}{metricName, finite(r.Metric), r.Epochs, r.Status, r.Seconds, r.Rank, r.Model, r.Weights, nil, r.Error}
	if len(r.Extra) > 0 {
		rest.Extra = map[string]*float64{}
		for k, v := range r.Extra {
			rest.Extra[k] = finite(v)
		}
	}
	tail, err := json.Marshal(rest)
	if err != nil {
		return nil, err
	}
	b.WriteByte(',')
	b.Write(tail[1:])
	return b.Bytes(), nil
}

// wire is a Result as it crosses the job's store between ranks.
type wire struct {
	ID      int                `json:"id"`
	Params  []KV               `json:"params"`
	Metric  *float64           `json:"metric"`
	Epochs  int                `json:"epochs"`
	Status  Status             `json:"status"`
	Seconds float64            `json:"seconds"`
	Rank    int                `json:"rank"`
	Model   string             `json:"model"`
	Extra   map[string]float64 `json:"extra"`
	Weights string             `json:"weights"`
	Error   string             `json:"error"`
}

func encodeResult(r Result) ([]byte, error) {
	extra := map[string]float64{}
	for k, v := range r.Extra {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			extra[k] = v
		}
	}
	return json.Marshal(wire{r.ID, r.Params, finite(r.Metric), r.Epochs, r.Status, r.Seconds, r.Rank, r.Model, extra, r.Weights, r.Error})
}

func decodeResult(b []byte) (Result, error) {
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return Result{}, err
	}
	r := Result{ID: w.ID, Params: w.Params, Metric: math.NaN(), Epochs: w.Epochs, Status: w.Status, Seconds: w.Seconds,
		Rank: w.Rank, Model: w.Model, Extra: w.Extra, Weights: w.Weights, Error: w.Error}
	if w.Metric != nil {
		r.Metric = *w.Metric
	}
	return r, nil
}

// extraKeys returns the extra figures' names over all results, sorted.
func extraKeys(rs []Result) []string {
	set := map[string]bool{}
	for _, r := range rs {
		for k := range r.Extra {
			set[k] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// paramKeys returns the searched keys in the order they first appear
// in rs.
func paramKeys(rs []Result) []string {
	var keys []string
	seen := map[string]bool{}
	for _, r := range rs {
		for _, p := range r.Params {
			if !seen[p.Key] {
				seen[p.Key] = true
				keys = append(keys, p.Key)
			}
		}
	}
	return keys
}

// WriteCSV writes the results table: trial, one column per searched key,
// the metric (named metricName), epochs, status, seconds, rank, the extra
// figures and the error.
func WriteCSV(path string, rs []Result, metricName string) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		keys, extra := paramKeys(rs), extraKeys(rs)
		head := append([]string{"trial"}, keys...)
		head = append(head, metricName, "epochs", "status", "seconds", "rank")
		head = append(head, extra...)
		cw.Write(append(head, "error"))
		num := func(v float64) string {
			if math.IsNaN(v) {
				return ""
			}
			return strconv.FormatFloat(v, 'g', -1, 64)
		}
		for _, r := range rs {
			row := []string{strconv.Itoa(r.ID)}
			for _, k := range keys {
				v := ""
				for _, p := range r.Params {
					if p.Key == k {
						v = p.Value
					}
				}
				row = append(row, v)
			}
			row = append(row, num(r.Metric), strconv.Itoa(r.Epochs), string(r.Status),
				strconv.FormatFloat(r.Seconds, 'f', 3, 64), strconv.Itoa(r.Rank))
			for _, k := range extra {
				v, ok := r.Extra[k]
				if !ok {
					v = math.NaN()
				}
				row = append(row, num(v))
			}
			cw.Write(append(row, r.Error))
		}
		cw.Flush()
		return cw.Error()
	})
}

// WriteJSONL writes one JSON object per result (see Result.Row).
func WriteJSONL(path string, rs []Result, metricName string) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		for _, r := range rs {
			b, err := r.Row(metricName)
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
				return err
			}
		}
		return nil
	})
}
