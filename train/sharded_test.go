package train

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/nn"
)

// barrier is a reusable in-process barrier of n goroutines.
type barrier struct {
	mu         sync.Mutex
	cond       *sync.Cond
	n, waiting int
	round      int
}

func newBarrier(n int) *barrier {
	b := &barrier{n: n}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *barrier) wait() {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.round
	if b.waiting++; b.waiting == b.n {
		b.waiting, b.round = 0, b.round+1
		b.cond.Broadcast()
		return
	}
	for r == b.round {
		b.cond.Wait()
	}
}

// shardedLocal is a process of an in-process job whose processes each
// train their own model (their own part of the state): Local, with
// ShardedCheckpoints.
type shardedLocal struct {
	Local
	part, parts int
	b           *barrier
	barriers    *int // counted on part 0
}

func (s shardedLocal) IsMain() bool { return s.part == 0 }
func (s shardedLocal) Part() int    { return s.part }
func (s shardedLocal) Parts() int   { return s.parts }
func (s shardedLocal) Barrier() error {
	if s.part == 0 {
		*s.barriers++
	}
	s.b.wait()
	return nil
}

// TestShardedCheckpoints: with a ShardedCheckpoints strategy every process
// writes its own part of each checkpoint under the step's name, the main
// process commits the step in the manifest between two barriers, parts
// older than the checkpoint before are removed, and every process resumed
// from the manifest's step ends with the weights and history of a run
// never interrupted.
func TestShardedCheckpoints(t *testing.T) {
	const parts = 2
	trainT, testT := irisSplits(t, 5)
	setup := func(part int, ckpt string, epochs int, b *barrier, barriers *int) (*Trainer, *nn.Sequential) {
		m := irisMLP(t, uint64(9+part), true) // each part its own state
		tr, err := New(Options{Model: m, Optimizer: adam(t, m, 0.01), Epochs: epochs,
			Train:          loader(t, trainT, data.LoaderOptions{BatchSize: 16, Shuffle: true, Seed: 3}),
			Eval:           loader(t, testT, data.LoaderOptions{BatchSize: 64}),
			CheckpointPath: ckpt, CheckpointEvery: 5, Strategy: shardedLocal{part: part, parts: parts, b: b, barriers: barriers}})
		if err != nil {
			t.Fatal(err)
		}
		return tr, m
	}
	// fit runs every part's trainer, loading its part of the checkpoint
	// first when resume is set.
	fit := func(ckpt string, epochs int, resume bool) ([]*nn.Sequential, [][]epochLosses, int) {
		b, barriers := newBarrier(parts), 0
		models, hists := make([]*nn.Sequential, parts), make([][]epochLosses, parts)
		errs := make([]error, parts)
		var wg sync.WaitGroup
		for p := range parts {
			tr, m := setup(p, ckpt, epochs, b, &barriers)
			models[p] = m
			wg.Add(1)
			go func() {
				defer wg.Done()
				if resume {
					if errs[p] = tr.LoadCheckpoint(ckpt); errs[p] != nil {
						return
					}
				}
				h, err := tr.Fit(context.Background())
				for _, e := range h {
					hists[p] = append(hists[p], epochLosses{e.Train.Loss, e.Eval.Loss, e.Steps})
				}
				errs[p] = err
			}()
		}
		wg.Wait()
		for p, err := range errs {
			if err != nil {
				t.Fatalf("part %d: %v", p, err)
			}
		}
		return models, hists, barriers
	}
	wantModels, want, _ := fit("", 3, false)

	dir := t.TempDir()
	ckpt := filepath.Join(dir, "checkpoint.safetensors")
	_, _, barriers := fit(ckpt, 1, false)
	// 8 steps in epoch 1: checkpoints at step 5 and at the epoch's end.
	if barriers != 4 {
		t.Errorf("%d barriers for 2 checkpoints, want 4", barriers)
	}
	b, err := os.ReadFile(ManifestPath(ckpt))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Step != 8 || !slices.Equal(m.Parts, []string{"checkpoint.8.part0.safetensors", "checkpoint.8.part1.safetensors"}) {
		t.Fatalf("manifest %s, want step 8 and its two parts", b)
	}
	models, got, _ := fit(ckpt, 3, true)
	for p := range parts {
		if !slices.Equal(got[p], want[p]) {
			t.Errorf("part %d: resumed history %v, uninterrupted %v", p, got[p], want[p])
		}
		wp, gp := wantModels[p].NamedParameters(), models[p].NamedParameters()
		for i := range wp {
			if !slices.Equal(wp[i].Tensor.Float32s(), gp[i].Tensor.Float32s()) {
				t.Errorf("part %d: parameter %s differs after resume", p, wp[i].Name)
			}
		}
		// 24 steps: checkpoints at 8 (resumed from), 10, 15, 16, 20, 24;
		// left are the last one and the one before.
		files, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("checkpoint.*.part%d.safetensors", p)))
		wantFiles := []string{filepath.Join(dir, fmt.Sprintf("checkpoint.20.part%d.safetensors", p)), filepath.Join(dir, fmt.Sprintf("checkpoint.24.part%d.safetensors", p))}
		slices.Sort(files)
		if !slices.Equal(files, wantFiles) {
			t.Errorf("part %d: files %v left, want %v", p, files, wantFiles)
		}
	}
	if want[0][2] == want[1][2] {
		t.Error("the two parts trained the same model: the test cannot tell their parts apart")
	}
}

// epochLosses is what the test compares of an epoch.
type epochLosses struct {
	train, eval float64
	steps       int
}
