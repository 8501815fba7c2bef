//go:build unix && !linux

package launch

import "syscall"

// sysProcAttr puts each worker in its own process group (see proc_linux.go;
// no parent-death signal outside Linux).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// processStopped: only Linux tells (through /proc).
func processStopped(int) bool { return false }
