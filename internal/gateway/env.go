// Package gateway reads the LLM API gateway's last-cluster and Olric
// settings from a dotenv file (the container environment) or from Helm
// values of the gateway chart (deploy/helm/llm-api-gateway/llm-api-gateway),
// into one typed Settings value whose every field remembers where it came
// from (file:line:col, or the default), and validates them the way the
// gateway does at startup (gateway.md §8) plus lcctl's rollout checks.
//
// Both inputs are first reduced to environment variables (Env): a dotenv
// file directly, Helm values through the chart's ConfigMap template
// mapping (gateway.md §8.3). Load then parses the variables with the
// gateway's rules (config.LoadFromEnv: strconv.ParseBool, ParseInt base 10,
// time.ParseDuration; an empty value means "not set"; every bad variable is
// reported, as `invalid NAME="raw": reason`).
package gateway

import (
	"fmt"
	"sort"
)

// Pos is where a value came from. A zero Line means it was not read from a
// file (a default); File then names the default's origin.
type Pos struct {
	// File is the input file name as given ("-" for standard input).
	File string `json:"file"`
	// Line and Col are 1-based; Col counts bytes. 0 means unknown.
	Line int `json:"line,omitempty"`   // 1-based line
	Col  int `json:"column,omitempty"` // 1-based column (bytes)
}

// String renders "file:line:col", "file:line" or "file".
func (p Pos) String() string {
	switch {
	case p.Line > 0 && p.Col > 0:
		return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
	case p.Line > 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return p.File
}

// Var is one environment variable as the gateway would see it.
type Var struct {
	// Name is the variable name (STARGATE_LAST_CLUSTER_TTL).
	Name string `json:"name"`
	// Value is the raw string value; "" means not set.
	Value string `json:"value"`
	// Pos is where the value was read (for Helm values: the YAML value
	// node), or the default's origin.
	Pos Pos `json:"position"`
	// ValuesPath is the Helm values path that rendered the variable
	// (llmApiGateway.config.lastCluster.ttl); empty for dotenv input.
	ValuesPath string `json:"values_path,omitempty"`
}

// Kind says what an Env was read from.
type Kind string

// Input kinds.
const (
	KindDotenv Kind = "dotenv"
	KindValues Kind = "helm-values"
)

// Env is the set of environment variables read from one input.
type Env struct {
	// Kind is the input kind.
	Kind Kind
	// Files are the input files, in the order given.
	Files []string
	// Vars maps names to variables (the last occurrence wins, as in a shell
	// or a ConfigMap).
	Vars map[string]Var
	// Replicas is the number of gateway pods (Helm llmApiGateway.replicaCount),
	// 0 when unknown (dotenv input).
	Replicas int
	// ReplicasPos is where Replicas came from.
	ReplicasPos Pos
	// OlricSwitch is, for Helm values, the llmApiGateway.olric.enabled
	// value that decides whether the chart renders OLRIC_ENABLED and the
	// other Olric variables: Value as the file spells it ("false", "0",
	// "null", `""`; "true" for the chart default), Pos where it was read
	// (File ChartDefaults when no file sets it), ValuesPath the path. With
	// Olric off the chart renders no OLRIC_ENABLED, so this is the only
	// record of where "off" came from. Zero for dotenv input.
	OlricSwitch Var
	// Notes are non-fatal findings of the reader (duplicate dotenv keys,
	// Helm values of the wrong shape), reported by Validate as problems.
	Notes []Problem
}

// NotSet is the Pos.File of a variable the input does not set (the
// gateway's default applies).
const NotSet = "not set (gateway default)"

// Origin names where p's value came from, for a finding's text: the
// position (file:line:col), "chart default", or "not set, gateway
// default" for a variable the input does not set.
func (p Pos) Origin() string {
	if p.File == NotSet {
		return "not set, gateway default"
	}
	return p.String()
}

// Origin names where v's value came from, as Pos.Origin, except that a
// variable a values file renders empty (ttl: null, ttl: "") has the
// gateway's default, which the text says: "gateway default: FILE:L:C
// renders it empty".
func (v Var) Origin() string {
	if v.Value == "" && v.Pos.File != NotSet && v.Pos.Line > 0 {
		return "gateway default: " + v.Pos.String() + " renders it empty"
	}
	return v.Pos.Origin()
}

// Get returns the variable name, or a not-set Var positioned at NotSet.
func (e *Env) Get(name string) Var {
	if v, ok := e.Vars[name]; ok {
		return v
	}
	return Var{Name: name, Pos: Pos{File: NotSet}}
}

// Names returns the variable names in sorted order.
func (e *Env) Names() []string {
	out := make([]string, 0, len(e.Vars))
	for n := range e.Vars {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// SyntaxError is an input that cannot be read at all: a dotenv line that is
// not NAME=VALUE, an unterminated quote, YAML that does not parse. The CLI
// reports it as an input error (exit 2).
type SyntaxError struct {
	Pos Pos    // where the input stops making sense
	Msg string // what is wrong
}

// Error renders "file:line:col: msg".
func (e *SyntaxError) Error() string { return fmt.Sprintf("%s: %s", e.Pos, e.Msg) }
