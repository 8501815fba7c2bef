// Package ddp is data-parallel training with PyTorch DistributedDataParallel's
// design: every process of a comm.Group holds a replica of the model, computes
// the gradient of its part of each global batch, and the replicas' gradients
// are summed by all-reduces that overlap the rest of the backward pass.
//
//	d, err := ddp.New(model, g, ddp.Options{}) // broadcasts rank 0's weights
//	for each step {
//		d.SetScale(float64(localRows) / float64(globalRows))
//		loss := lossOf(model.Forward(x))
//		opt.ZeroGrad()
//		loss.Backward()        // buckets start their all-reduce as they fill
//		if err := d.Sync(); err != nil { ... } // waits for every bucket
//		opt.Step()
//	}
//
// # Buckets
//
// New lays the gradients of the parameters out in a few flat buffers
// (buckets), in reverse registration order, since the last layer's
// gradients are ready first: the first bucket holds up to FirstBucketMB
// (1 MiB) and the others up to BucketCapMB (25 MiB), PyTorch's defaults.
// Each parameter's Grad becomes a view of its slot in its bucket
// (tensor.FromFloat32 over the slot, installed with SetGrad), so Backward
// accumulates straight into the bucket and nothing is copied.
//
// A gradient-ready hook on every parameter (tensor.RegisterGradReadyHook)
// counts the parameters of its bucket; when the last one is ready, the
// bucket is scaled by this rank's weight and its asynchronous all-reduce
// (comm.AllReduceAsync, sum) is queued while Backward goes on with earlier
// layers. Buckets are queued in index order on every rank (a bucket that
// is ready early waits for the ones before it), so the collectives match
// across ranks even when gradients finish in different orders. Sync queues
// whatever did not start, waits for all, and leaves in every Grad the
// weighted sum of the replicas' gradients.
//
// # Weights
//
// SetScale sets this rank's weight in the sum; the default 1/WorldSize makes
// it the average. When ranks see batches of different sizes (the last
// global batch of a DistributedBatchSampler), weighting each rank's
// mean-loss gradient by localRows/globalRows makes the sum equal the
// gradient of the mean loss over the whole global batch: what one process
// with the global batch computes. A rank with an empty batch runs no
// backward at all, sets weight 0 and calls Sync, contributing zeros.
//
// # Unused parameters and accumulation
//
// A parameter the loss does not reach gets no gradient and never fires its
// hook; Sync then fails with an *UnusedParameterError naming it, unless
// Options.FindUnusedParameters is set (its slot is reduced as it is).
// Prepare(loss), called between the forward pass and Backward, finds such
// parameters beforehand with loss.ReachableLeaves: it reports the error
// before any communication, or with FindUnusedParameters marks them ready
// at once so their buckets still overlap Backward.
//
// NoSync(fn) runs fn (forward and backward passes of micro-batches) with
// synchronization off: gradients accumulate locally in the buckets, and
// the next backward outside NoSync reduces the accumulated sum.
//
// # Buffers
//
// Buffers (BatchNorm's running statistics) are not reduced: each replica
// updates its own from its batches, and at the end of every Sync rank 0's
// are broadcast to all (PyTorch's broadcast_buffers), so every replica
// evaluates with the same model; Options.KeepLocalBuffers turns that off.
//
// # ZeRO-1
//
// Options.ShardOptimizer with a ShardedOptimizer shards the optimizer
// state (Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training
// Trillion Parameter Models", SC 2020, stage 1): the buckets are
// reduce-scattered, each rank updates its 1/N part, and the parts are
// all-gathered into the parameters. On one host the buckets and parts
// live in shared-memory windows (comm.NewWindow) and the collectives read
// the peers' memory in place; elsewhere they run in place over the links
// (comm.ReduceScatterInPlace, comm.AllGatherInto).
package ddp
