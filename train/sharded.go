package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/internal/atomicfile"
	"github.com/fathom-ml/fathom/modelfile"
)

// ShardedCheckpoints is a Strategy whose processes each hold a part of the
// training state that no other holds (a pipeline's stages; fully sharded
// or tensor-parallel strategies), so every process writes its own part of
// a checkpoint:
//
//   - every process writes its part under a name with the optimizer step
//     (checkpoint.<step>.part<rank>.safetensors beside the checkpoint
//     path), with its own model, optimizer, random streams and metric
//     sums;
//   - Barrier; the main process then replaces checkpoint.manifest.json
//     (atomically), which names the step: from then on the checkpoint is
//     committed;
//   - Barrier; every process removes its parts older than the previous
//     checkpoint (a process killed while writing leaves the manifest
//     naming the previous step, whose parts are still there).
//
// A resumed run reads the step the manifest names and every process loads
// its part of it. The processes must checkpoint at the same points: at the
// end of every epoch and every CheckpointEvery steps, but not when Fit is
// cancelled (the processes stop at different steps).
type ShardedCheckpoints interface {
	Strategy
	// Part is this process's part (its rank) of Parts.
	Part() int
	Parts() int
	// Barrier returns when every process has called it.
	Barrier() error
}

// manifest is the content of checkpoint.manifest.json.
type manifest struct {
	Step  int      `json:"step"`
	Parts []string `json:"parts"` // file names beside the manifest, by part
}

// ManifestPath returns the manifest of the sharded checkpoints at path.
func ManifestPath(path string) string { return shardedBase(path) + ".manifest.json" }

// shardedBase is path without its extension.
func shardedBase(path string) string { return strings.TrimSuffix(path, filepath.Ext(path)) }

// partPath names part of the checkpoint of step at path.
func partPath(path string, step, part int) string {
	return fmt.Sprintf("%s.%d.part%d%s", shardedBase(path), step, part, filepath.Ext(path))
}

// ResumeFile returns the file whose presence says a checkpoint at path
// exists: the manifest with a ShardedCheckpoints strategy, else path.
func (t *Trainer) ResumeFile(path string) string {
	if _, ok := t.opts.Strategy.(ShardedCheckpoints); ok {
		return ManifestPath(path)
	}
	return path
}

// saveSharded writes this process's part of the checkpoint c and commits
// it as described at ShardedCheckpoints.
func (t *Trainer) saveSharded(sc ShardedCheckpoints, path string, c *modelfile.Checkpoint) error {
	step, part := t.globalStep, sc.Part()
	prev := -1 // the committed step (read before the main process may replace it)
	if m, err := readManifest(path); err == nil {
		prev = m.Step
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := modelfile.WriteCheckpoint(partPath(path, step, part), c); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := sc.Barrier(); err != nil {
		return fmt.Errorf("checkpoint at step %d: %w", step, err)
	}
	if sc.IsMain() {
		m := manifest{Step: step}
		for p := range sc.Parts() {
			m.Parts = append(m.Parts, filepath.Base(partPath(path, step, p)))
		}
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		if err := atomicfile.WriteBytes(ManifestPath(path), append(b, '\n')); err != nil {
			return fmt.Errorf("checkpoint manifest: %w", err)
		}
	}
	if err := sc.Barrier(); err != nil {
		return fmt.Errorf("checkpoint at step %d: %w", step, err)
	}
	if prev >= 0 {
		removeParts(path, part, min(prev, step))
	}
	return nil
}

// removeParts removes the parts of process part older than step.
func removeParts(path string, part, step int) {
	base, ext := shardedBase(path), filepath.Ext(path)
	files, _ := filepath.Glob(base + ".*.part" + strconv.Itoa(part) + ext)
	for _, f := range files {
		s := strings.TrimSuffix(strings.TrimPrefix(f, base+"."), ".part"+strconv.Itoa(part)+ext)
		if n, err := strconv.Atoi(s); err == nil && n < step {
			os.Remove(f)
		}
	}
}

// readManifest reads the manifest of the sharded checkpoints at path.
func readManifest(path string) (*manifest, error) {
	b, err := os.ReadFile(ManifestPath(path))
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestPath(path), err)
	}
	return &m, nil
}

// loadSharded loads this process's part of the checkpoint the manifest at
// path names.
func (t *Trainer) loadSharded(sc ShardedCheckpoints, path string) error {
	m, err := readManifest(path)
	if err != nil {
		return err
	}
	if len(m.Parts) != sc.Parts() {
		return fmt.Errorf("%s: a checkpoint of %d parts, the job has %d", ManifestPath(path), len(m.Parts), sc.Parts())
	}
	p := filepath.Join(filepath.Dir(path), m.Parts[sc.Part()])
	c, err := modelfile.ReadCheckpoint(p)
	if err != nil {
		return err
	}
	return t.restore(p, c)
}
