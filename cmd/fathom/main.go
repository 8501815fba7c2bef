// Command fathom is the command-line front end of the fathom machine-learning
// system: training, benchmarks, distributed launch, classic ML and serving.
//
// Every subcommand lives in its own file and registers itself on rootCmd or
// benchCmd from an init function; the logic lives in the library packages.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

var rootCmd = &cobra.Command{
	Use:           "fathom",
	Short:         "fathom: scalable machine learning in Go",
	SilenceUsage:  true,
	SilenceErrors: true,
}

// benchCmd groups the built-in benchmarks (`fathom bench matmul`, ...).
var benchCmd = &cobra.Command{
	Use:   "bench",
	Short: "Run built-in benchmarks",
}

// jsonOut is the global --json flag: machine-readable JSON lines on stdout.
var jsonOut bool

func init() {
	rootCmd.PersistentFlags().BoolVar(&jsonOut, "json", false, "print machine-readable JSON lines on stdout")
	rootCmd.AddCommand(benchCmd)
}

func main() {
	if err := rootCmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "fathom:", err)
		os.Exit(1)
	}
}
