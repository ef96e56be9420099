// Package processtest holds the process-level test suite of `lcctl store`:
// its TestMain builds olric-server from the olric module lcctl requires
// (go build github.com/olric-data/olric/cmd/olric-server), starts a
// two-member cluster of separate olric-server processes on loopback ports
// chosen at run time with configuration files written at run time, runs
// the testscript scripts in testdata/script against it with lcctl as a
// command, and stops the processes (also when tests fail). Unlike the
// in-process clusters of the other tests, lcctl here is a client-only
// process, as it is against a live gateway.
package processtest
