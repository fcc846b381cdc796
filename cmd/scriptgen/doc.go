// Command scriptgen generates typed Go callers for annotated Redis Lua
// scripts, built on rueidis.
//
//	scriptgen -in scripts -out generated -pkg generated [-check] [-strict]
//
// Install it in your module with
//
//	go get -tool github.com/scriptlock/scriptlock/cmd/scriptgen
//
// and run it with "//go:generate go tool scriptgen -in ... -out ... -pkg ..."
// (or go run github.com/scriptlock/scriptlock/cmd/scriptgen, which works once
// the tool requirement is in go.mod).
//
// Each <in>/<name>.lua becomes <out>/<name>.lua.go, plus <out>/scriptgen.go
// with what the scripts share (Scripts, Preload, EvalOf, error types,
// helpers). The generated package imports only the standard library and
// rueidis.
//
// Problems in the scripts are printed as file:line:col: message, all of them,
// sorted, and nothing is written (exit status 1). Warnings are printed as
// file:line:col: warning: message and do not stop generation, unless -strict
// is given. Files in <out> that carry the generated header but belong to no
// script any more are removed; other files are never touched. Under go
// generate, which has already listed the files it will read, such a file is
// first replaced by a build-ignored placeholder whose own go:generate line
// removes it (scriptgen -remove-placeholder FILE); a later run removes any
// placeholder left. With -check nothing is written: the command lists stale,
// missing and extra files and exits 1 when there are any. Bad flags exit 2.
// CRLF line ends (a Windows checkout) are read as LF: a script's line breaks
// are sent as LF, which Lua reads alike, and a generated file is current if
// only its line ends differ.
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
//	-- @commands  publish spublish what redis.call(ARGV[n], ...) may run
//	-- @cluster-unsafe             keys not passed in KEYS, on purpose
//
// A first line "#!lua flags=no-writes,allow-oom" gives Redis 7 script flags
// (no-writes, allow-oom, allow-stale, no-cluster, allow-cross-slot-keys); the
// leading comment block starts on the line after it. The script is sent
// verbatim, that line included, and the generated doc comments list the
// flags. The line is read as Redis 7.0 reads it, and what Redis refuses is
// refused at the word or flag (no newline, an engine other than #!lua, an
// option other than flags=, an unknown or empty flag); a flag given twice is
// a warning. A script with the flag no-writes calls no write or replicated
// command, and a @readonly script with a #!lua line needs no-writes, since
// Redis refuses EVALSHA_RO for any other script with one. A @cluster-unsafe
// script with a #!lua line and neither allow-cross-slot-keys nor no-cluster
// is a warning: in Cluster, Redis refuses its access to a key of another
// slot.
//
// Argument types: string, bytes, int64, float64, bool (sent as 1 or 0),
// duration (integer milliseconds, a part of one rounded up), time (unix milliseconds); "name..." on the
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
// A bytes argument is sent without a copy (rueidis.BinaryString): leave it
// unmodified until the call returns (for the Command form, until the command
// has been sent and answered), as the generated doc comments say.
// The Multi form sends every call as EVALSHA in one DoMulti and re-sends only
// the NOSCRIPT ones as EVAL in a second. The Command form builds the EVALSHA
// without sending it, to pipeline with other commands (c.DoMulti); Decode<Name>
// reads its reply. A node that answers it NOSCRIPT gets EvalOf of the command,
// built again: the same call as EVAL (EVAL_RO) with the script's source, which
// caches the script on that node alone (Preload waits for every node).
//
// Errors: a reply error whose first word is a code the script declares with
// @error is a *ScriptError matching the sentinel ErrCode (errors.Is); every
// other Redis error is returned unwrapped, so rueidis.IsRedisErr works. A reply
// of the wrong shape is a *DecodeError naming the script and both types. On a
// cluster client, a call whose keys are in different hash slots is refused
// with a *CrossSlotError (errors.Is ErrCrossSlot) before it is sent, and so
// is a key without a hash tag {...} that the script extends on the right
// (KEYS[1] .. ':x', string.format('%s:x', KEYS[1])), with a *HashTagError (errors.Is ErrCrossSlot): the
// extended key would be in another slot, where Redis Cluster fails the
// script after its earlier writes. An
// argument a script uses as a command name (redis.call(ARGV[n], ...) with
// @commands) must be one of the declared commands, in any case; any other
// value is refused with a *CommandError before anything is sent. An int64
// argument the script reads as a Lua number (tonumber(ARGV[n]), arithmetic
// on it, a numeric for, a math or bit function, struct.pack, a numeric
// directive of string.format, cjson.decode, pcall(tonumber, ...); every int64
// when the checker cannot tell which argument it is: ARGV[i], ARGV held in a
// local or passed to a function, select(n, unpack(ARGV)), a number read after
// table.remove(ARGV, ...) moved the arguments) is refused beyond ±2^53 with a *NumberError before anything is sent:
// Lua numbers are doubles, and the script would go on with other digits. So
// is a time argument the script reads as a Lua number whose unix
// milliseconds are beyond ±2^53. A negative duration argument is refused with a *DurationError before anything
// is sent (PEXPIRE would delete the key, SET PX refuse it after the script's
// earlier writes); 0 is sent as 0. Pass a signed count of milliseconds as an
// int64. A float64 argument that is NaN, which no Redis command reads as a
// number and Lua compares false with every number, is refused with a
// *FloatError before anything is sent; +Inf and -Inf are sent (ZADD and
// score ranges read them).
//
// A script raises a declared error with return redis.error_reply('CODE
// message') or return {err = 'CODE message'}; the sentinel is Err followed by
// the code in CamelCase (OUT_OF_STOCK: ErrOutOfStock). Lua's error('CODE ...')
// reaches the caller as "ERR user_script:N: CODE ..." and matches no sentinel.
//
// # Checks
//
// Scripts are checked against Redis's command table (generated from the
// command specifications Redis publishes; see gen/internal/cmdtable):
//
//   - every redis.call / redis.pcall names a known command (and subcommand),
//     with a "did you mean" hint;
//   - its argument count fits the command's arity (a trailing call such as
//     unpack(t) counts as one or more values; unpack(KEYS) and unpack(ARGV)
//     as the keys or arguments declared, or at least the fixed ones before
//     a variadic, unless the script passes the table on or changes it), and
//     no argument is
//     literally nil, a boolean, a comparison (ARGV[1] == '1', not x), a
//     table or a function (Redis refuses them), nor a local holding true, a
//     comparison or a table (local b = a == c; a warning when it holds one
//     on some paths only);
//   - its key positions (from the key specs, including subcommands, numkeys
//     and keywords such as STREAMS) hold a declared key, KEYS[i], or a key
//     extended on the right (KEYS[1] .. ':x', which keeps its hash tag);
//     ARGV values, literals and data read from Redis are refused unless the
//     script says @cluster-unsafe, and so is a value the checker cannot
//     trace to KEYS (a field of a table the script changes, a parameter of
//     a function used as a value, a function's result); keys are followed
//     into local functions, through their parameters (any number of calls
//     deep) and the locals they read, and into table locals the script
//     never changes (local keys = {KEYS[1], KEYS[2]});
//   - a @readonly script calls no write or replicated command (EVAL_RO refuses
//     them), and no script calls a command flagged noscript (or one Redis 7.0
//     refuses in scripts, such as BLPOP), nor one Redis 7.0 does not have
//     (WAITAOF, CLUSTER MYSHARDID) or with more arguments than 7.0 takes
//     (ZRANK ... WITHSCORE);
//   - a command name that is not a literal needs @commands, and every call is
//     then checked as each of the commands listed; it must be exactly one
//     non-variadic string @arg (redis.call(ARGV[n], ...)), which the callers
//     check: a derived, variadic or bytes command name is refused;
//   - redis.call and redis.pcall are called directly: used as a value
//     (pcall(redis.call, ...), local call = redis.call) they escape every
//     check and are refused, as are _G, getfenv, setfenv, loadstring, load,
//     dofile and loadfile (which reach it, or run code, out of sight); in a
//     @readonly script a container command (XGROUP, OBJECT, ...) needs a
//     literal subcommand, and elsewhere a subcommand that is not a literal
//     (redis.call('CLIENT', ARGV[1])) is a warning, since whether scripts may
//     run it, its arity, keys and writes cannot be checked;
//   - where a command takes only keywords after its fixed words (SET's NX,
//     PX ms, GET; SCAN's MATCH, COUNT; EXPIRE's GT), a literal word is one of
//     them (with the closest for a misspelt one) and one Redis 7.0 has
//     (HSCAN's NOVALUES is 7.4's), and no two that exclude each other (SET's
//     NX and XX; EXPIRE's NX and GT, though XX goes with GT); the check stops
//     at a word it cannot read;
//   - an argument Redis reads as an integer or unix time (EXPIRE's seconds,
//     SET's PX, INCRBY's increment, SCAN's COUNT, as the specifications place
//     them, key counts, SORT's LIMIT) is no literal that is not an integer
//     ('30s', 1.5; a string literal as Redis reads it: '01', '+1', '1.0'
//     and '1e3' are none, a Lua number 1e3 is 1000), and no
//     duration or time @arg (sent in milliseconds) where Redis reads seconds
//     (EXPIRE, SET EX, EXAT), no literal expire time that is not positive
//     where Redis refuses one (SET EX 0, SETEX, GETEX; EXPIRE key 0 deletes
//     the key), no duration @arg where it reads a unix time
//     (PEXPIREAT, SET PXAT: the key goes at once) and no time @arg where
//     it reads a length of time (PEXPIRE, SET PX); a string, bytes or
//     float64 @arg there is a warning, since a value that is not an
//     integer fails at run time, and so is a division or a product with a fraction (ARGV[1] / 1000: 1.5
//     for 1500), which Redis refuses unless it comes out even;
//   - these are warnings too: such a number returned where @return reads
//     an integer (Redis truncates it toward zero: 3.5 arrives as 3); an
//     int64 @arg made a number (tonumber(ARGV[1])) and written back as a
//     string by .., tostring or redis.call, which keep 14 or 17 significant
//     digits (123456789012345678 becomes 1.2345678901235e+17); an ordering
//     of two strings of which one is a number @arg (Lua orders strings
//     character by character: "10" < "9"); a value of a returned table
//     that is nil when a command replies nil (tonumber of GET's reply),
//     which ends the array there; and unpack of a whole reply
//     whose length the data sets (SMEMBERS, LRANGE 0 -1, ZRANGEBYSCORE
//     without LIMIT), since Lua's stack takes about 8000 values;
//   - an argument Redis reads as a floating-point number (INCRBYFLOAT's
//     increment, ZCOUNT's bounds, GEOADD's coordinates, ZADD's scores) is
//     no literal that is not a number ("(1" only in a score range's bounds),
//     and for ZADD and GEOADD the first word after the options is a number
//     (a member written before its score, a misspelt option), no two options
//     exclude each other (NX and XX; ZADD's NX and GT) and ZADD INCR has one
//     pair; a string or bytes @arg there is a warning;
//   - the words of XADD, SORT, SORT_RO, BITOP, BITFIELD, BITFIELD_RO,
//     LMPOP, BLMPOP, ZMPOP, BZMPOP, ZUNIONSTORE, ZINTERSTORE, ZUNION, ZINTER,
//     ZDIFF and ZDIFFSTORE fit the command's argument specification in some
//     reading (options in any order; a word the checker cannot read may be
//     anything): no odd field-value list, no missing ID, no option without
//     its value (SORT k LIMIT 0, BITFIELD k GET u8), no unknown word (BITOP
//     NAND, LMPOP 1 k UP, AGGREGATE AVG), no word that is no integer where
//     Redis reads one, no BITFIELD type but i1 to i64 and u1 to u63, as many
//     keys and WEIGHTS values as a literal key count says, and one source
//     key for BITOP NOT;
//   - a literal GEOADD longitude is within -180 and 180, a latitude within
//     -85.05112878 and 85.05112878;
//   - SORT and SORT_RO have no GET, and no BY with a pattern (a * in it),
//     unless the script is @cluster-unsafe or flagged no-cluster: Redis
//     Cluster refuses them;
//   - XADD's and XTRIM's options, read as Redis reads them up to the first
//     word the checker cannot read, have an integer of 0 or more after
//     MAXLEN and LIMIT and a stream ID after MINID, and XADD's entry ID is
//     *, ms, ms-seq or ms-*, and not 0-0; one trimming strategy (a second
//     MAXLEN or MINID is refused), and no XTRIM word but these options;
//   - the literal stream IDs of XRANGE, XREVRANGE, XPENDING, XAUTOCLAIM,
//     XREAD, XREADGROUP, XDEL, XACK, XCLAIM, XSETID and XGROUP CREATE and
//     SETID are IDs as Redis 7.0 reads them (- and + only in ranges and
//     XGROUP SETID, ( before an ID only in ranges, and not past the last
//     ID, $ only in XREAD and XGROUP, > only in XREADGROUP), as many as the
//     keys after STREAMS; XREAD and XREADGROUP have no BLOCK, which Redis
//     refuses in scripts; the counts and times beside the IDs are integers
//     in Redis's range (XAUTOCLAIM's COUNT from 1, XSETID's ENTRIESADDED
//     from 0, ENTRIESREAD from -1), and XCLAIM's words after its IDs are
//     its options;
//   - a literal key count (ZINTERSTORE's, SINTERCARD's, LMPOP's numkeys)
//     is 1 or more and no more than the words after it;
//   - an option has the options it needs and none it excludes (ZRANGE's
//     LIMIT needs BYSCORE or BYLEX, XADD's and XTRIM's LIMIT needs ~,
//     ZRANGE's BYLEX excludes WITHSCORES);
//   - no comparison puts a string against a number, which Lua 5.1 never
//     converts (< > <= >= fail at run time, == is always false): ARGV and
//     KEYS hold strings whatever the @arg type (ARGV[1] > 0), a string
//     reply is no number (redis.call('GET', k) >= 10), an integer reply no
//     string (redis.call('EXISTS', k) == '1'); nor a boolean literal against
//     a value that is never one (ARGV[1] == true), nor an @arg against a
//     string its callers never send (a bool arrives as "1" or "0", so
//     ARGV[1] == 'true' is always false), nor a reply against nil, which it
//     never is (Redis turns a nil reply into false), nor a status reply
//     (TYPE's, SET's without GET, XGROUP CREATE's), a table {ok = ...} in
//     Lua, against a string or a number (redis.call('TYPE', k) ==
//     'hash'); a named field
//     of a reply that reaches Lua as a list (h.owner of HGETALL's reply) is
//     refused, as it is always nil; so is a reply that is never nil tested
//     as a condition or with not (if redis.call('EXISTS', k) then: Lua
//     finds 0 and an empty list true);
//   - no reply Lua cannot compute with is an operand of arithmetic, of ..
//     or of #, the first argument of string.len, string.sub, ...,
//     cjson.decode or cmsgpack.unpack, a value of string.format, or an
//     argument of redis.call (strings and numbers only): an array or
//     status reply (a table),
//     an integer under #, tonumber of a table; a reply that may be nil
//     (GET, HGET, ZSCORE, ZRANK; false in Lua, nil after tonumber) used
//     so, ordered, or the object of a method call (v:sub(1, 3)), or
//     HMGET's list (false for a missing field) given to table.concat, is a
//     warning, unless a local holding it was read first (if not v, v ==
//     false, v or 0) or an earlier call names the same key (and field);
//   - the key variable of a loop over a reply that lists pairs (HGETALL,
//     ZPOPMIN, ZRANGE ... WITHSCORES) passed to a command is a warning
//     (for k, v in pairs(h) do redis.call('HSET', dst, k, v): k is 1, 2,
//     ..., not a field);
//   - the script returns one value (Redis replies the first of return a,
//     b alone), and no returned table has named fields (return {count =
//     n}): Redis replies a table as the array of its values at 1, 2, ...,
//     so they never reach the caller ({ok = ...} and {err = ...} are status
//     and error replies);
//   - every redis.error_reply / {err = ...} code is declared with @error and
//     reaches the caller as written: a value joined to the code with no space
//     between ('NOT_HELD' .. n) runs into it (refused for a number, a
//     warning otherwise), and {err = '-NOT_HELD ...'} keeps its '-' (refused); and
//     error('CODE ...') with a declared code is refused; a declared code the
//     script never returns is a warning;
//   - literal returns and return redis.call(...) fit @return, using the
//     command's reply schema (a container's literal subcommand's own:
//     OBJECT ENCODING replies a string), and so does a returned local that holds such a
//     value (local v = redis.call(...) ... return v; one also assigned in
//     a nested block, a function or a loop may hold any of its values, a
//     return in a loop those assigned anywhere in it, and is refused only
//     when none fits): a reply that can be nil
//     needs T?, an integer reply is not a string; arithmetic returns an
//     integer, a concatenation a string, a comparison 1 or nil; KEYS[n] and
//     ARGV[n] a string, whatever the @arg type, and so do tostring,
//     string.format, cjson.encode and Lua's other functions that give a
//     string, while tonumber, string.len, math.floor and the others that
//     give a number return an integer, and pcall a Lua boolean first (which
//     Redis replies); each value an and/or gives as the
//     data decides must fit (redis.call('GET', k) or 0 gives a string or an
//     integer); a bool is 1
//     or 0, so a literal other than those, or a command that replies other
//     integers (TTL, INCR, EXISTS of several keys; not SETNX, EXPIRE,
//     SISMEMBER, EXISTS or DEL of one key), is refused; the known values of
//     a returned table fit the record fields or list elements, and a record
//     field that is neither nullable nor bool is present; a record has a
//     field for each value MGET, HMGET, ZMSCORE, SMISMEMBER and GEOHASH
//     reply, one per key, field or member given; what the checker
//     cannot know passes;
//   - every field of the redis table the script reads or calls is one
//     Redis 7.0 defines (redis.pcal, redis.LOG_WARN are nil there), and so
//     is every field of a library (table.unpack, math.tointeger and
//     string.pack are later Lua's; Lua 5.1 has unpack, math.floor and
//     struct.pack), and no call gives an argument Lua 5.1 ignores
//     (math.log's base, math.atan's second, string.rep's separator); no
//     field of the redis table or of a library is
//     assigned (Redis 7 makes them read-only); a command that takes pairs
//     (HSET's field value, MSET's key value) gets whole ones; the redis
//     table's functions
//     get as many arguments as they take, a log level that is a number
//     from 0 to 3, a RESP version of 2 or 3, and error_reply and
//     status_reply one string;
//   - no global variable is assigned (Redis refuses it at run time), and no
//     global is read that Redis's script sandbox does not define (print, os,
//     io, debug, Valkey's server, a misspelt name): Redis 7.0 defines KEYS,
//     ARGV, redis, the Lua 5.1 libraries string, table and math, cjson,
//     cmsgpack, bit and struct, and the Lua base functions but print,
//     dofile, loadfile and newproxy.
//
// Annotations are checked too: Lua syntax (gopher-lua's parser, without the
// goto and labels of Lua 5.2 that Redis's Lua 5.1 refuses; a syntax error is
// reported alone); a UTF-8 byte-order mark at the start of the file, which
// Redis fails to compile; unknown directives and types (the message lists
// the valid ones); duplicate script names, parameters and error codes (and
// one code with two messages); every KEYS[n] and ARGV[n] used is declared
// and every declared one is used (n in any Lua number form: KEYS[0x1] is
// KEYS[1]); a dynamic KEYS[i] or ARGV[i] needs a variadic.
// Every name the package declares is unique (ABC and Abc both declare
// abcSource; a script err_not_held.lua is the sentinel of NOT_HELD), no
// parameter hides one (check_slots, bool_arg, the script's own fooScript), and
// every name gives a Go identifier (not _). A script file name Go would skip
// or build on one platform only (_windows, _arm64, _linux_amd64, also before a
// final _test as in _js_test; a leading _ or .) is refused. A name ending in
// _test is fine: x_test.lua gives x_test.lua.go, which is no test file (Go's
// end in _test.go). Doc lines and descriptions are always written as //
// comments.
package main
