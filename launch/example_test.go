//go:build unix

package launch_test

import (
	"context"
	"fmt"
	"os"

	"github.com/fathom-ml/fathom/launch"
)

// Run starts the workers and waits for them; each output line carries the
// worker's rank.
func ExampleRun() {
	res, err := launch.Run(context.Background(), launch.Config{
		Command:      []string{"sh", "-c", `echo "rank $RANK of $WORLD_SIZE (local $LOCAL_RANK)"`},
		NProcPerNode: 3,
		Stdout:       os.Stdout,
	})
	if err != nil {
		fmt.Println("failed:", err)
		return
	}
	fmt.Println("restarts:", res.Restarts)
	// Unordered output:
	// [0] rank 0 of 3 (local 0)
	// [1] rank 1 of 3 (local 1)
	// [2] rank 2 of 3 (local 2)
	// restarts: 0
}

// ParseArgs reads the torchrun-style command line of `fathom run`.
func ExampleParseArgs() {
	cfg, err := launch.ParseArgs([]string{
		"-n", "4", "--nnodes", "2", "--node-rank", "1",
		"--master-addr", "10.0.0.1", "--master-port", "29500",
		"--", "fathom", "train", "mnist.yaml",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	topo := launch.Topology{NNodes: cfg.NNodes, NodeRank: cfg.NodeRank, NProcPerNode: cfg.NProcPerNode}
	fmt.Println("command:", cfg.Command)
	fmt.Println("world size:", topo.WorldSize())
	fmt.Println("ranks on this node:", topo.Rank(0), "to", topo.Rank(cfg.NProcPerNode-1))
	// Output:
	// command: [fathom train mnist.yaml]
	// world size: 8
	// ranks on this node: 4 to 7
}
