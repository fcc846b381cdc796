package gen

import (
	"fmt"
	"strings"

	"github.com/scriptlock/scriptlock/gen/parse"
)

var argKinds = map[string]Kind{
	"string": String, "bytes": Bytes, "int64": Int64, "float64": Float64,
	"bool": Bool, "duration": Duration, "time": Time,
}

var replyKinds = map[string]Kind{
	"none": None, "string": String, "bytes": Bytes, "int64": Int64, "float64": Float64,
	"bool": Bool, "[]string": StringList, "[]int64": Int64List, "map[string]string": StringMap,
}

var fieldKinds = map[string]Kind{
	"string": String, "bytes": Bytes, "int64": Int64, "float64": Float64, "bool": Bool,
}

// parseArgType parses an @arg type.
func parseArgType(s string) (Type, error) {
	if k, ok := argKinds[s]; ok {
		return Type{Kind: k}, nil
	}
	if strings.HasSuffix(s, "?") {
		if _, ok := argKinds[strings.TrimSuffix(s, "?")]; ok {
			return Type{}, fmt.Errorf("argument types cannot be nullable: %q", s)
		}
	}
	return Type{}, fmt.Errorf("unknown type %q: argument types are %s", s, argTypeList)
}

const (
	argTypeList   = "string, bytes, int64, float64, bool, duration (sent as milliseconds), time (sent as unix milliseconds)"
	replyTypeList = "none, string, bytes, int64, float64, bool, []string, []int64, map[string]string, a record {name type, ...} of string, bytes, int64, float64 or bool fields; add ? for a nullable reply"
)

// splitReturn splits the text of an @return line into the type and an
// optional trailing description. A record type runs to its closing brace.
func splitReturn(text string) (typ, rest string, err error) {
	if strings.HasPrefix(text, "{") {
		end := strings.IndexByte(text, '}')
		if end < 0 {
			return "", "", fmt.Errorf("record type %q has no closing }", text)
		}
		end++
		if end < len(text) && text[end] == '?' {
			end++
		}
		return text[:end], strings.TrimSpace(text[end:]), nil
	}
	if i := strings.IndexAny(text, " \t"); i >= 0 {
		return text[:i], strings.TrimSpace(text[i:]), nil
	}
	return text, "", nil
}

// parseReplyType parses an @return type: a scalar, list, map or record,
// optionally followed by ? for a nullable reply.
func parseReplyType(s string) (Type, error) {
	base, nullable := strings.CutSuffix(s, "?")
	if strings.HasPrefix(base, "{") {
		t, err := parseRecord(base)
		t.Nullable = nullable
		return t, err
	}
	k, ok := replyKinds[base]
	if !ok {
		return Type{}, fmt.Errorf("unknown type %q: reply types are %s", s, replyTypeList)
	}
	if k == None && nullable {
		return Type{}, fmt.Errorf("type none cannot be nullable")
	}
	return Type{Kind: k, Nullable: nullable}, nil
}

func parseRecord(s string) (Type, error) {
	body, ok := strings.CutPrefix(s, "{")
	if ok {
		body, ok = strings.CutSuffix(body, "}")
	}
	if !ok {
		return Type{}, fmt.Errorf("malformed record type %q: want {name type, ...}", s)
	}
	t := Type{Kind: Record}
	seen := map[string]bool{}
	for _, part := range strings.Split(body, ",") {
		ws := strings.Fields(part)
		if len(ws) != 2 {
			return Type{}, fmt.Errorf("malformed record field %q: want name type", strings.TrimSpace(part))
		}
		name, typ := ws[0], ws[1]
		if !isIdent(name) {
			return Type{}, fmt.Errorf("invalid record field name %q", name)
		}
		if msg := goIdentErr(name); msg != "" {
			return Type{}, fmt.Errorf("invalid record field name %q: %s", name, msg)
		}
		goName := camel(name)
		if seen[goName] {
			return Type{}, fmt.Errorf("duplicate record field %q", name)
		}
		seen[goName] = true
		base, nullable := strings.CutSuffix(typ, "?")
		k, ok := fieldKinds[base]
		if !ok {
			if _, other := replyKinds[base]; other {
				return Type{}, fmt.Errorf("record field %s: type %q is not allowed in a record (want string, bytes, int64, float64 or bool)", name, typ)
			}
			return Type{}, fmt.Errorf("unknown type %q: record fields are string, bytes, int64, float64 or bool, with ? when nullable", typ)
		}
		t.Fields = append(t.Fields, Field{Name: name, Type: Type{Kind: k, Nullable: nullable}})
	}
	return t, nil
}

// errAt builds a checker error.
func errAt(file string, pos parse.Pos, format string, args ...any) Error {
	return Error{File: file, Line: pos.Line, Col: pos.Col, Msg: fmt.Sprintf(format, args...)}
}
