package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/internal/distenv"
)

// cpuProfile is the global --cpuprofile flag: a CPU profile of the command
// (go tool pprof reads it). A worker of a distributed job writes
// FILE.rank<N>, so the ranks of `fathom run` do not overwrite each other.
var cpuProfile string

func init() {
	rootCmd.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the command to this file (FILE.rank<N> for each worker of a distributed job)")
	var f *os.File
	cobra.OnInitialize(func() {
		if cpuProfile == "" {
			return
		}
		path := cpuProfile
		if e, err := distenv.FromOS(); err == nil && e.WorldSize > 1 {
			path += fmt.Sprintf(".rank%d", e.Rank)
		}
		var err error
		if f, err = os.Create(path); err != nil {
			fmt.Fprintln(os.Stderr, "fathom: --cpuprofile:", err)
			return
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "fathom: --cpuprofile:", strings.TrimSpace(err.Error()))
			f.Close()
			f = nil
		}
	})
	cobra.OnFinalize(func() {
		if f != nil {
			pprof.StopCPUProfile()
			f.Close()
			f = nil
		}
	})
}
