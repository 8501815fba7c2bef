package infer_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fathom-ml/fathom/infer"
)

// TestReport: Report hears of each partition starting, after each batch
// (rows growing to the partition's), and done; a re-run hears of each
// skipped.
func TestReport(t *testing.T) {
	m := testNet(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	writeParquet(t, filepath.Join(in, "a.parquet"), rowsFrame(0, 25))
	writeParquet(t, filepath.Join(in, "b.parquet"), rowsFrame(25, 7))
	parts, err := infer.ListPartitions([]string{in})
	if err != nil {
		t.Fatal(err)
	}
	pred, err := infer.NewNet(m, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []infer.PartitionReport
	opts := infer.Options{Out: filepath.Join(dir, "out"), BatchSize: 10, Report: func(r infer.PartitionReport) { got = append(got, r) }}
	if _, err := infer.Run(context.Background(), pred, parts, opts); err != nil {
		t.Fatal(err)
	}
	// a: start, 3 batches, done; b: start, 1 batch, done
	want := []struct {
		name, status string
		rows         int64
	}{{"a.parquet", "running", 0}, {"a.parquet", "running", 10}, {"a.parquet", "running", 20}, {"a.parquet", "running", 25},
		{"a.parquet", "done", 25}, {"b.parquet", "running", 0}, {"b.parquet", "running", 7}, {"b.parquet", "done", 7}}
	if len(got) != len(want) {
		t.Fatalf("reports %+v", got)
	}
	for i, w := range want {
		if g := got[i]; g.Name != w.name || g.Status != w.status || g.Rows != w.rows || g.Errors != 0 || g.Seconds < 0 {
			t.Errorf("report %d: %+v, want %+v", i, g, w)
		}
	}
	got = nil
	if _, err := infer.Run(context.Background(), pred, parts, opts); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Status != "skipped" || got[1].Status != "skipped" {
		t.Errorf("re-run reports %+v", got)
	}
}
