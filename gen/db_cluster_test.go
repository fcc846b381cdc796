package gen

import (
	"strings"
	"testing"
)

// TestDBClusterRefused: a script that may run on Redis Cluster (neither
// @cluster-unsafe nor flagged no-cluster) is refused a call Redis Cluster
// refuses for its one database (TestDBClusterAgreesWithServer runs them).
func TestDBClusterRefused(t *testing.T) {
	const fix = ", after the script's earlier writes: Redis Cluster has database 0 alone; mark the script @cluster-unsafe if it never runs on Redis Cluster"
	src := "-- X moves.\n-- @key k\n-- @return none\nredis.call('SELECT', 1)\nredis.call('MOVE', KEYS[1], 1)\nredis.call('COPY', KEYS[1], KEYS[1] .. '{x}', 'DB', 2)\n" +
		"redis.call('SELECT', 0)\nredis.call('COPY', KEYS[1], KEYS[1] .. '{x}', 'DB', 0)\nreturn nil\n"
	want := []string{
		`scripts/x.lua:4:22: SELECT of database 1 is refused on Redis Cluster ("ERR SELECT is not allowed in cluster mode")` + fix,
		`scripts/x.lua:5:12: MOVE is refused on Redis Cluster ("ERR MOVE is not allowed in cluster mode")` + fix,
		`scripts/x.lua:6:47: COPY to database 2 is refused on Redis Cluster ("ERR Copying to another database is not allowed in cluster mode")` + fix,
	}
	if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("checker:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, mark := range []string{"-- @cluster-unsafe\n", "#!lua flags=no-cluster\n"} {
		s := strings.Replace(src, "-- @key k\n", "-- @key k\n"+mark, 1)
		if strings.HasPrefix(mark, "#!") {
			s = mark + src
		}
		if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(s)}); len(got) != 0 {
			t.Errorf("%q: checker refused: %v", strings.TrimSpace(mark), got)
		}
	}
}
