package e2etest

import (
	"context"
	"strconv"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/gen/internal/e2etest/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// counterSource is the Counter script as the hand-written baseline runs it.
func counterSource(b *testing.B) string {
	for _, s := range generated.Scripts {
		if s.Name == "Counter" {
			return s.Source
		}
	}
	b.Fatal("no Counter script")
	return ""
}

func benchClient(b *testing.B) (rueidis.Client, string) {
	redistest.RequireBinaries(b)
	c := redistest.Server(b).Client(b)
	return c, redistest.Prefix(b) + "n"
}

// BenchmarkGeneratedCall calls the generated Counter.
func BenchmarkGeneratedCall(b *testing.B) {
	c, k := benchClient(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := generated.Counter(ctx, c, k, 1); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkHandWrittenExec runs the same script through rueidis.Lua.Exec and
// decodes the reply the same way, by hand.
func BenchmarkHandWrittenExec(b *testing.B) {
	c, k := benchClient(b)
	script := rueidis.NewLuaScript(counterSource(b))
	ctx := context.Background()
	by := int64(1)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := script.Exec(ctx, c, []string{k}, []string{strconv.FormatInt(by, 10)}).ToInt64(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkGeneratedMulti runs 100 Counter calls per pipelined batch.
func BenchmarkGeneratedMulti(b *testing.B) {
	c, k := benchClient(b)
	ctx := context.Background()
	calls := make([]generated.CounterArgs, 100)
	for i := range calls {
		calls[i] = generated.CounterArgs{K: k + strconv.Itoa(i), By: 1}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, r := range generated.CounterMulti(ctx, c, calls) {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
	}
}

// TestGeneratedCallAllocs holds the generated caller to at most one
// allocation more than the hand-written Exec of the same script.
func TestGeneratedCallAllocs(t *testing.T) {
	redistest.RequireBinaries(t)
	c := redistest.Server(t).Client(t)
	k := redistest.Prefix(t) + "n"
	ctx := context.Background()
	var src string
	for _, s := range generated.Scripts {
		if s.Name == "Counter" {
			src = s.Source
		}
	}
	script := rueidis.NewLuaScript(src)
	by := int64(1)
	hand := testing.AllocsPerRun(200, func() {
		if _, err := script.Exec(ctx, c, []string{k}, []string{strconv.FormatInt(by, 10)}).ToInt64(); err != nil {
			t.Fatal(err)
		}
	})
	gen := testing.AllocsPerRun(200, func() {
		if _, err := generated.Counter(ctx, c, k, by); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("allocs per call: generated %.1f, hand-written %.1f", gen, hand)
	if gen > hand+1 {
		t.Errorf("generated Counter allocates %.1f per call, hand-written Exec %.1f", gen, hand)
	}
}
