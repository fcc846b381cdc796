package gen

import "strings"

// Kind is the kind of an argument or reply type.
type Kind int

// Argument and reply kinds.
const (
	None Kind = iota
	String
	Bytes
	Int64
	Float64
	Bool
	Duration   // argument only: sent as integer milliseconds
	Time       // argument only: sent as unix milliseconds
	StringList // []string
	Int64List  // []int64
	StringMap  // map[string]string from flat pairs
	Record     // {field type, ...} from an array
)

// Type is an argument or reply type.
type Type struct {
	Kind     Kind
	Nullable bool    // T?: nil reply allowed
	Fields   []Field // Record only
}

// Field is one field of a record reply.
type Field struct {
	Name string
	Type Type
}

// String renders the type as written in annotations.
func (t Type) String() string {
	var s string
	switch t.Kind {
	case Record:
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = f.Name + " " + f.Type.String()
		}
		s = "{" + strings.Join(parts, ", ") + "}"
	default:
		s = kindNames[t.Kind]
	}
	if t.Nullable {
		s += "?"
	}
	return s
}

var kindNames = map[Kind]string{
	None: "none", String: "string", Bytes: "bytes", Int64: "int64", Float64: "float64",
	Bool: "bool", Duration: "duration", Time: "time", StringList: "[]string",
	Int64List: "[]int64", StringMap: "map[string]string",
}

// Param is a key or an argument.
type Param struct {
	Name     string // as annotated
	Type     Type   // String for keys
	Variadic bool
	Doc      string
	// Commands are the values an argument that names a Redis command may
	// take (@commands); the generated callers refuse any other.
	Commands []string
	// NonEmpty is set on a variadic key or argument that a command of the
	// script gets with unpack(KEYS) or unpack(ARGV) and takes too few
	// arguments without: the generated callers refuse an empty list
	// before anything is sent.
	NonEmpty bool
	// Min, with NonEmpty, is the fewest values the list must hold: more
	// than 1 when the command gets it through an unpack from past the
	// fixed ones (unpack(ARGV, 3) after one @arg: the list's first value
	// is skipped) or needs several of it (HSET key field value). The
	// generated callers refuse a shorter list before anything is sent.
	Min int
	// Capped is set on a variadic key or argument that a command taking a
	// fixed number of arguments gets whole through unpack (GET of
	// unpack(KEYS)); Max is the most values the list may hold there. The
	// generated callers refuse a longer list before anything is sent:
	// Redis would fail the command after the script's earlier writes.
	Capped bool
	Max    int
	// Group, when above 1, is set on a variadic key or argument that a
	// command taking its words in groups (HSET key field value ...) gets
	// through unpack to its end: the generated callers refuse a count
	// whose remainder by Group is not GroupRem (which makes the groups
	// whole with the words before it) before anything is sent.
	Group, GroupRem int
	// MoreGroups are the conditions of that kind other commands of the
	// script put on the same list's count, each checked as Group is.
	MoreGroups []GroupCount
	// Number is set on an int64 or time argument the script reads as a Lua number
	// (a double, exact to 2^53): the generated callers refuse a value
	// beyond ±2^53 before anything is sent.
	Number bool
	// Tagged is set on a key the script extends on the right (KEYS[1] ..
	// ':x'): on a Cluster the generated callers refuse a value without a
	// hash tag before anything is sent.
	Tagged bool
}

// GroupCount is a condition on a variadic list's count: its remainder by
// Size must be Rem (see Param.Group).
type GroupCount struct {
	Size, Rem int
}

// ErrorDecl is an @error declaration.
type ErrorDecl struct {
	Code string
	Text string
}

// Script is the language-neutral description of one annotated script: what
// the emitter sees.
type Script struct {
	Name      string
	File      string // path as shown to users, e.g. scripts/mutex_acquire.lua
	Doc       []string
	Keys      []Param
	Args      []Param
	Return    Type
	Errors    []ErrorDecl
	ReadOnly  bool
	Retryable bool
	// Flagged is set when the script starts with a #!lua line: Redis then
	// runs it with Flags rather than in its compatibility mode for scripts
	// without one.
	Flagged bool
	// Flags are the script flags of the #!lua line (no-writes, allow-oom,
	// ...), in file order, without duplicates.
	Flags  []string
	Source string
	SHA1   string
}

// Package is everything one generator run emits.
type Package struct {
	Name    string
	Scripts []*Script // sorted by Name
}
