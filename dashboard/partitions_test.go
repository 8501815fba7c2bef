package dashboard

import (
	"encoding/json"
	"testing"
)

// TestPartitions: partitions are kept by name in the order they came; an
// event stream sends each change once, only what changed since its last
// send; a snapshot and a restored board hold them all.
func TestPartitions(t *testing.T) {
	b := NewBoard(0)
	c := newCursor()
	sent := func() []Partition {
		var out []Partition
		for _, e := range b.news(&c) {
			if e.name == "partitions" {
				var ps []Partition
				if err := json.Unmarshal(e.data, &ps); err != nil {
					t.Fatal(err)
				}
				out = append(out, ps...)
			}
		}
		return out
	}
	b.SetPartition(Partition{Name: "a", Status: "running"})
	b.SetPartition(Partition{Name: "b", Status: "running", Rank: 1})
	if got := sent(); len(got) != 2 || got[0].Name != "a" || got[1].Rank != 1 {
		t.Fatalf("first send %+v", got)
	}
	if got := sent(); len(got) != 0 {
		t.Errorf("nothing changed, sent %+v", got)
	}
	b.SetPartition(Partition{Name: "a", Status: "done", Rows: 10})
	if got := sent(); len(got) != 1 || got[0].Name != "a" || got[0].Rows != 10 {
		t.Errorf("after a's update, sent %+v", got)
	}
	s := b.Snapshot()
	if len(s.Partitions) != 2 || s.Partitions[0].Status != "done" || s.Partitions[1].Name != "b" {
		t.Errorf("snapshot %+v", s.Partitions)
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if r := Restore(back, 0).Snapshot(); len(r.Partitions) != 2 || r.Partitions[0].Rows != 10 {
		t.Errorf("restored %+v", r.Partitions)
	}
}
