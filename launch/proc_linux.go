package launch

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// sysProcAttr puts each worker in its own process group (so the terminal's
// Ctrl-C reaches only the launcher, which forwards it, and a signal to the
// group reaches the worker's children too) and asks the kernel to SIGKILL
// the worker if the launcher dies without stopping it.
//
// Pdeathsig fires when the OS thread that started the child exits; the Go
// runtime only ends threads whose goroutine exits while locked with
// runtime.LockOSThread, so do not call Run from such a goroutine.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// processStopped reports whether process pid is stopped (SIGSTOP, SIGTSTP,
// a debugger): state T or t in /proc/pid/stat.
func processStopped(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')') // the command name may hold anything
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'T' || b[i+2] == 't'
}
