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
