package archtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kernelDir is the one package that holds assembly; kernelGen is the one
// generator module that writes it.
const (
	kernelDir = "internal/kernel"
	kernelGen = "internal/kernel/_asm"
)

// walkTree calls fn for every file under the module root, skipping .git.
func walkTree(t *testing.T, fn func(rel string, path string)) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		fn(filepath.ToSlash(rel), path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAssemblyOnlyInKernel: every .s file of the module sits in
// internal/kernel, so the purego pass of .ci/run over internal/kernel and
// its callers covers every assembly kernel's fallback.
func TestAssemblyOnlyInKernel(t *testing.T) {
	n := 0
	walkTree(t, func(rel, _ string) {
		if !strings.HasSuffix(rel, ".s") {
			return
		}
		n++
		if filepath.ToSlash(filepath.Dir(rel)) != kernelDir {
			t.Errorf("%s: assembly outside %s (move the kernel there and keep a pure-Go fallback)", rel, kernelDir)
		}
	})
	if n == 0 {
		t.Fatalf("no .s file found under the module: is the walk rooted at the module?")
	}
}

// TestOneAvoModule: one go.mod in the tree requires avo, the generator
// module of internal/kernel, so every kernel is generated at one avo version.
func TestOneAvoModule(t *testing.T) {
	var withAvo []string
	walkTree(t, func(rel, path string) {
		if filepath.Base(rel) != "go.mod" {
			return
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "github.com/mmcloughlin/avo") {
			withAvo = append(withAvo, filepath.ToSlash(filepath.Dir(rel)))
		}
	})
	if len(withAvo) != 1 || withAvo[0] != kernelGen {
		t.Errorf("modules requiring avo: %v; want exactly [%s]", withAvo, kernelGen)
	}
}
