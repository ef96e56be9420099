package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/olric-data/olric"
)

// TestClassifyPlainTexts feeds classify the errors a client-only process
// gets from olric v0.7.4, where error replies arrive as plain text without
// their prefix (see olricErrorTexts and kindOfText).
func TestClassifyPlainTexts(t *testing.T) {
	tests := []struct {
		err       error
		kind      error // nil: none of ours
		sentinel  error // an olric sentinel errors.Is must find, or nil
		retryable bool
	}{
		{errors.New("key not found"), ErrNotFound, olric.ErrKeyNotFound, false},
		{olric.ErrKeyNotFound, ErrNotFound, olric.ErrKeyNotFound, false},
		{errors.New("dmap not found"), ErrNotFound, olric.ErrKeyNotFound, false},
		{errors.New("key found"), nil, olric.ErrKeyFound, false},
		{errors.New("write quorum cannot be reached"), nil, olric.ErrWriteQuorum, true},
		{errors.New("read quorum cannot be reached"), nil, olric.ErrReadQuorum, true},
		{errors.New("server is gone"), ErrUnreachable, olric.ErrServerGone, true},
		{errors.New("operation timeout"), ErrTimeout, olric.ErrOperationTimeout, true},
		{errors.New("cannot be reached cluster quorum to operate"), nil, olric.ErrClusterQuorum, true},
		{errors.New("canceled"), ErrUnreachable, nil, true},
		{errors.New("timeout"), ErrTimeout, nil, true},
		{fmt.Errorf("error while discovering the cluster members: %w", errors.New("timeout")), ErrTimeout, nil, true},
		{errors.New("tcp 127.0.0.1:1->127.0.0.1:2: i/o timeout"), ErrTimeout, nil, true},
		{errors.New("deadline exceeded"), ErrTimeout, nil, true},
		{errors.New("client is closed"), ErrUnreachable, nil, true},
		{errors.New("tcp 127.0.0.1:1: connect: connection reset by peer"), ErrUnreachable, nil, true},
		{io.EOF, ErrUnreachable, nil, true},
		{fmt.Errorf("dial tcp 127.0.0.1:1: %w", olric.ErrConnRefused), ErrUnreachable, olric.ErrConnRefused, true},
		{errors.New("Authentication required."), ErrAuth, nil, false},
		{errors.New("wrong password"), ErrAuth, olric.ErrWrongPass, false},
		{errors.New("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"), ErrAuth, nil, false},
		{context.DeadlineExceeded, ErrTimeout, context.DeadlineExceeded, true},
		{context.Canceled, nil, context.Canceled, false},
		{errors.New("syntax error"), nil, nil, false},
		{errors.New("routing table is empty"), nil, nil, true},
	}
	for _, tc := range tests {
		got := classify(tc.err)
		if tc.kind != nil && !errors.Is(got, tc.kind) {
			t.Errorf("classify(%q) = %v, want kind %v", tc.err, got, tc.kind)
		}
		for _, k := range []error{ErrNotFound, ErrUnreachable, ErrTimeout, ErrAuth} {
			if k != tc.kind && errors.Is(got, k) {
				t.Errorf("classify(%q) = %v, wrongly of kind %v", tc.err, got, k)
			}
		}
		if tc.sentinel != nil && !errors.Is(got, tc.sentinel) {
			t.Errorf("classify(%q) = %v, want errors.Is %v", tc.err, got, tc.sentinel)
		}
		if r := retryable(got); r != tc.retryable {
			t.Errorf("retryable(%q) = %v, want %v", got, r, tc.retryable)
		}
	}
	if classify(nil) != nil {
		t.Error("classify(nil) != nil")
	}
}

// A routing-table read that timed out names the members that timed out,
// or says that a member did not answer when none was noted; other
// errors get neither.
func TestSilentMembersRoutingTimeout(t *testing.T) {
	rt := fmt.Errorf("error while loading the routing table: %w", context.DeadlineExceeded)
	var s silentMembers
	if got := s.unnamed(rt); !strings.Contains(got, "a member did not answer while the routing table was loaded") || !strings.Contains(got, "failure detection") {
		t.Errorf("unnamed = %q", got)
	}
	if got := s.unnamed(errors.New("connection refused")); got != "" {
		t.Errorf("unnamed for a refused connection = %q, want empty", got)
	}
	s.noteErr("127.0.0.1:2", "", timeoutErr{})
	s.noteErr("127.0.0.1:2", "", timeoutErr{})
	if got := s.describe(); !strings.HasPrefix(got, "; no reply from member 127.0.0.1:2 (a frozen") {
		t.Errorf("describe = %q", got)
	}
	if got := s.unnamed(rt); got != "" {
		t.Errorf("unnamed with a member noted = %q, want empty", got)
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }
