//go:build !unix

package cli_test

import "errors"

func mkfifo(string) error { return errors.New("named pipes need a Unix system") }
