package dashboard

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"sync"
	"time"
)

// DefaultMaxSteps is the number of step points a Board keeps by default.
const DefaultMaxSteps = 20000

// A Board holds what a job has reported: its info, every epoch, its steps
// (downsampled), its workers and its end. It is safe for concurrent use.
type Board struct {
	mu         sync.Mutex
	start      time.Time
	info       RunInfo
	infoVer    int
	steps      *stepStore
	epochs     []Epoch
	workers    map[int]Worker
	workersVer int
	trials     map[int]Trial
	trialsVer  int
	parts      map[string]*versioned[Partition] // by name, each with the version it changed at
	partsOrder []string                         // names in the order they came
	partsVer   int
	status     Status
	changed    chan struct{} // closed on the next change; nil when nobody waits
}

// NewBoard returns an empty board that keeps at most maxSteps step points
// (DefaultMaxSteps when maxSteps <= 0); epochs are all kept.
func NewBoard(maxSteps int) *Board {
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	return &Board{start: time.Now(), steps: newStepStore(maxSteps), workers: map[int]Worker{}, trials: map[int]Trial{},
		parts: map[string]*versioned[Partition]{}}
}

// since returns the seconds from the start of the run to now.
func (b *Board) since() float64 { return time.Since(b.start).Seconds() }

// notify wakes the waiters; b.mu must be held.
func (b *Board) notify() {
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
}

// wait returns a channel closed at the board's next change.
func (b *Board) wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed == nil {
		b.changed = make(chan struct{})
	}
	return b.changed
}

// SetInfo records (or replaces) the job's description. A non-zero
// Started moves the board's clock to it.
func (b *Board) SetInfo(info RunInfo) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if info.Started.IsZero() {
		info.Started = b.start
	} else {
		b.start = info.Started
	}
	b.info = info
	b.infoVer++
	b.notify()
}

// AddStep records a training step. Steps must come in increasing Step
// order; one at or before the last is dropped.
func (b *Board) AddStep(p Step) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p.Step <= b.steps.last() {
		return
	}
	if p.T == 0 {
		p.T = b.since()
	}
	if b.info.StepsPerEpoch != p.Batches && p.Batches > 0 {
		b.info.StepsPerEpoch = p.Batches
		b.infoVer++
	}
	b.steps.add(p)
	b.notify()
}

// AddEpoch records a finished epoch.
func (b *Board) AddEpoch(e Epoch) {
	e.Train, e.Eval = finite(e.Train), finite(e.Eval)
	b.mu.Lock()
	defer b.mu.Unlock()
	if e.T == 0 {
		e.T = b.since()
	}
	b.steps.flush() // the curve reaches the epoch's end
	b.epochs = append(b.epochs, e)
	b.notify()
}

// SetWorker records the state of one rank of a distributed job; a zero
// LastSeen means now.
func (b *Board) SetWorker(w Worker) {
	if w.LastSeen.IsZero() {
		w.LastSeen = time.Now()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.workers[w.Rank] = w
	b.workersVer++
	b.notify()
}

// SetTrial records (or updates) a trial of a hyperparameter search; a
// non-finite Metric is dropped.
func (b *Board) SetTrial(t Trial) {
	if t.Metric != nil && (math.IsNaN(*t.Metric) || math.IsInf(*t.Metric, 0)) {
		t.Metric = nil
	}
	t.Params = append([]TrialParam(nil), t.Params...)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.trials[t.ID] = t
	b.trialsVer++
	b.notify()
}

func (b *Board) trialList() []Trial {
	ts := make([]Trial, 0, len(b.trials))
	for _, t := range b.trials {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].ID < ts[j].ID })
	return ts
}

// versioned is a value and the board version it last changed at.
type versioned[T any] struct {
	v   T
	ver int
}

// SetPartition records (or updates) a partition of a batch prediction,
// by name.
func (b *Board) SetPartition(p Partition) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.partsVer++
	if e, ok := b.parts[p.Name]; ok {
		e.v, e.ver = p, b.partsVer
	} else {
		b.parts[p.Name] = &versioned[Partition]{p, b.partsVer}
		b.partsOrder = append(b.partsOrder, p.Name)
	}
	b.notify()
}

// partitionsAfter returns the partitions changed after version ver, in
// the order they came.
func (b *Board) partitionsAfter(ver int) []Partition {
	var out []Partition
	for _, n := range b.partsOrder {
		if e := b.parts[n]; e.ver > ver {
			out = append(out, e.v)
		}
	}
	return out
}

// Finish records the end of the run: err nil for success.
func (b *Board) Finish(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.steps.flush()
	b.status = Status{Done: true, T: b.since()}
	if err != nil {
		b.status.Error = err.Error()
	}
	b.notify()
}

// finite returns m without its non-finite values (JSON has no NaN).
func finite(m map[string]float64) map[string]float64 {
	if m == nil {
		return nil
	}
	out := make(map[string]float64, len(m))
	for k, v := range m {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k] = v
		}
	}
	return out
}

// State is a snapshot of a board, as /api/state serves it.
type State struct {
	Info    RunInfo  `json:"info"`
	Epochs  []Epoch  `json:"epochs"`
	Steps   []Step   `json:"-"` // served as columns
	Workers []Worker `json:"workers"`
	Trials  []Trial  `json:"trials,omitempty"`
	// Partitions are those of a batch prediction, in the order they
	// started.
	Partitions []Partition `json:"partitions,omitempty"`
	Status     Status      `json:"status"`
}

// MarshalJSON writes the state with its steps as columns (stepColumns).
func (s State) MarshalJSON() ([]byte, error) {
	type plain State
	head, err := json.Marshal(plain(s))
	if err != nil {
		return nil, err
	}
	out := append(head[:len(head)-1], `,"steps":`...)
	out = appendStepColumns(out, s.Steps)
	return append(out, '}'), nil
}

// Snapshot returns a copy of everything on the board.
func (b *Board) Snapshot() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := State{Info: b.info, Epochs: append([]Epoch{}, b.epochs...), Steps: append([]Step{}, b.steps.after(-1)...),
		Workers: b.workerList(), Status: b.status}
	if len(b.trials) > 0 {
		s.Trials = b.trialList()
	}
	if len(b.parts) > 0 {
		s.Partitions = b.partitionsAfter(0)
	}
	if s.Info.Started.IsZero() {
		s.Info.Started = b.start
	}
	return s
}

func (b *Board) workerList() []Worker {
	ws := make([]Worker, 0, len(b.workers))
	for _, w := range b.workers {
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].Rank < ws[j].Rank })
	return ws
}

// cursor is what one event stream has sent so far.
type cursor struct {
	infoVer, epochs, workersVer, trialsVer int
	partsVer                               int
	lastStep                               int
	done                                   bool
}

func newCursor() cursor { return cursor{lastStep: -1} }

// event is one server-sent event: its name and JSON data.
type event struct {
	name string
	data []byte
}

// maxStepsPerEvent bounds the size of one "steps" event.
const maxStepsPerEvent = 5000

// news returns the events a stream at c has not sent and moves c past
// them: info, steps (in chunks), epochs, workers, trials, partitions,
// then the end.
func (b *Board) news(c *cursor) []event {
	b.mu.Lock()
	defer b.mu.Unlock()
	var evs []event
	add := func(name string, v any) {
		data, err := json.Marshal(v)
		if err == nil {
			evs = append(evs, event{name, data})
		}
	}
	if c.infoVer != b.infoVer {
		info := b.info
		if info.Started.IsZero() {
			info.Started = b.start
		}
		add("info", info)
		c.infoVer = b.infoVer
	}
	pts := b.steps.after(c.lastStep)
	for len(pts) > 0 {
		n := min(len(pts), maxStepsPerEvent)
		evs = append(evs, event{"steps", appendStepColumns(nil, pts[:n])})
		c.lastStep = pts[n-1].Step
		pts = pts[n:]
	}
	for ; c.epochs < len(b.epochs); c.epochs++ {
		add("epoch", b.epochs[c.epochs])
	}
	if c.workersVer != b.workersVer {
		add("workers", b.workerList())
		c.workersVer = b.workersVer
	}
	if c.trialsVer != b.trialsVer {
		add("trials", b.trialList())
		c.trialsVer = b.trialsVer
	}
	if c.partsVer != b.partsVer {
		// only the partitions changed since: a job may have many
		add("partitions", b.partitionsAfter(c.partsVer))
		c.partsVer = b.partsVer
	}
	if b.status.Done && !c.done {
		add("done", b.status)
		c.done = true
	}
	return evs
}

// appendStepColumns appends points as one JSON object of columns
// ({"step":[...],"loss":[...],...}): half the bytes of an array of
// objects, and the arrays the charts take. Non-finite values are null.
func appendStepColumns(buf []byte, pts []Step) []byte {
	buf = append(buf, '{')
	for i, c := range stepColumns {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, '"')
		buf = append(buf, c.name...)
		buf = append(buf, `":[`...)
		prec := 7
		if c.exact {
			prec = -1
		}
		for j, p := range pts {
			if j > 0 {
				buf = append(buf, ',')
			}
			if v := c.get(p); math.IsNaN(v) || math.IsInf(v, 0) {
				buf = append(buf, "null"...)
			} else {
				buf = strconv.AppendFloat(buf, v, 'g', prec, 64)
			}
		}
		buf = append(buf, ']')
	}
	return append(buf, '}')
}

// stepColumns are the columns appendStepColumns writes.
var stepColumns = []struct {
	name  string
	exact bool // an integer: every digit
	get   func(Step) float64
}{
	{"step", true, func(p Step) float64 { return float64(p.Step) }},
	{"epoch", true, func(p Step) float64 { return float64(p.Epoch) }},
	{"batch", true, func(p Step) float64 { return float64(p.Batch) }},
	{"batches", true, func(p Step) float64 { return float64(p.Batches) }},
	{"loss", false, func(p Step) float64 { return p.Loss }},
	{"lr", false, func(p Step) float64 { return p.LR }},
	{"samples_per_sec", false, func(p Step) float64 { return p.SamplesPerSec }},
	{"compute", false, func(p Step) float64 { return p.Compute }},
	{"comm", false, func(p Step) float64 { return p.Comm }},
	{"data", false, func(p Step) float64 { return p.Data }},
	{"t", false, func(p Step) float64 { return p.T }},
	{"n", true, func(p Step) float64 { return float64(p.N) }},
}
