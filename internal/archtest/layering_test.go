// Package archtest checks the project's import graph: layers point down,
// and the packages that serving and batch inference build on stay free of
// the training job.
package archtest

import (
	"fmt"
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/fathom-ml/fathom"

// floors orders the module's packages: a package may import only packages
// on a lower floor (or, for packages on floor 0, nothing of the module but
// other floor-0 leaves listed in leafDeps). A package missing here fails
// the test: place every new package on a floor when adding it. Prefixes
// ending in "/" cover a whole subtree.
var floors = map[string]int{
	"internal/": 0, "safetensors": 0, "metrics": 0, "comm/auth": 0, "comm/sched": 0,
	"internal/kernel":      1, // on internal/parallel and internal/cpu*
	"internal/config":      1, // the one config layer of train, ml fit and tune: on internal/yamltree
	"internal/parquetpage": 0, // Parquet pages on plain slices: headers, dictionaries, levels, the mapped-file walker (data builds on it)
	"tensor":               2, "comm/store": 1, "launch": 2,
	"launch/rdzv": 1, "launch/rdzv/rdzvtest": 0, // the etcd rendezvous and its test server
	"tensor/gradcheck": 3, "comm": 3, "nn": 3, "optim": 3, "data": 3,
	"runlog":          3, // the run directory's files and records: on metrics and internal/atomicfile
	"comm/tensorcomm": 4, "comm/commtest": 4, "modelfile": 4,
	"runlog/plot":       4, // the binary's only plotting code (curves, timelines, scatters): standard library only
	"comm/workqueue":    2, // the one work queue, in process and over comm/store (infer and trials share it)
	"comm/join":         4, // joining a job: distenv, the comm group, the store under the restart prefix
	"launch/launchflag": 3, // `fathom run`'s flags into a launch.Config
	"ddp":               4, // on tensor, nn and comm; train builds its Strategy on it
	"ps":                4, // parameter servers: on comm/auth, optim, tensor; train builds its Strategy on it
	"pipe":              4, // pipeline stages: on comm, nn, tensor
	"ml":                4, // on data, comm, optim, safetensors, metrics, internal/kernel
	"ml/mltest":         5, "ml/feature": 5, "ml/linear": 5, "ml/bayes": 5, "ml/glm": 5, "ml/mlp": 5, "ml/eval": 5, "ml/tune": 5, "ml/recommend": 5,
	"ml/cluster": 5, "ml/decomp": 5,
	"ml/mljob":  6, // the YAML config behind `fathom ml`: every stage type
	"serve":     5, // the inference server: on modelfile, never the training job
	"infer":     5, // batch inference: on modelfile, ml, data and comm/store, never the training job
	"train":     5,
	"train/job": 6,
	"onnx":      5, // ONNX export and import: on modelfile and nn, registered as a modelfile format
	"trials":    5, // fathom tune's search: trials, queue (in process or over the job store), ASHA, results table and plot
	"dashboard": 4, // the live page of a job: plain events, no trainer (train/job feeds it)
	"quant":     4, // post-training quantization of an nn model: observers, layer swap
	"prune":     4, // pruning on nn, optim and tensor; train/job drives it
	"examples/": 7, "deploy": 7,

	// The harnesses and front ends the CLI calls, and the CLI above them.
	"bench":          7, // fathom bench's harnesses: on train/job, ml/mljob, comm, launch and the kernels
	"trials/tunejob": 7, // fathom tune of train and ml fit configs: on trials, train/job and ml/mljob
	"cmd/":           8,
}

// forbidden lists imports, direct or through any module package, that a
// package must never reach.
var forbidden = []struct {
	pkg     string   // the package and its subpackages
	except  []string // subpackages the rule leaves out
	deep    bool     // through module packages too, not only direct imports
	imports []string
	why     string
}{
	{"nn", nil, false, []string{"modelfile", "safetensors", "internal/kernel", "internal/parallel"},
		"nn builds on tensor alone and knows nothing of files"},
	{"modelfile", nil, true, []string{"train", "train/job", "runlog", "gopkg.in/yaml.v3", "gonum.org/v1/plot", "github.com/spf13/cobra"},
		"serving and batch inference load models through modelfile without the training job"},
	{"metrics", nil, true, []string{"train", "tensor"}, "metrics work on plain slices"},
	{"comm", []string{"comm/tensorcomm", "comm/commtest"}, true, []string{"tensor", "nn"}, "the collective core runs on plain slices"},
	{"serve", nil, true, []string{"train", "train/job", "runlog"}, "serving never imports the training job"},
	{"infer", nil, true, []string{"train", "train/job", "runlog"}, "batch inference never imports the training job"},
	{"cmd/fathom", nil, true, []string{"gonum.org/v1/plot"},
		"the binary draws with runlog/plot alone (the stand-alone tools under internal/tools are modules of their own)"},
	{"runlog/plot", nil, true, []string{"gonum.org/v1/plot"}, "the figures are drawn with the standard library"},
	{"internal/parquetpage", nil, true, []string{"github.com/apache/arrow-go"},
		"the page decoding works on plain slices: arrow-go's types stay inside data"},
}

type graph map[string][]string // module-relative package → its imports (module-relative or external paths)

func loadGraph(t *testing.T) graph {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	g := graph{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
			return filepath.SkipDir // a module of its own, outside fathom's build
		}
		p, err := build.Default.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		var imps []string
		for _, imp := range p.Imports {
			if r, ok := strings.CutPrefix(imp, module+"/"); ok {
				imp = r
			} else if !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
				continue // standard library
			}
			imps = append(imps, imp)
		}
		g[rel] = imps
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(g) < 10 {
		t.Fatalf("found only %d packages under %s", len(g), root)
	}
	return g
}

// floor returns the floor of a module package and whether it has one: the
// longest matching entry of floors wins.
func floor(pkg string) (int, bool) {
	best, level, found := -1, 0, false
	for k, v := range floors {
		match := k == pkg || (strings.HasSuffix(k, "/") && strings.HasPrefix(pkg, k))
		if match && len(k) > best {
			best, level, found = len(k), v, true
		}
	}
	return level, found
}

func TestFloors(t *testing.T) {
	g := loadGraph(t)
	pkgs := make([]string, 0, len(g))
	for p := range g {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		fp, ok := floor(p)
		if !ok {
			t.Errorf("package %s has no floor in archtest's table: place it", p)
			continue
		}
		for _, imp := range g[p] {
			if _, internal := g[imp]; !internal {
				continue
			}
			fi, ok := floor(imp)
			if !ok {
				continue // reported on its own
			}
			if fi > fp || (fi == fp && fp > 0) {
				t.Errorf("%s (floor %d) imports %s (floor %d): layers point down", p, fp, imp, fi)
			}
		}
	}
}

// TestFloorsNamePackages: every entry of the floor table names a package
// that exists (an entry ending in "/" at least one package under it), so
// the table cannot keep floors for packages moved or removed.
func TestFloorsNamePackages(t *testing.T) {
	g := loadGraph(t)
	keys := make([]string, 0, len(floors))
	for k := range floors {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.HasSuffix(k, "/") {
			found := false
			for p := range g {
				found = found || strings.HasPrefix(p, k)
			}
			if !found {
				t.Errorf("floor table entry %q: no package under it", k)
			}
			continue
		}
		if _, ok := g[k]; !ok {
			t.Errorf("floor table entry %q: no such package", k)
		}
	}
}

// reach returns every import reachable from pkg through module packages.
func (g graph) reach(pkg string) map[string]bool {
	seen := map[string]bool{}
	var visit func(string)
	visit = func(p string) {
		for _, imp := range g[p] {
			if !seen[imp] {
				seen[imp] = true
				visit(imp)
			}
		}
	}
	visit(pkg)
	return seen
}

func TestForbiddenImports(t *testing.T) {
	g := loadGraph(t)
	for _, rule := range forbidden {
		for p := range g {
			if (p != rule.pkg && !strings.HasPrefix(p, rule.pkg+"/")) || slices.Contains(rule.except, p) {
				continue
			}
			reached := map[string]bool{}
			if rule.deep {
				reached = g.reach(p)
			} else {
				for _, imp := range g[p] {
					reached[imp] = true
				}
			}
			for _, bad := range rule.imports {
				for imp := range reached {
					if imp == bad || strings.HasPrefix(imp, bad+"/") {
						t.Errorf("%s reaches %s: %s", p, imp, rule.why)
					}
				}
			}
		}
	}
}

// aboveTheJob are the packages below the command line that drive the
// YAML job runner: the benchmark harnesses and the tuning front end.
var aboveTheJob = []string{"bench", "trials/tunejob"}

// TestOnlyTheJobImportsTrain: below the command line, the example
// programs and the packages that drive the job, only the YAML job runner
// builds on the trainer.
func TestOnlyTheJobImportsTrain(t *testing.T) {
	g := loadGraph(t)
	for p, imps := range g {
		if strings.HasPrefix(p, "cmd/") || strings.HasPrefix(p, "examples/") || p == "train/job" || slices.Contains(aboveTheJob, p) {
			continue
		}
		for _, imp := range imps {
			if imp == "train/job" || (imp == "train" && !strings.HasPrefix(p, "train/")) {
				t.Errorf("%s imports %s", p, imp)
			}
		}
	}
}

// TestGraphIsRead guards the test itself: the graph it checks must hold
// the edges everyone knows are there.
func TestGraphIsRead(t *testing.T) {
	g := loadGraph(t)
	for _, e := range [][2]string{{"nn", "tensor"}, {"tensor", "internal/kernel"}, {"modelfile", "safetensors"}, {"cmd/fathom", "train/job"},
		{"data", "internal/parquetpage"}, {"data", "github.com/apache/arrow-go/v18/parquet"}} {
		if !slices.Contains(g[e[0]], e[1]) {
			t.Errorf("%s does not import %s: the import graph was not read right", e[0], e[1])
		}
	}
}
