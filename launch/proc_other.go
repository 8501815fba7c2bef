//go:build !unix

package launch

import (
	"os"
	"syscall"
)

// Outside Unix there are no process groups or catchable termination
// signals: stopping a worker kills it, and its children are not reached.

func sysProcAttr() *syscall.SysProcAttr { return nil }

func signalWorker(p *os.Process, _ syscall.Signal) error { return p.Kill() }

func killLeftovers(*os.Process) {}

func resumeWorker(*os.Process) {}

func processStopped(int) bool { return false }

func exitStatus(st *os.ProcessState) (code int, sig syscall.Signal) { return st.ExitCode(), 0 }

var signalNames = map[syscall.Signal]string{}
