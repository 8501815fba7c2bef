package main

import (
	"errors"
	"testing"

	"github.com/fathom-ml/fathom/launch"
)

// TestRunJSONCulprit: the --json summary blames the rank the first failed
// worker named lost, and marks a stopped worker.
func TestRunJSONCulprit(t *testing.T) {
	res := launch.Result{
		Workers: []launch.WorkerResult{{Rank: 0, ExitCode: 1}, {Rank: 1, ExitCode: -1, Stopped: true}},
		Failures: []launch.WorkerResult{{Rank: 0, ExitCode: 1,
			StderrTail: []string{"comm: rank 0: allreduce: lost rank 1 (detected by rank 0: rank 1 has not been heard from for 15s (stopped or hung?))"}}},
	}
	j := runJSON(res, errors.New("failed"))
	if j.Culprit == nil || *j.Culprit != 1 || !j.Workers[1].Stopped || j.Workers[0].Stopped {
		t.Errorf("culprit %v, workers %+v; want culprit 1, rank 1 stopped", j.Culprit, j.Workers)
	}
	if j := runJSON(launch.Result{Workers: res.Workers[:1]}, nil); j.Culprit != nil {
		t.Errorf("culprit %d on success", *j.Culprit)
	}
}
