//go:build !linux

package comm

import (
	"context"
	"errors"
)

// setupShm: the shared-memory transport is Linux-only (/dev/shm, mmap,
// sched_yield); elsewhere every peer uses TCP.
func (g *Group) setupShm(ctx context.Context, infos []peerInfo) error {
	if g.opts.Transport == TransportSHM {
		return errors.New("shared-memory transport is only available on Linux")
	}
	return nil
}
