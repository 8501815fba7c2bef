package ps

import (
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

func adam(p []*tensor.Tensor) (optim.Optimizer, error) {
	return optim.NewAdam(p, optim.AdamOptions{LR: 0.01})
}

// trainSteps runs one worker over a fresh two-server Adam cluster: it
// sends init (and states, when not nil), takes the steps of gradients
// grad(sizes, 0, k) for k in [from, to), and returns the parameters and,
// when fetch, the servers' states afterwards.
func trainSteps(t *testing.T, sizes []int, init [][]float32, states []*ServerState, from, to int, fetch bool) ([][]float32, []*ServerState) {
	t.Helper()
	c := startClusterOpt(t, sizes, 2, 1, false, 0, adam)
	cl := c.dial(t, 0)
	defer cl.Close()
	if err := cl.Init(init); err != nil {
		t.Fatal(err)
	}
	if states != nil {
		if err := cl.LoadState(states); err != nil {
			t.Fatal(err)
		}
	}
	p := make([][]float32, len(sizes))
	for i, n := range sizes {
		p[i] = make([]float32, n)
	}
	if err := cl.Pull(0, p); err != nil {
		t.Fatal(err)
	}
	for k := from; k < to; k++ {
		if err := cl.Step(k-from, 0.01, grad(sizes, 0, k), p); err != nil {
			t.Fatal(err)
		}
	}
	if !fetch {
		return p, nil
	}
	st, err := cl.FetchState()
	if err != nil {
		t.Fatal(err)
	}
	return p, st
}

func sameParams(a, b [][]float32) bool {
	return slices.EqualFunc(a, b, func(x, y []float32) bool { return slices.Equal(x, y) })
}

// TestServerStateResumes: the servers' Adam state fetched after 3 steps,
// stored in a checkpoint's StateDict and read back, then loaded into fresh
// servers after the parameters, makes the next 3 steps bitwise those of an
// uninterrupted run of 6; fresh moments, or perturbed ones, do not.
func TestServerStateResumes(t *testing.T) {
	sizes := []int{300, 7, 130, 1}
	init := grad(sizes, 9, 9)
	want, _ := trainSteps(t, sizes, init, nil, 0, 6, false)
	mid, states := trainSteps(t, sizes, init, nil, 0, 3, true)
	if len(states) != 2 || states[0] == nil || states[1] == nil {
		t.Fatalf("FetchState gave %v, want two servers' states", states)
	}
	// Through a checkpoint's StateDict, beside a local optimizer's entries.
	st := &optim.StateDict{Optimizer: "Adam", Scalars: map[string]float64{"0.step": 1}}
	putStates(st, states)
	back, err := takeStates(st, []bool{true, true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := back[0].Scalars["0.step"]; !ok || len(back[0].Tensors) == 0 || len(back[0].Hypers) != 1 {
		t.Fatalf("server 0's state read back: %+v", back[0])
	}
	if _, err := takeStates(st, []bool{true, true, true}); err == nil || !strings.Contains(err.Error(), "server 2") {
		t.Errorf("a checkpoint without server 2's state: %v, want an error naming it", err)
	}
	got, _ := trainSteps(t, sizes, mid, back, 3, 6, false)
	if !sameParams(got, want) {
		t.Fatal("resumed with the servers' state: parameters differ from the uninterrupted run")
	}
	fresh, _ := trainSteps(t, sizes, mid, nil, 3, 6, false)
	if sameParams(fresh, want) {
		t.Fatal("resumed without the servers' state: the same parameters (the test cannot tell)")
	}
	for k, v := range back[1].Tensors {
		if strings.HasSuffix(k, "exp_avg") {
			v[0] *= 1.5
		}
	}
	perturbed, _ := trainSteps(t, sizes, mid, back, 3, 6, false)
	if sameParams(perturbed, want) {
		t.Fatal("resumed with a perturbed state: the same parameters")
	}
}

// TestServerStateRefused: only worker 0 may ask for the state, an
// asynchronous server refuses it, and a state of another layout fails the
// server.
func TestServerStateRefused(t *testing.T) {
	sizes := []int{100}
	c := startClusterOpt(t, sizes, 1, 2, true, 1, adam)
	w0, w1 := c.dial(t, 0), c.dial(t, 1)
	defer w1.Close()
	if err := w0.Init(grad(sizes, 0, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := w0.FetchState(); err == nil || !strings.Contains(err.Error(), "asynchronous") {
		t.Errorf("FetchState from an asynchronous server: %v, want a refusal", err)
	}
	w0.Abort()
	s := startClusterOpt(t, sizes, 1, 2, false, 0, adam)
	v0, v1 := s.dial(t, 0), s.dial(t, 1)
	defer v0.Abort()
	if _, err := v1.FetchState(); err == nil || !strings.Contains(err.Error(), "only worker 0") {
		t.Errorf("FetchState from worker 1: %v, want a refusal", err)
	}
	v1.Abort()
	s2 := startClusterOpt(t, sizes, 1, 1, false, 0, adam)
	u := s2.dial(t, 0)
	defer u.Abort()
	if err := u.Init(grad(sizes, 0, 0)); err != nil {
		t.Fatal(err)
	}
	bad := []*ServerState{{Hypers: []map[string]float64{{"lr": 0.01, "weight_decay": 0}, {"lr": 0.01}}}}
	if err := u.LoadState(bad); err != nil {
		t.Fatal(err)
	}
	p := [][]float32{make([]float32, 100)}
	if err := u.Pull(0, p); err == nil || !strings.Contains(err.Error(), "parameter groups") {
		t.Errorf("a state of two groups for one: the pull says %v, want the server's refusal", err)
	}
}
