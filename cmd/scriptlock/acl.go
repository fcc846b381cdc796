package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/scriptlock/scriptlock/internal/layout"
)

func aclFlags(fs *flag.FlagSet, e *env) {
	fs.StringVar(&e.idemPrefix, "idempotency-prefix", "", "also give the user the idempotency store's records under this prefix (idempotency.WithPrefix; the store's default is scriptlock:idem:)")
	fs.BoolVar(&e.readOnly, "read-only", false, "an operator user for inspect, list and watch, which can change nothing, instead of the Clients' user")
}

// readOnlyCommands are what inspect, list and watch run, and nothing that
// writes: their scripts run TIME, which no @read grants; EVAL_RO sends a
// script a server has not cached; a Cluster's layout comes from CLUSTER
// SLOTS (SHARDS from Redis 8); through Sentinel rueidis confirms the primary
// with ROLE (it only reads, though it is @admin). docs/operations.md's
// ops-ro user has the same.
var readOnlyCommands = []string{"+@read", "+evalsha_ro", "+eval_ro", "+time", "+subscribe", "+psubscribe", "+ssubscribe",
	"+unsubscribe", "+punsubscribe", "+sunsubscribe", "+pubsub|numsub", "+pubsub|shardnumsub", "+cluster|slots", "+cluster|shards", "+role"}

// aclCmd prints the ACL SETUSER command of a user for the Clients of one key
// prefix (--key-prefix): the locks' keys and channels under it and nothing
// else (layout.ACLRules), every command but @dangerous ones, and the two of
// those the Clients need: INFO (the failover guard, RedLock) and ROLE (rueidis
// confirms a primary a sentinel named with it); with --read-only, an
// operator's user for inspect, list and watch (readOnlyCommands). Nothing is
// sent to Redis.
func aclCmd(e *env, args []string) error {
	if fault := layout.PrefixTagFault(e.keyPrefix); fault != "" {
		// A Client refuses it (WithKeyPrefix).
		return failf(exitUsage, "--key-prefix %q: %s, which a Client refuses", e.keyPrefix, fault)
	}
	if strings.ContainsAny(e.keyPrefix, " \t\n\v\f\r\x00") {
		// ACL SETUSER refuses such a pattern ("Syntax error"), and a
		// wildcard in its place would give the user other prefixes too.
		return failf(exitUsage, "--key-prefix %q: Redis refuses whitespace and NUL in ACL patterns, so no user can be kept to this prefix", e.keyPrefix)
	}
	if strings.ContainsAny(e.idemPrefix, "{} \t\n\v\f\r\x00") {
		// The store refuses braces in its prefix (its records' hash tags
		// follow it), and Redis whitespace in patterns.
		return failf(exitUsage, "--idempotency-prefix %q: no idempotency store has braces in its prefix, and Redis refuses whitespace and NUL in ACL patterns", e.idemPrefix)
	}
	user := args[0]
	rules := append([]string{"on", ">PASSWORD", "resetkeys", "resetchannels"}, layout.ACLRules(e.keyPrefix)...)
	if e.idemPrefix != "" && e.keyPrefix != "" {
		rules = append(rules, "~"+layout.GlobEscape(e.idemPrefix)+"*")
	}
	if e.readOnly {
		rules = append(rules, readOnlyCommands...)
	} else {
		rules = append(rules, "+@all", "-@dangerous", "+info", "+role")
	}
	if e.json {
		return writeJSON(e.out, struct {
			User  string   `json:"user"`
			Rules []string `json:"rules"`
		}{user, rules})
	}
	words := append([]string{"ACL", "SETUSER", user}, rules...)
	for i, w := range words {
		words[i] = cliQuote(w)
	}
	_, err := fmt.Fprintln(e.out, strings.Join(words, " "))
	return err
}

// cliQuote writes w so that redis-cli (and an ACL file, read the same way)
// reads it back as one argument: as it is when it has no space, quote or
// byte outside printable ASCII, else in double quotes with \\, \" and \xHH
// escapes.
func cliQuote(w string) string {
	plain := w != ""
	for i := 0; i < len(w) && plain; i++ {
		c := w[i]
		plain = c > ' ' && c < 0x7f && c != '"' && c != '\''
	}
	if plain {
		return w
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < ' ' || c >= 0x7f:
			fmt.Fprintf(&b, "\\x%02x", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
