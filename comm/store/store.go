// Package store is the rendezvous key-value store of a fathom job: the role
// PyTorch's TCPStore plays for torch.distributed. Rank 0 hosts a Server; every
// rank (rank 0 included) talks to it through a Client. Workers publish their
// addresses under keys, block on Get until the others have done the same, and
// count arrivals with Add.
//
// Store is an interface so that other backends (an etcd one for elastic jobs)
// can replace the TCP server without touching package comm.
//
// Every connection to the server first proves it knows the job token (package
// auth); a stranger is refused and logged with its address and rank claim.
//
// Wire protocol (little-endian), one request at a time per connection:
//
//	request:  op u8 | keyLen u16 | key | valLen u32 | value | waitMillis i64
//	response: status u8 | len u32 | data
package store

import (
	"context"
	"errors"
)

// Store is a small key-value store shared by the ranks of one job.
type Store interface {
	// Set stores value under key and wakes every Get waiting for it.
	Set(ctx context.Context, key string, value []byte) error
	// Get returns the value of key, waiting until some rank sets it or ctx
	// ends (then it returns an error wrapping ErrTimeout or ctx.Err()).
	Get(ctx context.Context, key string) ([]byte, error)
	// Add adds delta to the int64 counter under key (created at 0) and
	// returns the new value.
	Add(ctx context.Context, key string, delta int64) (int64, error)
	// Close releases the client's connection.
	Close() error
}

// ErrTimeout is returned (wrapped) when a Get waited past its deadline.
var ErrTimeout = errors.New("store: timed out waiting for key")

// ErrClosed is returned when the store or the client was closed.
var ErrClosed = errors.New("store: closed")

const (
	opSet byte = 1
	opGet byte = 2
	opAdd byte = 3

	statusOK       byte = 0
	statusNotFound byte = 1
	statusError    byte = 2

	maxKey   = 1 << 12
	maxValue = 1 << 24
)

// WithPrefix returns a Store that puts prefix before every key of st: one
// store serves several namespaces (the restart generations of a job) that
// never see each other's keys. Close closes st.
func WithPrefix(st Store, prefix string) Store { return prefixed{st, prefix} }

type prefixed struct {
	st     Store
	prefix string
}

func (p prefixed) Set(ctx context.Context, key string, value []byte) error {
	return p.st.Set(ctx, p.prefix+key, value)
}

func (p prefixed) Get(ctx context.Context, key string) ([]byte, error) {
	return p.st.Get(ctx, p.prefix+key)
}

func (p prefixed) Add(ctx context.Context, key string, delta int64) (int64, error) {
	return p.st.Add(ctx, p.prefix+key, delta)
}

func (p prefixed) Close() error { return p.st.Close() }
