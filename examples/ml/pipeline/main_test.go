package main

import "testing"

// TestRun runs the example in one process.
func TestRun(t *testing.T) {
	if err := run(); err != nil {
		t.Fatal(err)
	}
}
