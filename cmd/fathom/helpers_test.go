package main

import (
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// captureStdout runs f with os.Stdout redirected and returns what it
// printed. The --json flag is set for the call when asJSON is true.
func captureStdout(t *testing.T, asJSON bool, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old, oldJSON := os.Stdout, jsonOut
	os.Stdout, jsonOut = w, asJSON
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	ferr := f()
	w.Close()
	os.Stdout, jsonOut = old, oldJSON
	return <-done, ferr
}

// lastJSON decodes the last line of out.
func lastJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatalf("last line %q: %v", lines[len(lines)-1], err)
	}
	return m
}

// execute runs the root command with args in-process and returns stdout.
func execute(t *testing.T, args ...string) (string, error) {
	t.Helper()
	defer resetFlags(rootCmd)
	return captureStdout(t, false, func() error {
		rootCmd.SetArgs(args)
		defer rootCmd.SetArgs(nil)
		return rootCmd.Execute()
	})
}

// resetFlags puts every flag of c and its subcommands back to its
// default (cobra keeps values between Execute calls).
func resetFlags(c *cobra.Command) {
	reset := func(f *pflag.Flag) {
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			sv.Replace(nil)
		} else {
			f.Value.Set(f.DefValue)
		}
		f.Changed = false
	}
	c.Flags().VisitAll(reset)
	c.PersistentFlags().VisitAll(reset)
	for _, s := range c.Commands() {
		resetFlags(s)
	}
}
