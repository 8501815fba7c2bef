package deploy

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/train/job"
)

// TestPSJobManifest: the parameter-server Job's config parses, names
// server ranks that exist in a world of completions × -n processes, one
// server per pod, and leaves rank 0 a worker.
func TestPSJobManifest(t *testing.T) {
	objs := readObjects(t, filepath.Join("kubernetes", "fathom-ps-job.yaml"))
	var conf string
	var js jobSpec
	for _, o := range objs {
		switch o.Kind {
		case "ConfigMap":
			conf = o.Data["train.yaml"]
		case "Job":
			decodeSpec(t, o, &js)
		}
	}
	if conf == "" || js.Completions == nil || len(js.Template.Spec.Containers) != 1 {
		t.Fatal("want a ConfigMap with train.yaml and a Job with one container")
	}
	c, err := job.ParseConfig([]byte(conf), "train.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	procs := 0
	for _, a := range js.Template.Spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(a, "-n="); ok {
			procs, _ = strconv.Atoi(strings.Fields(v)[0])
		}
	}
	nodes := *js.Completions
	d := c.Distributed
	if d.Strategy != "ps" || procs < 2 || len(d.ServerRanks) != nodes {
		t.Fatalf("strategy %q, %d processes per pod, server ranks %v: want ps and one server on each of %d pods", d.Strategy, procs, d.ServerRanks, nodes)
	}
	for pod := range nodes {
		n := 0
		for _, r := range d.ServerRanks {
			if r/procs == pod {
				n++
			}
		}
		if n != 1 {
			t.Errorf("pod %d runs %d servers, want 1", pod, n)
		}
	}
	if slices.Contains(d.ServerRanks, 0) {
		t.Error("rank 0 must be a worker")
	}
}
