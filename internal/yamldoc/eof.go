package yamldoc

// lineBreak returns the length in bytes of the line break at data[i], 0
// when there is none. The breaks are those yaml.v3's reader counts lines
// by (YAML 1.1): CR LF as one, CR, LF, NEL (U+0085), LS (U+2028) and PS
// (U+2029), so lines counted here match the lines of its errors and nodes.
func lineBreak(data []byte, i int) int {
	switch data[i] {
	case '\n':
		return 1
	case '\r':
		if i+1 < len(data) && data[i+1] == '\n' {
			return 2
		}
		return 1
	case 0xC2:
		if i+1 < len(data) && data[i+1] == 0x85 {
			return 2
		}
	case 0xE2:
		if i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xA8 || data[i+2] == 0xA9) {
			return 3
		}
	}
	return 0
}

// lineCount is the number of lines of data, counted as yaml.v3 counts
// them (lineBreak): a last line without a break counts, empty data has
// none.
func lineCount(data []byte) int {
	n, endsWithBreak := 0, false
	for i := 0; i < len(data); {
		if b := lineBreak(data, i); b > 0 {
			n, endsWithBreak = n+1, true
			i += b
			continue
		}
		endsWithBreak = false
		i++
	}
	if len(data) > 0 && !endsWithBreak {
		n++
	}
	return n
}

// pastEndLine corrects the 1-based line of a syntax error that yaml.v3
// marks at the end of the stream. Its scanner puts the end of the stream
// on a line after the last one ("x: [1," then the end of the file: the
// node the ',' promises is missing), and ErrorLine's correction of a
// parser error's 0-based line then points past the file. The problem is
// the construct left open: the line returned is that of the innermost
// '[', '{' or quoted scalar still open at the end of data
// (unclosedFlowLine), else the last line. A line within data, or 0 (no
// position), is returned as it is.
func pastEndLine(data []byte, line int) int {
	last := lineCount(data)
	if line <= last || last == 0 {
		return line
	}
	if open := unclosedFlowLine(data); open > 0 {
		return open
	}
	return last
}

// unclosedFlowLine returns the 1-based line (lines as lineBreak counts
// them) of the innermost flow collection ('[' or '{') or quoted scalar
// still open at the end of data, 0 when every one is closed. It reads
// only as much YAML as that needs:
//
//   - a comment ('#' at a line start or after a space or tab) runs to the
//     end of its line;
//   - a quote starts a quoted scalar only where a token can start (a line
//     start, after a space or tab, or after one of "[{,:"), so "don't" in
//     a plain scalar is not one; a backslash escape in double quotes and
//     a doubled quote in single quotes do not close it;
//   - outside every flow collection, '[' and '{' open one only where a
//     token can start ("a[b" is a plain scalar), and a block scalar ('|'
//     or '>' where a token can start) runs over the lines indented deeper
//     than the line it starts on, or blank;
//   - inside a flow collection every '[' and '{' opens one, and ']' and
//     '}' close the innermost.
//
// It never fails: any bytes give a line in [0, lineCount(data)].
func unclosedFlowLine(data []byte) int {
	var open []int // lines of the open flow collections, innermost last
	line, indent := 1, 0
	// blank: at a line start or after a space or tab; blockIndent: the
	// indentation a block scalar's lines exceed, -1 outside one.
	lineStart, tokenStart, blank := true, true, true
	blockIndent := -1
	for i := 0; i < len(data); {
		if n := lineBreak(data, i); n > 0 {
			line++
			i += n
			indent, lineStart, tokenStart, blank = 0, true, true, true
			continue
		}
		b := data[i]
		if lineStart && b == ' ' {
			indent++
			i++
			continue
		}
		if lineStart {
			lineStart = false
			if blockIndent >= 0 {
				if indent > blockIndent {
					// A line of the block scalar: skip it.
					for i < len(data) && lineBreak(data, i) == 0 {
						i++
					}
					continue
				}
				blockIndent = -1
			}
		}
		next := i + 1
		switch {
		case b == '#' && blank:
			for next < len(data) && lineBreak(data, next) == 0 {
				next++
			}
		case (b == '"' || b == '\'') && tokenStart:
			start, closed := line, false
			for next < len(data) && !closed {
				if n := lineBreak(data, next); n > 0 {
					line++
					next += n
					continue
				}
				c := data[next]
				next++
				switch {
				case b == '"' && c == '\\' && next < len(data):
					if n := lineBreak(data, next); n > 0 {
						line++ // an escaped line break
						next += n
					} else {
						next++
					}
				case c == b && b == '\'' && next < len(data) && data[next] == '\'':
					next++ // '' inside single quotes
				case c == b:
					closed = true
				}
			}
			if !closed {
				return start
			}
		case (b == '[' || b == '{') && (tokenStart || len(open) > 0):
			open = append(open, line)
		case (b == ']' || b == '}') && len(open) > 0:
			open = open[:len(open)-1]
		case (b == '|' || b == '>') && tokenStart && len(open) == 0:
			blockIndent = indent
			for next < len(data) && lineBreak(data, next) == 0 {
				next++ // the header: indicators, a comment
			}
		}
		blank = b == ' ' || b == '\t'
		tokenStart = blank || b == '[' || b == '{' || b == ',' || b == ':'
		i = next
	}
	if len(open) == 0 {
		return 0
	}
	return open[len(open)-1]
}
