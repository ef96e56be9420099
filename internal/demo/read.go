package demo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]")

// ClusterFromGet returns the cluster of the entry `lcctl store get`
// printed: from its JSON document (-o json; the "found" and "cluster"
// keys) or from the "cluster" line of its text output (ANSI styling
// ignored, a quoted value unquoted). The error says why there is none: the
// entry was absent, or the output is not store get's.
func ClusterFromGet(out []byte) (string, error) {
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var j struct {
			Found   *bool  `json:"found"`
			Cluster string `json:"cluster"`
		}
		if err := json.Unmarshal(trimmed, &j); err != nil {
			return "", fmt.Errorf("store get printed JSON that does not decode: %w", err)
		}
		if j.Found == nil || !*j.Found || j.Cluster == "" {
			return "", errors.New("store get found no entry")
		}
		return j.Cluster, nil
	}
	for _, line := range strings.Split(ansiEscape.ReplaceAllString(string(out), ""), "\n") {
		rest, ok := strings.CutPrefix(line, "cluster ")
		if !ok {
			continue
		}
		v := strings.TrimSpace(rest)
		switch {
		case v == "(not found)":
			return "", errors.New("store get found no entry")
		case strings.HasPrefix(v, `"`):
			u, err := strconv.Unquote(v)
			if err != nil {
				return "", fmt.Errorf("store get printed the cluster %s, which does not unquote: %w", v, err)
			}
			return u, nil
		case v != "":
			return v, nil
		}
	}
	return "", errors.New("store get printed no cluster line")
}
