package train

import "github.com/fathom-ml/fathom/optim"

// StateFetcher is an optimizer whose state lives elsewhere (a
// *ps.Optimizer: the parameter servers hold the moments). A checkpoint
// holds FetchState's answer instead of State's; an error fails the
// checkpoint. LoadState takes the state back as usual.
type StateFetcher interface {
	FetchState() (*optim.StateDict, error)
}

// checkpointState returns the optimizer state a checkpoint holds.
func checkpointState(o optim.Optimizer) (*optim.StateDict, error) {
	if f, ok := o.(StateFetcher); ok {
		return f.FetchState()
	}
	return o.State(), nil
}
