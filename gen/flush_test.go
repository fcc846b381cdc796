package gen

import (
	"fmt"
	"strings"
	"testing"
)

// TestFlushRefused: FLUSHALL and FLUSHDB name no key, so no key check saw
// them, and a script declaring one key deleted every other key of the
// database. They are refused unless the script is @cluster-unsafe (which
// gives up the key checks); a no-cluster script is refused them too, as
// they have nothing to do with Redis Cluster.
func TestFlushRefused(t *testing.T) {
	src := "-- X clears.\n-- @key k\n-- @return none\nredis.call('SET', KEYS[1], 1)\nredis.call('FLUSHDB')\nredis.call('flushall', 'ASYNC')\nreturn nil\n"
	const why = " deletes every key of the database, keys the script does not declare (@key) among them: a script changes the keys it is passed; mark it @cluster-unsafe if it must clear the database"
	for off, s := range []string{src, "#!lua flags=no-cluster\n" + src} {
		want := []string{
			fmt.Sprintf("scripts/x.lua:%d:12: FLUSHDB%s", 5+off, why),
			fmt.Sprintf("scripts/x.lua:%d:12: FLUSHALL%s", 6+off, why),
		}
		if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(s)}); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("checker:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	s := strings.Replace(src, "-- @key k\n", "-- @key k\n-- @cluster-unsafe\n", 1)
	if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(s)}); len(got) != 0 {
		t.Errorf("@cluster-unsafe: checker refused: %v", got)
	}
}
