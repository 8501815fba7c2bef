package main

import (
	"os"
	"testing"
)

// TestWritesNoFiles runs the program in an empty working directory: it
// only prints, so the directory stays empty.
func TestWritesNoFiles(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	main()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left %s in the working directory", e.Name())
	}
}
