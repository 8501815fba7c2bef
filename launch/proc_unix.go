//go:build unix

package launch

import (
	"errors"
	"os"
	"syscall"
)

// signalWorker sends sig to the worker's whole process group (every worker
// is the leader of its own group, so a shell's children get the signal too).
// A group that no longer exists is not an error.
func signalWorker(p *os.Process, sig syscall.Signal) error {
	err := syscall.Kill(-p.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// killLeftovers SIGKILLs what remains of the worker's process group after
// the worker itself has exited (background children that would otherwise
// hold its output pipes open).
func killLeftovers(p *os.Process) { _ = signalWorker(p, syscall.SIGKILL) }

// resumeWorker sends SIGCONT to the worker's process group, so that a
// stopped worker acts on the signal it was just sent instead of waiting for
// the grace period's SIGKILL.
func resumeWorker(p *os.Process) { _ = signalWorker(p, syscall.SIGCONT) }

// exitStatus splits a finished process's state into an exit code (-1 when
// killed by a signal) and the signal (0 when it exited).
func exitStatus(st *os.ProcessState) (code int, sig syscall.Signal) {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal()
	}
	return st.ExitCode(), 0
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGABRT: "SIGABRT", syscall.SIGALRM: "SIGALRM", syscall.SIGBUS: "SIGBUS",
	syscall.SIGFPE: "SIGFPE", syscall.SIGHUP: "SIGHUP", syscall.SIGILL: "SIGILL",
	syscall.SIGINT: "SIGINT", syscall.SIGKILL: "SIGKILL", syscall.SIGPIPE: "SIGPIPE",
	syscall.SIGQUIT: "SIGQUIT", syscall.SIGSEGV: "SIGSEGV", syscall.SIGTERM: "SIGTERM",
	syscall.SIGTRAP: "SIGTRAP", syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGSYS: "SIGSYS", syscall.SIGXCPU: "SIGXCPU",
}
