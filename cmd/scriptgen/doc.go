// Command scriptgen generates typed Go callers for annotated Redis Lua
// scripts, built on rueidis.
//
//	scriptgen -in scripts -out generated -pkg generated [-check]
//
// Each <in>/<name>.lua becomes <out>/<name>.lua.go, plus <out>/scriptgen.go
// with what the scripts share (Scripts, Preload, error types, helpers). The
// generated package imports only the standard library and rueidis.
//
// Problems in the scripts are printed as file:line:col: message, all of them,
// sorted, and nothing is written (exit status 1). Files in <out> that carry
// the generated header but belong to no script any more are removed; other
// files are never touched. With -check nothing is written: the command lists
// stale, missing and extra files and exits 1 when there are any. Bad flags
// exit 2.
//
// # Annotations
//
// A script's leading "--" comment block is its Go doc comment; lines starting
// with "-- @" in it are directives. Text after a directive's last field is a
// free description.
//
//	-- RateLimit lets a caller through at most `limit` times per window.
//	-- @name      RateLimit        optional; default: CamelCase of the file name
//	-- @key       counter          KEYS[1]; keys are strings, in order
//	-- @key       others...        variadic: the rest of KEYS (last key only)
//	-- @arg       limit  int64     ARGV[1]; in order
//	-- @arg       window duration  sent as integer milliseconds
//	-- @return    bool             the reply type
//	-- @error     OVER_LIMIT caller is over its limit
//	-- @readonly                   EVALSHA_RO / EVAL_RO
//	-- @retryable                  rueidis.NewLuaScriptRetryable
//
// Argument types: string, bytes, int64, float64, bool (sent as 1 or 0),
// duration (integer milliseconds), time (unix milliseconds); "name..." on the
// last @arg makes it variadic.
//
// Reply types: none (status or nil), int64, float64 (returned by the script as
// a string, since Redis truncates Lua numbers; a RESP3 double is accepted
// too), string, bytes, bool (1 or 0; nil is false), []string, []int64,
// map[string]string (flat field-value pairs or a RESP3 map), T? for a
// nullable reply, and records such as {ttl int64, owner string?} read from an
// array reply. Record fields are scalars; a T? field is a pointer (bytes?: a
// nil slice), and since Lua drops trailing nils ({1, nil} arrives as [1]),
// missing trailing fields must be nullable (or bool, read as false).
//
// # Generated API
//
//	func RateLimit(ctx context.Context, c rueidis.Client, counter string, others []string,
//		limit int64, window time.Duration) (bool, error)
//	func RateLimitMulti(ctx context.Context, c rueidis.Client, calls []RateLimitArgs) []RateLimitReply
//	func RateLimitCommand(c rueidis.Client, counter string, others []string,
//		limit int64, window time.Duration) (rueidis.Completed, error)
//	func DecodeRateLimit(resp rueidis.RedisResult) (bool, error)
//
// Keys come first, then arguments. A T? reply returns (T, bool, error) with
// ok=false on nil; a record returns (<Name>Result, error); none returns error.
// The Multi form sends every call as EVALSHA in one DoMulti and re-sends only
// the NOSCRIPT ones as EVAL in a second. The Command form builds the EVALSHA
// without sending it, to pipeline with other commands (c.DoMulti); Decode<Name>
// reads its reply.
//
// Errors: a reply error whose first word is a code the script declares with
// @error is a *ScriptError matching the sentinel ErrCode (errors.Is); every
// other Redis error is returned unwrapped, so rueidis.IsRedisErr works. A reply
// of the wrong shape is a *DecodeError naming the script and both types. On a
// cluster client, a call whose keys are in different hash slots is refused
// with a *CrossSlotError (errors.Is ErrCrossSlot) before it is sent.
//
// # Checks
//
// Lua syntax (gopher-lua's parser); unknown directives and types; duplicate
// script names, parameters and error codes (and one code with two messages);
// every KEYS[n] and ARGV[n] used is declared and every declared one is used;
// a dynamic KEYS[i] or ARGV[i] needs a variadic; and a string literal (or a
// concatenation starting with one) in a key position of redis.call or
// redis.pcall with a known command is refused: keys must come through KEYS so
// Redis Cluster can route the script.
package main
