package comm

import (
	"errors"
	"fmt"
)

// Sentinel errors; test for them with errors.Is.
var (
	// ErrTimeout: a collective did not finish within Options.Timeout.
	ErrTimeout = errors.New("collective timed out")
	// ErrAborted: another rank aborted the job (it lost a peer, timed out or
	// saw a protocol error); the group cannot be used any more.
	ErrAborted = errors.New("process group aborted")
	// ErrClosed: the group was closed.
	ErrClosed = errors.New("process group closed")
	// ErrPeerLost: a peer's connection closed or broke.
	ErrPeerLost = errors.New("peer lost")
	// ErrProtocol: ranks disagree (different lengths, different order of
	// collectives) or a peer sent something malformed.
	ErrProtocol = errors.New("protocol error")
)

// PeerLostError says which rank was lost and which rank noticed. Every rank
// of a job that loses a worker returns (wrapped in its collective's error) a
// PeerLostError naming the lost rank: the rank that saw the connection break
// directly, the others through the abort it broadcast via the store.
type PeerLostError struct {
	Rank       int   // the lost rank
	ReportedBy int   // the rank whose connection to Rank broke
	Err        error // what the reporting rank saw (nil on other ranks)
	Reason     string
}

func (e *PeerLostError) Error() string {
	cause := e.Reason
	if e.Err != nil {
		cause = e.Err.Error()
	}
	return fmt.Sprintf("lost rank %d (detected by rank %d: %s)", e.Rank, e.ReportedBy, cause)
}

// Is reports ErrPeerLost, and ErrAborted when another rank reported it.
func (e *PeerLostError) Is(target error) bool {
	return target == ErrPeerLost
}

func (e *PeerLostError) Unwrap() error { return e.Err }

// abortError is what ranks other than the origin see when a rank aborts for
// a reason other than a lost peer (a timeout, a protocol error).
type abortError struct {
	By     int
	Reason string
}

func (e *abortError) Error() string {
	return fmt.Sprintf("%v by rank %d: %s", ErrAborted, e.By, e.Reason)
}

func (e *abortError) Is(target error) bool { return target == ErrAborted }

// opError wraps the failure of one collective with the rank and op name.
type opError struct {
	Rank  int
	Group string // "" for the group New built, else "subgroup [job ranks]"
	Op    string
	Err   error
}

func (e *opError) Error() string {
	if e.Group != "" {
		return fmt.Sprintf("comm: rank %d of %s: %s: %v", e.Rank, e.Group, e.Op, e.Err)
	}
	return fmt.Sprintf("comm: rank %d: %s: %v", e.Rank, e.Op, e.Err)
}
func (e *opError) Unwrap() error { return e.Err }
