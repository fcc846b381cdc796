// Package parse reads an annotated Lua script: the directives and doc comment
// of its leading comment block, and facts from its syntax tree (KEYS and ARGV
// uses, redis.call sites). It knows nothing about Go.
package parse

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"reflect"
	"strings"

	"github.com/yuin/gopher-lua/ast"
	luaparse "github.com/yuin/gopher-lua/parse"
)

// Pos is a 1-based line and byte column in a script file.
type Pos struct {
	Line, Col int
}

// Error is a problem found while parsing, at a position in the file.
type Error struct {
	Pos Pos
	Msg string
}

func (e Error) Error() string { return fmt.Sprintf("%d:%d: %s", e.Pos.Line, e.Pos.Col, e.Msg) }

// Word is a whitespace-separated word of a directive line.
type Word struct {
	Text string
	Pos  Pos
}

// Directive is one `-- @name ...` line of the leading comment block.
type Directive struct {
	Name    string // without the @
	Pos     Pos    // of the @
	Text    string // everything after the name, trimmed
	TextPos Pos    // of the first byte of Text (end of line when Text is empty)
}

// fixedCount is how many @key (table KEYS) or @arg (ARGV) directives come
// before the first variadic one (name...), -1 when none is variadic: past
// them, KEYS[n] and ARGV[n] read a list the callers may pass shorter.
func (f *File) fixedCount(table string) int {
	name := "arg"
	if table == "KEYS" {
		name = "key"
	}
	n := 0
	for _, d := range f.Directives {
		if d.Name != name {
			continue
		}
		if ws := d.Words(); len(ws) > 0 && strings.HasSuffix(ws[0].Text, "...") {
			return n
		}
		n++
	}
	return -1
}

// Words splits the directive text into words with their positions.
func (d Directive) Words() []Word { return SplitWords(d.Text, d.TextPos) }

// SplitWords splits text that starts at pos into whitespace-separated words.
func SplitWords(text string, pos Pos) []Word {
	var words []Word
	i := 0
	for i < len(text) {
		for i < len(text) && isSpace(text[i]) {
			i++
		}
		start := i
		for i < len(text) && !isSpace(text[i]) {
			i++
		}
		if i > start {
			words = append(words, Word{Text: text[start:i], Pos: Pos{pos.Line, pos.Col + start}})
		}
	}
	return words
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' }

// Use is one use of KEYS or ARGV in the script body.
type Use struct {
	Pos Pos
	// Index is the literal index of KEYS[n]; 0 when the use is not a literal index.
	Index int
	// Literal is the index expression text when it is a number literal that is
	// not a positive integer (KEYS[0], KEYS[1.5]).
	BadLiteral string
	// Dynamic is true for KEYS[expr] with a non-literal expr.
	Dynamic bool
	// Bare is true when the table itself is used (#KEYS, unpack(KEYS), ipairs(KEYS)).
	Bare bool
}

// Source is where a value comes from, as far as the walker can tell.
type Source int

// Value sources.
const (
	SourceUnknown Source = iota // anything the walker does not follow
	SourceKey                   // KEYS[i], or built from it keeping its start (KEYS[1] .. ':x')
	SourceArgv                  // ARGV[i], or built from it
	SourceLiteral               // a string or number literal, or built from one
	SourceRedis                 // a redis.call reply, or a field of one
	SourceNil                   // nil or false
	// SourceKeyChanged is a key the script changed with a method or a
	// function of the string library (KEYS[1]:sub(1, 3),
	// string.lower(KEYS[1])): another key, maybe in another hash slot.
	SourceKeyChanged
	// sourcePending is a parameter's value before the walk that finds its
	// calls (see Parse): any value merged with it is that value. No File
	// holds it.
	sourcePending
)

// Value is the source of an expression, with a short text for messages
// (KEYS[1], ARGV[2], "x", a local's name).
type Value struct {
	Source Source
	Text   string
	// Derived is set when the value is built from its source rather than
	// being it (ARGV[1] .. 'x'), or a local was assigned several values.
	Derived bool
	// Extended is set on a key (SourceKey) that may be a key extended on
	// the right (KEYS[1] .. ':x'): it stays in the key's slot only when the
	// key has a hash tag.
	Extended bool
	// Stringified is set on KEYS[n] or ARGV[n] passed through tostring,
	// which gives "nil" for a missing element: never nil.
	Stringified bool
}

// Arg is one argument of a redis.call site.
type Arg struct {
	Pos Pos
	// Literal is set when the argument is a string or number literal, or a
	// concatenation whose leftmost operand is a string literal (then it holds
	// that operand).
	Literal *string
	// Exact is set when the argument is exactly a string or number literal
	// (then Literal holds it).
	Exact bool
	// Number is set when the argument is exactly a number literal (1, -1,
	// 1e3, 0x10): Redis gets the number's value, not the text.
	Number bool
	Value  Value
	// Expands is set on a last argument that gives any number of values
	// (a call such as unpack(ARGV), or ...).
	Expands bool
	// Unpacks is "KEYS" or "ARGV" when the argument is unpack(KEYS) or
	// unpack(ARGV), which give every key or argument the callers pass, or
	// unpack(KEYS, i, j) with integer literals, which gives those from
	// UnpackFrom (0 without i: the first) to UnpackTo (0 without j: the
	// last).
	Unpacks              string
	UnpackFrom, UnpackTo int
	// Gsub is set on a last argument that is a call of string.gsub (or
	// s:gsub(...)), which gives two values: the string and the count of
	// replacements, both passed on.
	Gsub bool
	// Fraction says what the argument is ("a division", "a product with
	// 1.5") when it is arithmetic that may give a number with a fraction:
	// Redis refuses such a number where it reads an integer.
	Fraction string
	// Negation is set when the argument negates a value the checker cannot
	// read (-n, n * -1), directly or through a local that holds it (then
	// Local and Line name it): Redis refuses the "-0" it gets when the
	// value is 0 where it reads an integer.
	Negation Negation
	// IndexOf is set (with Name, the local's name) when the argument is
	// the key variable of a loop over a command's reply (for i, x in
	// pairs(h)): it is then an index, 1, 2, ..., and IndexOf is 1 + the
	// index of that command's call in File.Calls.
	IndexOf int
	Name    string
	// NotString names an argument that is literally no string or number
	// ("nil", "true", "false", "a table", "a function"): Redis refuses the
	// call. "" otherwise.
	NotString string
	// Held are the literals (a string's quoted, as Value.Text) that the
	// local HeldBy, which the argument is exactly, holds on some paths,
	// when it is not checked as one literal (Literal): Redis gets each of
	// them on a path.
	Held   []string
	HeldBy string
	// HeldMore is set when that local may hold more literals than Held
	// lists (a bound): the rest are not checked.
	HeldMore bool
	// MayNil names the local the argument is exactly when it holds nil
	// or false on some paths (declared without a value and given one in
	// an if only) and is not tested there.
	MayNil string
	// NilParam names the parameter of a local function the argument is
	// exactly, untested there, when a call of the function passes it nil
	// or false, or no value (f(nil), f()): Redis refuses the call then.
	NilParam string
	// NilParamOf names, when NilParam is a local given a parameter on
	// some paths (y = v), that parameter.
	NilParamOf string
	// MayNotString is set when the argument is a call of a local function
	// some of whose returns, not all, pass it a value that is no string
	// or number (nil, a boolean, a table: return 'x', {} as the last
	// argument): what it is, for messages. Redis refuses the call on
	// those paths.
	MayNotString string
	// Indexed is n when the argument is KEYS[n] or ARGV[n] written in
	// place with n a number literal (Value.Source says which table): past
	// the fixed keys or arguments, it reads a variadic list that may be
	// shorter, and Redis refuses the nil it then gets.
	Indexed int
	// IndexedOnPaths is set when the argument is that element only on some
	// paths of the call (c and 'z' or ARGV[3], a local given it in an if,
	// a parameter some calls pass it): a run that makes the call need not
	// need the element.
	IndexedOnPaths bool
	// Returned is n when the argument is a call of a local function that
	// may return ARGV[n] written in place, or the parameter a call passes
	// it (local function f() return ARGV[1] end, then f()), or a local
	// given such a call, and no other element: Redis gets that argument
	// there on some path at least.
	Returned int
	// Gives is n when the argument expands (Expands) and is a call of a
	// local function each path of which returns n values, n >= 1, none of
	// them a call or ... (local function f() return KEYS[1], 'x' end):
	// the command gets that many there. 0 when not known.
	Gives int
	// GivesOnPaths are the counts of values such a function's paths
	// return, sorted, when they are not all the same (local function f(c)
	// if c then return KEYS[1], 'x' end return KEYS[1] end; a path that
	// ends without a return gives none): the command gets each on some
	// path. Nil otherwise, or when a path returns a call or ....
	GivesOnPaths []int
	// OnPaths are, for such a call of a local function none of whose
	// returns ends in a call or ..., the values each return gives (a
	// literal as written, Exact; anything else unknown), and none for a
	// path that may end without a return: the command gets the arguments
	// before it and one of them.
	OnPaths [][]Arg
	// Nothing is set on a last argument that is a call of a local function
	// that returns no value on any path (local function f() end): it
	// passes nothing, and the command gets the arguments before it alone.
	Nothing bool
}

// Call is a redis.call / redis.pcall site.
type Call struct {
	Pos        Pos    // of the callee (redis)
	Func       string // "redis.call" or "redis.pcall"
	Command    string // as written; "" when the name is not a literal
	CommandPos Pos    // of the command name argument
	Dynamic    Value  // the command name's source when it is not a literal
	// NoName is the command name as Redis reads it when it is a literal
	// that names no command: "" or a number (`""`, `1`).
	NoName string
	// NameNotString names a command name that is literally no string or
	// number, as Arg.NotString does: Redis refuses the call.
	NameNotString string
	Args          []Arg // arguments after the command name
	// Outer is 1 + the index in File.Calls of the call whose arguments
	// hold this one (redis.call('SET', k, redis.call('GET', k2))), 0 for
	// none: the outer call is recorded first but runs after.
	Outer int
	// Deferred is set on a call written in a local function the script
	// calls only by name (the innermost function it is in; see
	// Func.Escaped): it runs only where the function is called, from
	// RunsFrom on (the first call of the function written outside it; a
	// zero Pos for none), not where it is written, in the lines DeferSpan.
	Deferred  bool
	DeferSpan [2]int
	RunsFrom  Pos
	// Sure is set when every run of the script makes the call unless it
	// fails first: it is in the chunk's own statements, or in the body of a
	// local function such a call calls (local function f() ... end, f()),
	// outside the branches of an if, loop bodies and the right of and/or,
	// and no statement before it may return.
	Sure bool
	// Protected is set when the call is in the body of a function written
	// as an argument of pcall or xpcall (pcall(function() ... end)): its
	// error is handed to the script, as redis.pcall's is.
	Protected bool
	// Unreached is set when the call is in the body of a local function
	// the script never reads (nor one only such a function reads), or of a
	// function written in one: it never runs, and needs nothing of the
	// callers' lists.
	Unreached bool
}

// Global is an assignment to a global variable (or a global function
// definition), which Redis refuses at run time.
type Global struct {
	Pos      Pos
	Name     string
	Function bool
}

// TableWrite is a change to KEYS or ARGV (File.TableWrites).
type TableWrite struct {
	Pos   Pos
	Name  string
	Table string
	// Held is true when the table itself is held or passed on (a local, a
	// table's field, a function's argument) where the checker cannot see
	// what is done with it.
	Held bool
}

// ErrorSite is a place that raises or returns an error with a literal
// message: redis.error_reply('CODE ...'), {err = 'CODE ...'}, error('...').
type ErrorSite struct {
	Pos  Pos
	Text string // the literal (the string literals a concatenation starts with, joined)
	Via  string // "redis.error_reply", "{err = ...}", "error()"
	// Joined is what a concatenation joins to Text: "" for nothing (the
	// message is Text alone, or has no literal start), "number" for a
	// number literal, "value" for any other value.
	Joined string
	// Fn is, for a reply written in a local function whose message is a
	// parameter's, the function: Pos is then a call of it, and Text what
	// that call passes, read into the message.
	Fn string
}

// ReturnKind is what a return statement gives, when the walker can tell.
type ReturnKind int

// Return kinds.
const (
	ReturnUnknown ReturnKind = iota
	ReturnNil                // nil, false or no value: a nil reply
	ReturnInt                // a number literal or true: an integer reply
	ReturnString             // a string literal or status reply
	ReturnArray              // a table constructor: an array reply
	ReturnError              // an error reply
	ReturnCall               // redis.call('cmd', ...): the command's reply
	ReturnBool               // a comparison or not: 1 when true, nil when false
	ReturnOneOf              // a local that holds one of Alts (assigned in nested blocks)
	// ReturnEither is an and/or expression (v or 0, c and 'a' or 'b'), which
	// gives any of Alts as the data decides: each must fit @return.
	ReturnEither
)

// Negation is a negation of a value the checker cannot read: -n (not of a
// number literal), or a product with such a negation or with a negative
// number literal (n * -1, -n * 2). A Lua number is a double, so the
// negation of 0 is -0, which Redis gets as "-0" (Redis 7 writes number
// arguments with %.17g), and refuses where it reads an integer; 0 - n
// gives 0.
type Negation struct {
	Shown string // as written: -n, n * -1
	Of    string // the value negated: n, n * 2 for -n * 2
	Fix   string // that value subtracted from 0: 0 - n, 0 - (n + 1)
	// Local is the local the argument is, when it holds the negation
	// (assigned at Line); "" for the negation written in place.
	Local string
	Line  int
}

// Return is one return statement.
type Return struct {
	Pos  Pos // of the returned expression (or of return)
	Kind ReturnKind
	// End marks the end of the script, which a run can reach without a
	// return statement: a nil reply (Kind ReturnNil, Pos its last token).
	End  bool
	Text string // the literal, for messages
	Len  int    // ReturnArray: the number of values, -1 when not fixed
	// Elems are the kinds of the first Len values of a ReturnArray, as far
	// as the walker can tell (ReturnUnknown otherwise). A literal nil ends
	// the array: Redis reads a table up to its first nil.
	Elems []Return
	// Named are the names of a returned table constructor's named fields
	// ({count = n}), which Redis drops: it reads a table as an array, from
	// index 1 up to its first nil. Empty for a status or error table
	// ({ok = ...}, {err = ...}).
	Named   []string
	Unnamed int // the values such a table lists without a name
	// More is how many values the return gives after the first
	// (return a, b): Redis replies the first alone.
	More     int
	Command  string // ReturnCall: the command name
	CallFunc string // ReturnCall: redis.call or redis.pcall
	Call     int    // ReturnCall: index of the call in File.Calls
	// Local is the name of the local returned (return v), when the walker
	// knows what it holds: the fields above describe that value, From is
	// where it was assigned.
	Local string
	From  Pos
	// NotNil is set on the return of a local the script tested for nil
	// before (an early return under if not v, or in the body of if v):
	// a nil reply, false, does not reach it.
	NotNil bool
	// Alts are the values a ReturnOneOf local may hold, each with Local and
	// From set as for a local holding that value alone, or those a
	// ReturnEither expression may give.
	Alts []Return
	// Unless are, for a value of a ReturnEither, the calls on the left of
	// an and/or one of which must reply nil for it to be given (v or 0:
	// 0 only when v's call replies nil); empty when it may be given
	// whatever they reply.
	Unless []Return
	// NilElems are the values of a returned table constructor that are nil
	// when a command replies nil (tonumber of its reply, not tested):
	// Redis ends an array at its first nil.
	NilElems []NilElem
	// Boolean is set on a Lua boolean: true, false, a comparison or not.
	// Redis replies it as 1 or nil, or, after redis.setresp(3), as a RESP3
	// boolean.
	Boolean bool
	// Fraction says what a returned number is when it may have a fraction
	// ("a division", "a product with 0.9"), which Redis truncates toward
	// zero in its integer reply; empty otherwise.
	Fraction string
	// Negation is set on a local's value that negates a value the checker
	// cannot read (local d = -n).
	Negation Negation
	// LuaNil is set on a literal nil that an and/or may give (ReturnNil is
	// also false), on a local's value that is Lua's nil (local v, v =
	// nil), and on a returned table's value that is a local (Local) that
	// may hold it on a path: in a table, Redis ends the array there.
	LuaNil bool
	// Table is set on the value of a local assigned a table constructor
	// (its Kind unknown: what the script puts in it is not followed).
	Table bool
	// MayNil is set on a ReturnUnknown that is nil or false on some
	// paths: a local declared without a value and given one the checker
	// does not follow (or more than it follows) in an if only.
	MayNil bool
}

// FieldRead is t.name or t['name'] where t is a command's reply, directly
// or through a local holding it.
type FieldRead struct {
	Pos  Pos    // zero for a direct call: the call's position
	Text string // t.name, as written (or redis.call(...).name)
	Name string
	Call int // the index of the call in File.Calls
	// Probed is set for a read in a statement that tests a RESP3 shape
	// field of the reply (if r.map then ... else ... end, r.set or r):
	// the script reads it as either protocol hands it to Lua.
	Probed bool
}

// ElemRead is t[k] (a key the walker cannot read as a string), ipairs(t)
// or pairs(t) where t is a command's reply, directly or through a local
// holding it: after redis.setresp(3), a map or set reply reaches Lua as a
// table {map = ...} or {set = ...}, with nothing else in it.
type ElemRead struct {
	Pos  Pos    // of t; zero for a direct call: the call's position
	How  string // "index", "ipairs", "pairs", "unpack" or "table.concat"
	Text string // t[1], ipairs(t), as written (redis.call(...) for a call)
	Obj  string // t, as written
	Call int    // the index of the call in File.Calls
	// Probed is as FieldRead's.
	Probed bool
}

// Truth is a command's reply (or a local holding one) tested for truth.
type Truth struct {
	Pos     Pos     // of the reply's call, or of the local's name
	Not     bool    // not x, rather than a condition
	Operand Operand // a reply (OperandReply), or exactly ARGV[n] (OperandString with Argv)
}

// Operation is a command's reply, tonumber of one, or a local holding
// either, used where Lua fails at run time on false (a nil reply), on nil or
// on a table: an operand of arithmetic, of .., of # or of an ordering
// comparison, the object of a method call, or the first argument of a
// library function that reads a string.
type Operation struct {
	Pos Pos // of the operator
	// Op is +, -, *, /, %, ^, .., # or <, <=, >, >=; "unary -" for a
	// negation; ":name" for a method call on the value (v:sub(1, 3)); a
	// library function that reads a string first (string.len, cjson.decode),
	// or string.format, whose values must be strings or numbers;
	// "arg" for an argument of redis.call or redis.pcall (after the command
	// name), which Redis refuses unless it is a string or a number.
	Op string
	// In and Arg are, for Op "arg", the index in File.Calls of the call the
	// value is an argument of, and which argument it is (1: the first after
	// the command name); Arg is, for Op "string.format", which argument of
	// string.format it is (2: the first after the format).
	In, Arg int
	// Operand is the reply's (Type OperandReply), with the text of what is
	// written (the reply of GET, or n for a local).
	Operand Operand
	// Tonumber is set when the operand is tonumber(...) of the reply: a
	// number, or nil where the reply is false or no number.
	Tonumber bool
	// Tested is set when the operand is a local that the script read
	// otherwise (a condition, a comparison with ==, and/or, an argument)
	// after it was assigned and before this use: it may have dealt with
	// nil there.
	Tested bool
	// Probed is as FieldRead's.
	Probed bool
	// Later are, for an operation on a parameter a call passes the reply
	// (local function f(v) ... end; f(redis.call('GET', k))), the indexes
	// [from, to) in File.Calls of the calls written in the function: they
	// run after the reply is taken, so they make sure of no value in it.
	Later [2]int
}

// NilOperand is a local of the function that reads it, untested there,
// that holds nil or false there on some paths at least (declared without
// a value, or assigned nil or false, and given a value only on some paths;
// given an and whose left is a comparison), read as an operand of
// arithmetic, of a concatenation or of #: Lua fails the script on those
// paths ("attempt to concatenate local 'v' (a nil value)"). A command's
// reply is an Operation's business.
type NilOperand struct {
	Pos  Pos    // of the operator
	Op   string // as Operation's: .., #, +, unary -, ...
	Name string
	// Always is "nil" or "false" when the local holds it on every path,
	// "" when it may hold a value; False is set when the nil or false it
	// may hold is false (Lua's message calls it a boolean).
	Always string
	False  bool
	// Protected is as ElemOp's.
	Protected bool
}

// NilElem is a value of a returned table that may be nil.
type NilElem struct {
	Index   int    // 1, 2, ...
	Text    string // n (tonumber of the reply of GET)
	Command string
}

// ElemOp is KEYS[n] or ARGV[n] written in place, tonumber(ARGV[n]), or a
// local holding either and not tested first, as an operand of arithmetic
// or of a concatenation (ARGV[3] + 1, 'x' .. v), or the value assert
// tests (assert(ARGV[3])): nil there when the list is short, and Lua
// fails the script ("attempt to perform arithmetic on a nil value",
// "assertion failed!"). Not on the right of an and/or, whose left may
// test it.
type ElemOp struct {
	Pos   Pos    // of the operator
	Table string // KEYS or ARGV
	N     int
	Text  string // for messages: ARGV[3] in +
	// Protected is set when the operation is in a function passed to pcall
	// or xpcall, which hands the error to the script, or in one the script
	// never runs (see Call.Unreached).
	Protected bool
	// Sure is set when every run of the script reads the operand unless
	// it fails first (see Call.Sure).
	Sure bool
	// OnPaths is set when the operand is the element on some paths only
	// (a local given it in an if, a call of a function that may return
	// it, a parameter a call passes it): a run that reads the operand
	// need not need the element.
	OnPaths bool
}

// RedisLibCall is a call of redis.name other than call and pcall.
type RedisLibCall struct {
	Pos  Pos // of redis
	Name string
	// Args is the number of arguments, -1 when the last one gives any
	// number (unpack(t), ...).
	Args int
	// First is the first argument, as far as the walker can tell:
	// OperandString or OperandNumber with its literal (Text), or the field
	// (Text redis.LOG_NOTICE) with OperandNumber; OperandUnknown otherwise.
	First Operand
	// Fn is 1 + the index in File.Funcs of the function the call is
	// written in (the innermost), 0 for the main chunk.
	Fn int
	// From and Until are the lines of the innermost if or loop (while,
	// for) of its function the call is written in, which may not run it:
	// 0 for none.
	From, Until int
	// Loops are the lines of the loops (while, for, repeat) of its
	// function it is written in, outermost first: a later iteration runs
	// the body's statements above it after it.
	Loops [][2]int
	// Blocks identify the blocks it is written in, outermost first: one
	// written below it in one of them runs after it.
	Blocks []int
}

// Func is a function of the script: the lines of its body, and where it
// runs.
type Func struct {
	Line, LastLine int
	// Calls are the positions of its calls by name (of the name), and
	// CallsIn the lines of the innermost if or loop (while, for) of its
	// function each is written in, which may not run it: {0, 0} for none.
	Calls   []Pos
	CallsIn [][2]int
	// CallsLoops and CallsBlocks are, for each of Calls, the loops and
	// blocks of its function it is written in (as RedisLibCall's Loops
	// and Blocks): a redis.setresp the function runs in a loop holds at
	// the loop's next iteration.
	CallsLoops  [][][2]int
	CallsBlocks [][]int
	// Escaped is set when it may run where the checker cannot tell: it is
	// no local function, or one also read otherwise (passed, stored,
	// aliased).
	Escaped bool
	// Returns are the lines of its return statements (not those of the
	// functions in it), where it may end before its last statement.
	Returns []int
}

// Unpack is unpack(t) of the whole reply of a command.
type Unpack struct {
	Pos     Pos    // of unpack
	Command string // the command whose reply it is
	Call    int    // the index of its call in File.Calls
	Text    string // the reply of SMEMBERS, or t (the reply of SMEMBERS)
}

// NumberText is tonumber(ARGV[n]), or a local holding it, turned back into
// a string: an operand of .., the argument of tostring, or an argument of
// redis.call, which Redis writes with 17 significant digits.
type NumberText struct {
	Pos  Pos
	Op   string // "..", "tostring" or "arg"
	Argv int    // n
	Text string // tonumber(ARGV[1]), or id (tonumber(ARGV[1]))
	In   int    // Op "arg": the index in File.Calls of the call
}

// Compare is a comparison of two operands.
type Compare struct {
	Pos         Pos    // of the operator
	Op          string // <, >, <=, >=, == or ~=
	Left, Right Operand
}

// OperandType is the Lua type of a compared value, as far as the walker can
// tell from the expression.
type OperandType int

// Operand types.
const (
	OperandUnknown OperandType = iota
	OperandString              // a string literal, a concatenation, an element of KEYS or ARGV
	OperandNumber              // a number literal, an arithmetic result, a length
	OperandReply               // the reply of a redis.call or redis.pcall: its Lua type follows the command's reply
	OperandBool                // true or false
	OperandNil                 // nil
)

// Operand is one side of a Compare.
type Operand struct {
	Type OperandType
	Text string // for messages: ARGV[1], "x", 5, n (ARGV[1]), ...
	Call int    // OperandReply: the index of the call in File.Calls
	// Calls are, for a local holding the reply of one of several calls,
	// the index of each (Call is the first): one made after
	// redis.setresp(3) may be nil.
	Calls []int
	// Argv is n when the operand is exactly ARGV[n] (or a local holding it).
	Argv int
	// Literal is the text of a string literal operand.
	Literal string
}

// RedisValue is redis.call or redis.pcall (or the redis table itself, or a
// function of it picked by a computed name) used as a value rather than
// called directly: what it runs cannot be checked.
type RedisValue struct {
	Pos  Pos
	Text string // redis.call, redis.pcall, redis, redis[...]
}

// Shebang is the first line of a script that starts with "#!": Redis 7
// reads it as the script's flags (#!lua flags=no-writes,allow-oom).
type Shebang struct {
	Text string // the line without its newline, and without a trailing \r
	Pos  Pos    // of the #
}

// File is a parsed script.
type File struct {
	// Source is the script as the Lua parser read it: a byte-order mark
	// and the shebang line are blanked (spaces), so positions stay those
	// of the file.
	Source []byte
	// Shebang is set when the script starts with "#!" (after a byte-order
	// mark, which is reported).
	Shebang    *Shebang
	Doc        []string // doc comment lines, without the leading "-- "
	Directives []Directive
	Keys       []Use
	Argv       []Use
	// Changed holds "KEYS" and "ARGV" when the script passes the table on,
	// holds it in a local or assigns to a field of it: it may then hold
	// other values than the callers passed, and another number of them.
	Changed map[string]bool
	// Measured is, for "KEYS" and "ARGV", the highest index the script
	// tests whether the table holds an element at (if not KEYS[2] then,
	// if type(KEYS[2]) == 'string' then: 2), or MeasuredAll when it reads
	// the table's length (#KEYS): it may test it before a command gets an
	// element up to there (if #KEYS == 0 then return 0 end), so a list
	// that short may be fine. A test of an element shows nothing of those
	// after it.
	Measured map[string]int
	Calls    []Call
	Globals  []Global
	// UnknownGlobals are the reads of global names Redis's script sandbox
	// does not define (Redis fails them at run time).
	UnknownGlobals []Global
	// UnknownRedisFields are the fields of the redis table that Redis 7.0
	// does not define (redis.pcal, redis.LOG_WARN): nil in the script.
	// Function is set for a call.
	UnknownRedisFields []Global
	// UnknownLibFields are the reads of fields of Lua's libraries that the
	// Lua 5.1 of Redis does not define (table.unpack, math.tointeger): nil
	// in the script. Name is library.field.
	UnknownLibFields []Global
	// RedisLibCalls are the calls of the redis table's functions other than
	// call and pcall (redis.log, redis.setresp, redis.error_reply, ...), and
	// those of call and pcall without arguments.
	RedisLibCalls []RedisLibCall
	// Funcs are the functions of the script (RedisLibCalls' Fn indexes it).
	Funcs []Func
	// Unpacks are the calls unpack(t) of a whole command reply (t a direct
	// call or a local holding one): Lua's stack takes about 8000 values.
	Unpacks []Unpack
	// IgnoredArgs are the calls of a library function with an argument
	// that Lua 5.1 ignores though later Lua reads it (math.log's base,
	// math.atan's x, string.rep's separator). Name is library.function.
	IgnoredArgs []Global
	// ReadOnlyWrites are the assignments to a field of the redis table or
	// of a library (string.trim = ...), whose tables Redis 7 makes
	// read-only. Name is table.field.
	ReadOnlyWrites []Global
	// TableWrites are the changes to KEYS or ARGV: an assignment to a
	// field of either (KEYS[1] = ...), and table.insert, table.sort, rawset
	// or table.remove with a position given either (table.remove(ARGV) of the
	// last element leaves the others in place). Name is the change as written
	// (KEYS[...] =, table.insert(KEYS, ...)), Table the table.
	TableWrites []TableWrite
	ErrorSites  []ErrorSite
	// RedisValues are the uses of redis.call and redis.pcall (or of redis)
	// other than direct calls.
	RedisValues []RedisValue
	// Escapes are uses of globals that reach redis.call or code out of the
	// walker's sight: _G, getfenv, setfenv, loadstring, load, dofile,
	// loadfile (Text is the name).
	Escapes []RedisValue
	Returns []Return // of the chunk itself, not of functions it defines
	// Compares are the comparisons (<, ==, ...) whose operands' Lua types
	// the walker can tell on both sides.
	Compares []Compare
	// Fields are reads of a named field (t.name, t['name']) of a command's
	// reply.
	Fields []FieldRead
	// ElemReads are the reads of command replies by an index, ipairs or
	// pairs.
	ElemReads []ElemRead
	// Truths are the command replies (and ARGV[n]) tested for truth: an
	// if, elseif, while or until condition (or an operand of and/or in
	// one), and not.
	Truths []Truth
	// Operations are the command replies (or tonumber of one) used where
	// Lua fails on false, nil or a table: an operand of arithmetic, of ..,
	// of # or of an ordering comparison.
	Operations []Operation
	// ElemOps are the elements of KEYS or ARGV read as operands where Lua
	// fails the script on nil (see ElemOp).
	ElemOps []ElemOp
	// NilOperands are the locals read as operands where Lua fails the
	// script on nil or false while they may hold either (see NilOperand).
	NilOperands []NilOperand
	// NumberTexts are the numbers made of an argument (tonumber(ARGV[n]),
	// or a local holding it) that the script writes back as a string.
	NumberTexts []NumberText
	// NumberArgs are the indexes n of the arguments ARGV[n] the script
	// reads as a Lua number (tonumber, an operand of arithmetic, a bound of
	// a numeric for, an argument of a math function or of a numeric
	// conversion of string.format), directly or through a local; 0 stands
	// for an argument whose index the walker cannot tell (ARGV[i], a local
	// assigned several). Lua numbers are doubles: an integer beyond 2^53
	// loses digits there.
	NumberArgs []int
	// SetResp is set when the script calls redis.setresp with anything but
	// 2: replies may then have RESP3 shapes.
	SetResp bool
	// SyntaxError is set when the Lua parser refused the script: the facts
	// above are then empty.
	SyntaxError bool
}

const utf8BOM = "\ufeff"

// maxParamPasses bounds the walks that follow parameters (see Parse).
const maxParamPasses = 6

// Parse parses one script. It returns every problem found; the File is usable
// (possibly partially filled) even when there are errors.
func Parse(name string, src []byte) (f *File, errs []Error) {
	bom := 0
	if rest, ok := bytes.CutPrefix(src, []byte(utf8BOM)); ok {
		// Redis compiles the script as it is: Lua 5.1 reads the
		// byte-order mark as an unexpected symbol, so EVAL and SCRIPT
		// LOAD fail. It is refused, not dropped, since the script sent is
		// the file verbatim; the rest is read with the mark as three
		// spaces, which keeps the columns of line 1.
		errs = append(errs, Error{Pos: Pos{1, 1}, Msg: `the file starts with a UTF-8 byte-order mark, which Redis refuses to compile ("Error compiling script (new function): user_script:1: unexpected symbol near ..."): save the file without it`})
		src = append([]byte("   "), rest...)
		bom = len(utf8BOM)
	}
	f = &File{}
	if sh, blanked, err := cutShebang(src, bom); sh != nil {
		// Redis drops the line before compiling, keeping its newline:
		// error lines stay those of the file.
		f.Shebang, src = sh, blanked
		if err != nil {
			errs = append(errs, *err)
		}
	}
	f.Source = src
	errs = append(errs, f.parseComments()...)

	chunk, err := parseLua(src, name)
	if err != nil {
		e := luaError(err)
		if e.Pos.Line <= 0 {
			// At the end of the file: Redis names the line Lua's lexer
			// reached there, after every line break, blank lines and
			// comments included.
			e.Pos = Pos{len(luaSplitLines(string(src))), 1}
		}
		errs = append(errs, e)
		f.SyntaxError = true
		return f, errs
	}
	toks := scanTokens(src, name)
	if es := lua52Syntax(toks); len(es) > 0 {
		// The Lua parser also reads goto and labels (Lua 5.2); Redis's
		// Lua 5.1 refuses to compile them.
		errs = append(errs, es...)
		f.SyntaxError = true
		return f, errs
	}
	// A parameter of a local function holds what its calls pass it, which
	// a walk learns only once it has seen them, and those may come from
	// another function's parameters (two calls deep); a local a function
	// reads from an enclosing one holds any value it is assigned, also
	// after the function is defined; a table local that nothing changes
	// holds what its constructor lists, and a call of a local function what
	// it returns, which only a whole walk can tell.
	// So the chunk is walked again with what the last walk found until
	// that settles; what does not settle is unknown.
	base := *f
	// (The local functions the script never runs: what their calls pass
	// binds no list.)
	dead := unreachedFuncs(chunk)
	reassigned := map[string]bool{}
	assignedNamesIn(chunk, reassigned)
	fnAssigns := assignedFuncs(chunk)
	var (
		params map[*ast.FunctionExpr][]Value
		all    map[string]Value
		kept   map[string]bool
		rets   map[*ast.FunctionExpr]Value
		// (What the last walk found measured: see walker.measuredAll.)
		measured map[string]int
		w        walker
	)
	for pass := 0; ; pass++ {
		*f = base
		w = walker{f: f, toks: toks, paramVals: params, upAll: all, kept: kept, returned: rets, measuredAll: measured, dead: dead, reassigned: reassigned, fnAssigns: fnAssigns}
		w.block(chunk)
		w.settleFuncs()
		w.settleDeferred()
		w.settleUpvals()
		w.settleParams()
		w.settleElemParams()
		w.settleReplyFwds()
		w.settleParamOps()
		w.settleElemOps()
		w.settleUpvalElems()
		w.settleParamErrs()
		nextParams, nextAll, nextRets := w.resolvedParams(), w.allValues(), w.results
		if nextRets == nil {
			nextRets = map[*ast.FunctionExpr]Value{}
		}
		if reflect.DeepEqual(nextParams, params) && reflect.DeepEqual(nextAll, all) && reflect.DeepEqual(nextRets, rets) && maps.Equal(f.Measured, measured) || pass == maxParamPasses {
			break
		}
		if pass == maxParamPasses-1 {
			// Not settled: what still changes is unknown.
			for fn, vals := range nextParams {
				if !reflect.DeepEqual(vals, params[fn]) {
					for i := range vals {
						vals[i] = Value{Source: SourceUnknown}
					}
				}
			}
			for d, v := range nextAll {
				if v != all[d] {
					nextAll[d] = Value{Source: SourceUnknown}
				}
			}
			for fn, v := range nextRets {
				if v != rets[fn] {
					nextRets[fn] = Value{Source: SourceUnknown}
				}
			}
		}
		params, all, kept, rets, measured = nextParams, nextAll, w.keptTables(), nextRets, f.Measured
	}
	if len(toks) > 0 && !terminates(chunk) {
		last := toks[len(toks)-1]
		f.Returns = append(f.Returns, Return{Pos: Pos{last.line, last.col}, Kind: ReturnNil, End: true})
	}
	sure, sureExprs := map[*ast.FuncCallExpr]bool{}, map[ast.Expr]bool{}
	sureCalls(chunk, sure, sureExprs)
	for i, e := range w.elemOpExprs {
		f.ElemOps[i].Sure = sureExprs[e]
	}
	for e := range sure {
		if i, ok := w.calls[e]; ok {
			f.Calls[i].Sure = true
		}
	}
	protected := map[*ast.FuncCallExpr]bool{}
	protectedCalls(chunk, protected)
	for e := range protected {
		if i, ok := w.calls[e]; ok {
			f.Calls[i].Protected = true
		}
	}
	for fn := range dead {
		inspectShallow(fn.Stmts, func(ast.Stmt) {}, func(e ast.Expr) {
			if c, ok := e.(*ast.FuncCallExpr); ok {
				if i, ok := w.calls[c]; ok {
					f.Calls[i].Unreached = true
				}
			}
		})
	}
	pfns := protectedFuncs(chunk)
	for i, fns := range w.nilOpFns {
		if len(fns) > 0 && (pfns[fns[len(fns)-1]] || dead[fns[len(fns)-1]]) {
			f.NilOperands[i].Protected = true
		}
	}
	for i, fns := range w.elemOpFns {
		// (The function it is written in: one written in a protected
		// function may be returned from it and called unprotected.)
		if len(fns) > 0 && (pfns[fns[len(fns)-1]] || dead[fns[len(fns)-1]]) {
			f.ElemOps[i].Protected = true
		}
	}
	return f, errs
}

// cutShebang finds a shebang line: the script starts with "#!" (at start,
// after a byte-order mark read as spaces: that one is refused, and the line
// is read as it will be once the mark is removed). It returns the shebang
// and the source with its line blanked. Redis takes the line up to the first
// newline, searching the script as a C string: without a newline before the
// end or a NUL byte it refuses the script; the whole line is then blanked.
func cutShebang(src []byte, start int) (*Shebang, []byte, *Error) {
	if !bytes.HasPrefix(src[start:], []byte("#!")) {
		return nil, src, nil
	}
	end := bytes.IndexAny(src[start:], "\n\x00")
	var err *Error
	switch {
	case end < 0:
		end = len(src) - start
		err = &Error{Pos: Pos{1, start + 1}, Msg: `the script starts with "#!" (a Redis 7 shebang line) but has no newline: Redis refuses it ("ERR Invalid script shebang"); end the #! line with a newline, or remove it`}
	case src[start+end] == 0:
		err = &Error{Pos: Pos{1, start + end + 1}, Msg: `the #! line (a Redis 7 shebang line) holds a NUL byte: Redis reads the script up to it and finds no newline, so it refuses the script ("ERR Invalid script shebang"); remove the NUL byte`}
		if nl := bytes.IndexByte(src[start:], '\n'); nl >= 0 {
			end = nl
		} else {
			end = len(src) - start
		}
	}
	end += start
	sh := &Shebang{Text: strings.TrimSuffix(string(src[start:end]), "\r"), Pos: Pos{1, start + 1}}
	out := bytes.Clone(src)
	for i := start; i < end; i++ {
		out[i] = ' '
	}
	return sh, out, err
}

// lua52Syntax reports the goto statements and labels of a script: syntax
// the Lua parser accepts that Lua 5.1 does not have.
func lua52Syntax(toks []token) (errs []Error) {
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.typ {
		case luaparse.TGoto:
			errs = append(errs, Error{Pos: Pos{t.line, t.col}, Msg: `Lua syntax error near "goto": Redis runs Lua 5.1, which has no goto (Lua 5.2)`})
		case luaparse.T2Colon:
			errs = append(errs, Error{Pos: Pos{t.line, t.col}, Msg: `Lua syntax error near "::": Redis runs Lua 5.1, which has no labels (Lua 5.2)`})
			if i+2 < len(toks) && toks[i+2].typ == luaparse.T2Colon {
				i += 2 // ::name::
			}
		}
	}
	return errs
}

// parseLua runs the Lua parser, turning any panic of the parser into an error.
func parseLua(src []byte, name string) (chunk []ast.Stmt, err error) {
	defer func() {
		if r := recover(); r != nil {
			chunk, err = nil, fmt.Errorf("%v", r)
		}
	}()
	chunk, err = luaparse.Parse(bytes.NewReader(src), name)
	if err == nil && chunk == nil && len(bytes.TrimSpace(src)) > 0 {
		// The parser recovers a non-error panic as a nil error.
		err = fmt.Errorf("unexpected parser failure")
	}
	return chunk, err
}

// luaSplitLines splits src at the line breaks Lua's lexer counts ("\n",
// "\r", "\r\n" and "\n\r" each once), so a comment ends where Lua ends it
// and line numbers match Redis's, whatever mix of LF, CR and CRLF the file
// uses; the last line is the one Lua's lexer is on at the end of src.
func luaSplitLines(src string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(src); i++ {
		if c := src[i]; c == '\n' || c == '\r' {
			lines = append(lines, src[start:i])
			if i+1 < len(src) && (src[i+1] == '\n' || src[i+1] == '\r') && src[i+1] != c {
				i++
			}
			start = i + 1
		}
	}
	return append(lines, src[start:])
}

func luaError(err error) Error {
	if pe, ok := err.(*luaparse.Error); ok {
		pos := Pos{pe.Pos.Line, pe.Pos.Column}
		if pos.Line <= 0 {
			return Error{Pos: Pos{-1, 1}, Msg: "Lua syntax error at end of file: " + pe.Message}
		}
		if pos.Col <= 0 {
			pos.Col = 1
		}
		return Error{Pos: pos, Msg: fmt.Sprintf("Lua syntax error near %q: %s", pe.Token, pe.Message)}
	}
	return Error{Pos: Pos{1, 1}, Msg: "Lua syntax error: " + strings.TrimSpace(err.Error())}
}

// parseComments reads the leading comment block (doc lines and directives),
// which starts on the first line or on the line after a shebang, and reports
// directives found after it.
func (f *File) parseComments() (errs []Error) {
	lines := luaSplitLines(string(f.Source))
	leading := true
	for i, line := range lines {
		if i == 0 && f.Shebang != nil {
			continue // the leading block starts on the line after it
		}
		trimmed := strings.TrimLeft(line, " \t")
		indent := len(line) - len(trimmed)
		isComment := strings.HasPrefix(trimmed, "--") && !isLongComment(trimmed)
		if leading && !isComment {
			leading = false
		}
		if !isComment {
			continue
		}
		body := trimmed[2:]
		bodyCol := indent + 3
		rest := strings.TrimLeft(body, " \t")
		restCol := bodyCol + len(body) - len(rest)
		if strings.HasPrefix(rest, "@") {
			d := parseDirective(rest, Pos{i + 1, restCol})
			if leading {
				f.Directives = append(f.Directives, d)
			} else if d.Name != "" {
				errs = append(errs, Error{Pos: d.Pos, Msg: fmt.Sprintf("directive @%s must be in the leading comment block", d.Name)})
			}
			continue
		}
		if leading {
			f.Doc = append(f.Doc, strings.TrimRight(strings.TrimPrefix(body, " "), " \t"))
		}
	}
	for len(f.Doc) > 0 && f.Doc[len(f.Doc)-1] == "" {
		f.Doc = f.Doc[:len(f.Doc)-1]
	}
	for len(f.Doc) > 0 && f.Doc[0] == "" {
		f.Doc = f.Doc[1:]
	}
	return errs
}

func isLongComment(s string) bool {
	s = strings.TrimPrefix(s, "--")
	if !strings.HasPrefix(s, "[") {
		return false
	}
	s = strings.TrimLeft(s[1:], "=")
	return strings.HasPrefix(s, "[")
}

// parseDirective parses "@name text" starting at pos.
func parseDirective(s string, pos Pos) Directive {
	d := Directive{Pos: pos}
	i := 1
	for i < len(s) && !isSpace(s[i]) {
		i++
	}
	d.Name = s[1:i]
	rest := s[i:]
	text := strings.TrimLeft(rest, " \t")
	d.TextPos = Pos{pos.Line, pos.Col + i + len(rest) - len(text)}
	d.Text = strings.TrimRight(text, " \t\r")
	return d
}

// MeasuredAll is File.Measured for a table whose length the script reads:
// it may test any element.
const MeasuredAll = math.MaxInt

// terminates reports whether every run of stmts ends in a return statement
// or a call of error: its last statement is one, a do block that
// terminates, an if with an else whose branches all do, or a loop that never
// ends but through a return (while true, repeat ... until false, with no
// break of its own). Any other loop is taken to end.
func terminates(stmts []ast.Stmt) bool {
	if exits(stmts) {
		return true // a return, or a call of error
	}
	if len(stmts) == 0 {
		return false
	}
	switch s := stmts[len(stmts)-1].(type) {
	case *ast.DoBlockStmt:
		return terminates(s.Stmts)
	case *ast.WhileStmt:
		_, forever := s.Condition.(*ast.TrueExpr)
		return forever && !breaks(s.Stmts)
	case *ast.RepeatStmt:
		switch s.Condition.(type) {
		case *ast.FalseExpr, *ast.NilExpr:
			return !breaks(s.Stmts)
		}
	case *ast.IfStmt:
		return len(s.Else) > 0 && terminates(s.Then) && terminates(s.Else)
	}
	return false
}
