package gateway

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxInputBytes bounds a dotenv or values file (4 MiB).
const MaxInputBytes = 4 << 20

// ParseDotenv reads a dotenv file: the container environment of the gateway
// as NAME=VALUE lines. lcctl's own strict grammar (no well-kept parser on
// the module proxy reports positions):
//
//   - blank lines and lines whose first non-blank character is '#' are
//     skipped; "\r\n" line ends are accepted;
//   - an optional "export " prefix; NAME is [A-Za-z_][A-Za-z0-9_]*; blanks
//     around '=' are allowed;
//   - VALUE is unquoted (leading and trailing blanks trimmed; " #" starts a
//     comment; quote characters are not allowed inside), 'single-quoted'
//     (literal), or "double-quoted" (escapes \\ \" \n \r \t \$ only); a
//     quoted value ends on its line and may be followed only by blanks and a
//     comment;
//   - no variable expansion: '$' is literal;
//   - a NAME given twice: the last wins and a warning is recorded.
//
// Any other line, a NUL byte or invalid UTF-8 is a *SyntaxError naming
// file:line:col. It never panics.
func ParseDotenv(file string, data []byte) (*Env, error) {
	env := &Env{Kind: KindDotenv, Files: []string{file}, Vars: map[string]Var{}}
	if len(data) > MaxInputBytes {
		return nil, &SyntaxError{Pos: Pos{File: file}, Msg: fmt.Sprintf("larger than lcctl's %d-byte limit", MaxInputBytes)}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	for i, raw := range strings.Split(string(data), "\n") {
		lineNo := i + 1
		line := strings.TrimSuffix(raw, "\r")
		errAt := func(col int, format string, args ...any) error {
			return &SyntaxError{Pos: Pos{File: file, Line: lineNo, Col: col}, Msg: fmt.Sprintf(format, args...)}
		}
		if !utf8.ValidString(line) {
			return nil, errAt(0, "invalid UTF-8")
		}
		if j := strings.IndexAny(line, "\x00\r"); j >= 0 {
			return nil, errAt(j+1, "control character %q", line[j])
		}
		p := skipBlank(line, 0)
		if p == len(line) || line[p] == '#' {
			continue
		}
		if strings.HasPrefix(line[p:], "export") && p+6 < len(line) && (line[p+6] == ' ' || line[p+6] == '\t') {
			p = skipBlank(line, p+6)
		}
		start := p
		for p < len(line) && isNameByte(line[p], p == start) {
			p++
		}
		if p == start {
			return nil, errAt(start+1, "expected a variable name (letters, digits, '_'; not starting with a digit)")
		}
		name := line[start:p]
		p = skipBlank(line, p)
		if p == len(line) || line[p] != '=' {
			return nil, errAt(p+1, "expected '=' after %s", name)
		}
		p = skipBlank(line, p+1)
		valCol := p + 1
		value, err := dotenvValue(line, p)
		if err != nil {
			return nil, errAt(err.col+1, "%s: %s", name, err.msg)
		}
		if prev, dup := env.Vars[name]; dup {
			env.Notes = append(env.Notes, Problem{Severity: SeverityWarning, Category: CategoryValues, Name: name,
				Pos:     Pos{File: file, Line: lineNo, Col: start + 1},
				Message: fmt.Sprintf("%s is set twice (first at line %d); the last one wins", name, prev.Pos.Line),
				Hint:    "remove the duplicate"})
		}
		env.Vars[name] = Var{Name: name, Value: value, Pos: Pos{File: file, Line: lineNo, Col: valCol}}
	}
	return env, nil
}

type valueError struct {
	col int
	msg string
}

func dotenvValue(line string, p int) (string, *valueError) {
	if p == len(line) {
		return "", nil
	}
	var (
		out strings.Builder
		end int
	)
	switch q := line[p]; q {
	case '\'':
		j := strings.IndexByte(line[p+1:], '\'')
		if j < 0 {
			return "", &valueError{p, "unterminated single quote"}
		}
		out.WriteString(line[p+1 : p+1+j])
		end = p + 2 + j
	case '"':
		j := p + 1
		for ; j < len(line) && line[j] != '"'; j++ {
			if line[j] != '\\' {
				out.WriteByte(line[j])
				continue
			}
			if j+1 == len(line) {
				return "", &valueError{j, "unterminated double quote"}
			}
			j++
			switch line[j] {
			case '\\', '"', '$':
				out.WriteByte(line[j])
			case 'n':
				out.WriteByte('\n')
			case 'r':
				out.WriteByte('\r')
			case 't':
				out.WriteByte('\t')
			default:
				return "", &valueError{j - 1, fmt.Sprintf("unknown escape \\%c", line[j])}
			}
		}
		if j == len(line) {
			return "", &valueError{p, "unterminated double quote"}
		}
		end = j + 1
	default:
		end = len(line)
		for j := p; j < len(line); j++ {
			if line[j] == '#' && j > p && (line[j-1] == ' ' || line[j-1] == '\t') {
				end = j
				break
			}
			if line[j] == '"' || line[j] == '\'' {
				return "", &valueError{j, "quote inside an unquoted value (quote the whole value)"}
			}
		}
		return strings.TrimRight(line[p:end], " \t"), nil
	}
	rest := skipBlank(line, end)
	if rest < len(line) && line[rest] != '#' {
		return "", &valueError{rest, "unexpected text after the closing quote"}
	}
	return out.String(), nil
}

func skipBlank(s string, p int) int {
	for p < len(s) && (s[p] == ' ' || s[p] == '\t') {
		p++
	}
	return p
}

func isNameByte(b byte, first bool) bool {
	switch {
	case b == '_', b >= 'A' && b <= 'Z', b >= 'a' && b <= 'z':
		return true
	case b >= '0' && b <= '9':
		return !first
	}
	return false
}
