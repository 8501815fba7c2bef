package pipe

import (
	"fmt"
	"strings"
)

// Schedule is the order in which a stage runs the forward and backward
// passes of a batch's micro-batches.
type Schedule int

const (
	// GPipe runs the forward passes of all micro-batches, then their
	// backward passes in reverse order (Huang et al., "GPipe", NeurIPS
	// 2019): every stage holds the activations of all M micro-batches at
	// the turn.
	GPipe Schedule = iota
	// OneFOneB (1F1B, PipeDream-Flush: Narayanan et al., "Memory-Efficient
	// Pipeline-Parallel DNN Training", ICML 2021) runs K−1−s forward passes
	// on stage s to fill the pipeline, then alternates one forward and one
	// backward: stage s holds at most K−s micro-batches' activations. Same
	// bubble as GPipe, same gradients.
	OneFOneB
)

func (s Schedule) String() string {
	switch s {
	case GPipe:
		return "gpipe"
	case OneFOneB:
		return "1f1b"
	}
	return fmt.Sprintf("Schedule(%d)", int(s))
}

// ParseSchedule parses "gpipe" and "1f1b".
func ParseSchedule(s string) (Schedule, error) {
	switch strings.ToLower(s) {
	case "", "gpipe":
		return GPipe, nil
	case "1f1b":
		return OneFOneB, nil
	}
	return 0, fmt.Errorf("pipe: unknown schedule %q (want gpipe or 1f1b)", s)
}

// Op is one pass of one micro-batch on a stage.
type Op struct {
	Backward bool
	Micro    int
}

func (o Op) String() string {
	if o.Backward {
		return fmt.Sprintf("B%d", o.Micro)
	}
	return fmt.Sprintf("F%d", o.Micro)
}

// Ops returns stage's passes of a batch of micro micro-batches over stages
// stages, in the order sched runs them.
func Ops(sched Schedule, stages, micro, stage int) []Op {
	ops := make([]Op, 0, 2*micro)
	if sched == GPipe {
		for m := range micro {
			ops = append(ops, Op{Micro: m})
		}
		for m := micro - 1; m >= 0; m-- {
			ops = append(ops, Op{Backward: true, Micro: m})
		}
		return ops
	}
	warm := min(stages-1-stage, micro)
	for m := range warm {
		ops = append(ops, Op{Micro: m})
	}
	for i := 0; warm+i < micro; i++ {
		ops = append(ops, Op{Micro: warm + i}, Op{Backward: true, Micro: i})
	}
	for m := micro - warm; m < micro; m++ {
		ops = append(ops, Op{Backward: true, Micro: m})
	}
	return ops
}

// IdealBubble is the fraction of a pipeline step a stage idles when every
// pass of every stage takes the same time: (K−1)/(M+K−1).
func IdealBubble(stages, micro int) float64 {
	return float64(stages-1) / float64(micro+stages-1)
}

// Timeline is a simulated step (Simulate).
type Timeline struct {
	// Makespan is the step's length; Busy[s] the time stage s computed.
	Makespan float64
	Busy     []float64
	// PeakLive[s] is the largest number of micro-batches whose forward
	// pass stage s has run and whose backward pass it has not: the
	// activations it holds at once.
	PeakLive []int
	// Start[s] lists the start times of stage s's passes, in Ops order.
	Start [][]float64
}

// Bubble returns the mean idle fraction of the stages.
func (t Timeline) Bubble() float64 {
	busy := 0.0
	for _, b := range t.Busy {
		busy += b
	}
	return 1 - busy/(float64(len(t.Busy))*t.Makespan)
}

// Simulate runs the schedule on stages stages without a network: a
// forward pass takes fwd and a backward pass bwd on every stage, F(s, m)
// waits for F(s−1, m), B(s, m) for B(s+1, m), and transfers are free. It
// returns an error if the schedule deadlocks (never, for GPipe and 1F1B).
func Simulate(sched Schedule, stages, micro int, fwd, bwd float64) (Timeline, error) {
	if stages < 1 || micro < 1 {
		return Timeline{}, fmt.Errorf("pipe: want at least one stage and one micro-batch, got %d and %d", stages, micro)
	}
	ops := make([][]Op, stages)
	for s := range ops {
		ops[s] = Ops(sched, stages, micro, s)
	}
	fEnd := make([][]float64, stages)
	bEnd := make([][]float64, stages)
	for s := range stages {
		fEnd[s] = make([]float64, micro)
		bEnd[s] = make([]float64, micro)
		for m := range micro {
			fEnd[s][m], bEnd[s][m] = -1, -1
		}
	}
	tl := Timeline{Busy: make([]float64, stages), PeakLive: make([]int, stages), Start: make([][]float64, stages)}
	next := make([]int, stages)
	free := make([]float64, stages)
	live := make([]int, stages)
	for remaining := stages * 2 * micro; remaining > 0; {
		progressed := false
		for s := range stages {
			for next[s] < len(ops[s]) {
				op := ops[s][next[s]]
				ready := free[s]
				if !op.Backward {
					if s > 0 {
						if fEnd[s-1][op.Micro] < 0 {
							break
						}
						ready = max(ready, fEnd[s-1][op.Micro])
					}
				} else if s < stages-1 {
					if bEnd[s+1][op.Micro] < 0 {
						break
					}
					ready = max(ready, bEnd[s+1][op.Micro])
				}
				d := fwd
				if op.Backward {
					d = bwd
				}
				tl.Start[s] = append(tl.Start[s], ready)
				free[s] = ready + d
				tl.Busy[s] += d
				if op.Backward {
					bEnd[s][op.Micro] = free[s]
					live[s]--
				} else {
					fEnd[s][op.Micro] = free[s]
					live[s]++
					tl.PeakLive[s] = max(tl.PeakLive[s], live[s])
				}
				tl.Makespan = max(tl.Makespan, free[s])
				next[s]++
				remaining--
				progressed = true
			}
		}
		if !progressed {
			return tl, fmt.Errorf("pipe: schedule %v deadlocks with %d stages and %d micro-batches", sched, stages, micro)
		}
	}
	return tl, nil
}
