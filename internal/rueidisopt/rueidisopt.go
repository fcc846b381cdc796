// Package rueidisopt reads the options of a rueidis client that decide
// whether the calls made through it keep their meaning, where rueidis tells
// them only through its clients' unexported fields.
package rueidisopt

import (
	"reflect"

	"github.com/redis/rueidis"
)

// ReplaysWrittenCalls reports a rueidis client made with ConnLifetime. Such a
// client sends a call again, on a new connection, when the connection it went
// out on reached its lifetime before the reply came back, although Redis may
// have run it: when the replies on that connection fall a second or more
// behind (a slow or stalled server), rueidis closes the connection and calls
// still waiting get its "connection is expired" error, on which every one of
// its clients (single, Cluster, Sentinel) sends them again without telling the
// caller. A script that takes or gives back a lock or a permit then runs twice
// for one call. A client whose type or field is not as this rueidis version has
// them (a wrapper of the client, another version) reports false.
func ReplaysWrittenCalls(rc rueidis.Client) bool {
	v := reflect.ValueOf(rc)
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() {
		return false
	}
	v = v.Elem()
	if v.Kind() != reflect.Struct || v.Type().PkgPath() != "github.com/redis/rueidis" {
		return false
	}
	switch v.Type().Name() {
	case "singleClient", "clusterClient", "sentinelClient":
	default:
		return false
	}
	f := v.FieldByName("hasLftm")
	return f.IsValid() && f.Kind() == reflect.Bool && f.Bool()
}

// Why is what a refusal of a client ReplaysWrittenCalls reports tells its
// user, before what the refusing package needs instead.
const Why = "the rueidis client has ConnLifetime: when a connection reaches its lifetime while its replies are a second or more behind (a slow or stalled server), rueidis sends the calls still unanswered again on a new connection though Redis may have run them"
