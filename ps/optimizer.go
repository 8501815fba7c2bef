package ps

import (
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

// Optimizer is a worker's stand-in for the optimizer that runs on the
// servers: Step pushes the parameters' gradients and pulls the updated
// parameters. The local optimizer it wraps only carries the learning rate
// (which a schedule drives and every push sends along) and zeroes the
// gradients; its own state holds no buffers. The servers' state (the
// moments) reaches a checkpoint through FetchState, which asks the
// synchronous servers for it between two steps, and goes back to them
// from LoadState when the job resumes (Start sends it after the
// parameters).
type Optimizer struct {
	local   optim.Optimizer
	c       *Client
	params  []*tensor.Tensor
	step    int
	grads   [][]float32
	vals    [][]float32
	restore []*ServerState // the servers' state to send in Start (LoadState)
}

// NewOptimizer returns the stand-in over params (the model's parameters in
// the order Plan was made from), talking through c.
func NewOptimizer(local optim.Optimizer, c *Client, params []*tensor.Tensor) *Optimizer {
	o := &Optimizer{local: local, c: c, params: params}
	o.grads = make([][]float32, len(params))
	o.vals = make([][]float32, len(params))
	for i, p := range params {
		o.vals[i] = p.Float32s()
	}
	return o
}

// Start sends worker 0's parameters to the servers (when init) and pulls
// the parameters of the first step into the model on every worker.
func (o *Optimizer) Start(init bool) error {
	if init {
		if err := o.c.Init(o.vals); err != nil {
			return err
		}
		if o.restore != nil {
			if err := o.c.LoadState(o.restore); err != nil {
				return err
			}
		}
	}
	o.restore = nil
	return o.c.Pull(o.step, o.vals)
}

// Step pushes this step's gradients with the learning rate of group 0 and
// pulls the parameters of the next step.
func (o *Optimizer) Step() error {
	for i, p := range o.params {
		o.grads[i] = nil
		if g := p.Grad(); g != nil {
			o.grads[i] = g.Float32s()
		}
	}
	err := o.c.Step(o.step, o.local.LR(0), o.grads, o.vals)
	o.step++
	return err
}

// Steps returns the number of steps pushed.
func (o *Optimizer) Steps() int { return o.step }

// ZeroGrad zeroes the gradients.
func (o *Optimizer) ZeroGrad() { o.local.ZeroGrad() }

// NumGroups returns the local optimizer's number of groups.
func (o *Optimizer) NumGroups() int { return o.local.NumGroups() }

// LR returns the learning rate of group i.
func (o *Optimizer) LR(i int) float64 { return o.local.LR(i) }

// SetLR sets the learning rate of group i; the next push carries it.
func (o *Optimizer) SetLR(i int, lr float64) { o.local.SetLR(i, lr) }

// State returns the local optimizer's state (no buffers); it does not ask
// the servers (FetchState does).
func (o *Optimizer) State() *optim.StateDict { return o.local.State() }

// FetchState returns the state a checkpoint holds: the local optimizer's
// and, under "server<s>/" keys, every server's optimizer state, asked for
// now (worker 0 between two steps; synchronous servers only).
func (o *Optimizer) FetchState() (*optim.StateDict, error) {
	states, err := o.c.FetchState()
	if err != nil {
		return nil, err
	}
	st := o.local.State()
	putStates(st, states)
	return st, nil
}

// LoadState loads a state written from FetchState: the local part into
// the local optimizer, the servers' parts kept for Start to send.
func (o *Optimizer) LoadState(s *optim.StateDict) error {
	want := make([]bool, len(o.c.conns))
	for i, sc := range o.c.conns {
		want[i] = sc != nil
	}
	states, err := takeStates(s, want)
	if err != nil {
		return err
	}
	if err := o.local.LoadState(s); err != nil {
		return err
	}
	o.restore = states
	return nil
}
