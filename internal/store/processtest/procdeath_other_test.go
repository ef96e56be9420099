//go:build !linux

package processtest

import "syscall"

// memberProcAttr is nil outside Linux: no Pdeathsig there, so members
// outlive a test binary that dies without its cleanup.
func memberProcAttr() *syscall.SysProcAttr { return nil }
