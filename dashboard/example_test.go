package dashboard_test

import (
	"encoding/json"
	"fmt"

	"github.com/fathom-ml/fathom/dashboard"
)

// A board keeps every epoch and a bounded number of step points: past the
// bound, neighbouring steps merge into their mean.
func ExampleBoard() {
	b := dashboard.NewBoard(4) // at most 4 step points
	b.SetInfo(dashboard.RunInfo{Title: "demo", Epochs: 1})
	for step := 1; step <= 8; step++ {
		b.AddStep(dashboard.Step{Step: step, Epoch: 1, Loss: float64(step), T: float64(step)})
	}
	b.AddEpoch(dashboard.Epoch{Epoch: 1, Steps: 8, Train: map[string]float64{"loss": 4.5}, T: 9})
	b.Finish(nil)

	s := b.Snapshot()
	for _, p := range s.Steps {
		fmt.Printf("step %d: mean loss %.1f of %d steps\n", p.Step, p.Loss, p.N)
	}
	e, _ := json.Marshal(s.Epochs[0])
	fmt.Println(string(e))
	fmt.Println("done:", s.Status.Done)
	// Output:
	// step 4: mean loss 2.5 of 4 steps
	// step 8: mean loss 6.5 of 4 steps
	// {"epoch":1,"steps":8,"train":{"loss":4.5},"lr":0,"seconds":0,"eval_seconds":0,"t":9}
	// done: true
}
