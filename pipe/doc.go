// Package pipe is pipeline (model) parallelism: a model's layer list cut
// into K stages, stage s on rank s, activations sent forward and their
// gradients backward point to point, every batch cut into M micro-batches
// so that the stages work on different micro-batches at once.
//
// # Schedules
//
// Ops gives the order of a stage's passes as a pure function. GPipe
// (Huang et al., NeurIPS 2019) runs all M forward passes, then all M
// backward passes; 1F1B (PipeDream-Flush, Narayanan et al., ICML 2021)
// fills the pipeline with K−1−s forward passes on stage s and then
// alternates one forward and one backward. Both accumulate the
// micro-batches' gradients, each micro-batch's loss weighted by its share
// of the batch, so one optimizer step per batch follows the gradient of
// the batch's mean loss, as one process would (up to float32 rounding of
// the sum over micro-batches). With equal pass times both idle
// (K−1)/(M+K−1) of a step (IdealBubble; Simulate checks it without a
// network); they differ in memory: a GPipe stage holds all M
// micro-batches' activations at the turn, a 1F1B stage at most K−s.
// M = 1 is naive model parallelism: one stage works at a time.
//
// # Cutting the model
//
// Balance cuts a list of per-layer costs into K contiguous stages that
// minimize the costliest stage (linear partition by dynamic programming);
// CutsAt cuts at the layers the user names.
//
// # Running a stage
//
// Stage runs one rank's layers: Step trains one batch in the schedule
// over a comm.Group whose rank s is stage s (two subgroups, one per
// direction, so that a send one way never queues behind a receive the
// other way), Forward evaluates. Stats reports the step's wall and
// compute time (the measured bubble) and the peak bytes of activations
// held between forward and backward passes.
package pipe
