package launchflag_test

import (
	"fmt"

	"github.com/fathom-ml/fathom/launch"
	"github.com/fathom-ml/fathom/launch/launchflag"
)

// Parse reads the torchrun-style command line of `fathom run`.
func ExampleParse() {
	cfg, err := launchflag.Parse([]string{
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
