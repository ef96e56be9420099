package yamldoc

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var lineMsg = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parserProblems are the problems yaml.v3's parser (parserc.go), as
// opposed to its scanner, reports. For these, yaml.v3 (decode.go, fail)
// prints the 0-based line of its error mark, where scanner errors get the
// 1-based one: "sample_count: [1, 2}" on line 9 is reported as "line 8".
// The mark is where the enclosing collection starts, or the problem itself.
var parserProblems = []string{
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"did not find expected '-' indicator",
	"did not find expected <document start>",
	"did not find expected <stream-start>",
	"did not find expected key",
	"did not find expected node content",
	"found duplicate %TAG directive",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found undefined tag handle",
}

// scannerProblems are the problems of yaml.v3's scanner (scannerc.go)
// that are worded the same every time; with parserProblems they are
// the errors yaml.v3 reports through decode.go's fail, which omits the line
// when it is the first one.
var scannerProblems = []string{
	"block sequence entries are not allowed in this context",
	"could not find expected ':'",
	"could not find expected directive name",
	"did not find expected alphabetic or numeric character",
	"did not find expected comment or line break",
	"did not find expected digit or '.' character",
	"did not find expected hexdecimal number",
	"did not find expected version number",
	"did not find expected whitespace or line break",
	"did not find expected whitespace",
	"did not find the expected '>'",
	"found a tab character that violates indentation",
	"found a tab character where an indentation space is expected",
	"found an indentation indicator equal to 0",
	"found character that cannot start any token",
	"found extremely long version number",
	"found invalid Unicode character escape code",
	"found unexpected document indicator",
	"found unexpected end of stream",
	"found unexpected non-alphabetical character",
	"found unknown directive name",
	"found unknown escape character",
	"mapping keys are not allowed in this context",
	"mapping values are not allowed in this context",
}

// ErrorLine splits an error of gopkg.in/yaml.v3 (v3.0.1) into the
// 1-based line it concerns and its message without the "yaml: line N: "
// prefix. It reproduces what yaml.v3's decode.go (fail) does to its marks:
// a parser problem's number is 0-based there and is corrected here (the
// line where the enclosing collection starts, or the problem's own line),
// and an error on the first line, which yaml.v3 prints without a line, is
// line 1. line is 0 when the error names no position (an unknown anchor,
// a type error, an error that is not yaml.v3's). Every YAML input of lcctl
// (lb-configs, snapshots, scenarios, Helm values) reports syntax errors
// through it.
func ErrorLine(err error) (line int, msg string) {
	text := err.Error()
	msg = strings.TrimPrefix(text, "yaml: ")
	if m := lineMsg.FindStringSubmatch(text); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	switch {
	case slices.Contains(parserProblems, msg):
		line++ // 0-based in yaml.v3's text; no line there means line 1
	case line == 0 && (slices.Contains(scannerProblems, msg) || strings.HasPrefix(msg, "exceeded max depth of ")):
		line = 1
	}
	return line, msg
}
