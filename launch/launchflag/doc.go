// Package launchflag is the command line of the launcher: torchrun's flags
// (-n/--nproc-per-node, --nnodes, --node-rank, --master-addr, ...) parsed
// into a launch.Config, which package launch takes typed and never parses.
// `fathom run` registers them with Add; Parse reads a whole `fathom run`
// argument list (the deploy manifests' command lines are checked with it).
//
//	cfg, err := launchflag.Parse([]string{"-n", "4", "--", "fathom", "train", "job.yaml"})
//	if err != nil { ... }
//	res, err := launch.Run(ctx, cfg)
package launchflag
