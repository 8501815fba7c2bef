package job

import "testing"

// TestUseShardOptimizer pins when a data-parallel job shards its optimizer
// (ZeRO-1): by default on one machine only, never when the config asks for
// something the sharded optimizer does not support, and always as an
// explicit distributed.shard_optimizer says.
func TestUseShardOptimizer(t *testing.T) {
	for _, test := range []struct {
		text              string
		overrides         []string
		world, localWorld int
		want              bool
	}{
		{world: 2, localWorld: 2, want: true},
		{world: 4, localWorld: 4, want: true},
		{world: 1, localWorld: 1, want: false},
		{world: 4, localWorld: 2, want: false},  // two machines
		{world: 2, localWorld: -1, want: false}, // LOCAL_WORLD_SIZE unset: unknown
		{text: "distributed: {shard_optimizer: false}\n", world: 2, localWorld: 2, want: false},
		{text: "distributed: {shard_optimizer: true}\n", world: 4, localWorld: 2, want: true},
		{text: "distributed: {deterministic: true}\n", world: 2, localWorld: 2, want: false},
		{text: "distributed: {compression: bf16}\n", world: 2, localWorld: 2, want: false},
		{overrides: []string{"optimizer.clip_grad_norm=1"}, world: 2, localWorld: 2, want: false},
		{text: "output: {checkpoint_every: 1}\n", world: 2, localWorld: 2, want: false},
		{text: "precision: fp16\n", world: 2, localWorld: 2, want: false},
		{overrides: []string{"optimizer.type=sgd"}, world: 2, localWorld: 2, want: true},
		{overrides: []string{"optimizer.type=lbfgs"}, world: 2, localWorld: 2, want: false},
	} {
		c, err := ParseConfig([]byte(baseConfig+test.text), "d.yaml", test.overrides)
		if err != nil {
			t.Fatalf("%q %v: %v", test.text, test.overrides, err)
		}
		if got := c.useShardOptimizer(test.world, test.localWorld); got != test.want {
			t.Errorf("%q %v on %d workers (%d local): sharded %v, want %v", test.text, test.overrides, test.world, test.localWorld, got, test.want)
		}
	}
}
