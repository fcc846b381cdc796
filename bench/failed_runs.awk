# failed_runs.awk reads the output of one failed bench-compare round and tells
# whether only other libraries' runs failed: a peer that starves a waiter past
# the run's bound is a result of the comparison (benchstat then counts fewer
# rounds for it), not a failure of the benchmark. It prints each failed peer
# run and exits 0 when every failure is a peer's run; it exits 1 when a
# scriptlock run failed, the process panicked or timed out, or a benchmark
# failed outside any library's run (the server did not start, say).

function base(name) {
	sub(/-[0-9]+$/, "", name) # the -GOMAXPROCS suffix
	return name
}

/^panic: |test timed out after|^\*\*\* Test killed/ {
	bad = 1
}

/--- FAIL: / {
	name = $0
	sub(/.*--- FAIL: /, "", name)
	sub(/[ \t].*/, "", name)
	name = base(name)
	if (name ~ /\/lib=/) {
		if (name ~ /\/lib=scriptlock\./) {
			bad = 1
		} else if (!(name in peer)) {
			peer[name] = 1
			npeer++
		}
	} else {
		parent[name] = 1
	}
}

END {
	for (p in parent) {
		covered = 0
		for (n in peer) {
			if (index(n, p "/") == 1) {
				covered = 1
			}
		}
		if (!covered) {
			bad = 1
		}
	}
	if (bad || npeer == 0) {
		exit 1
	}
	for (n in peer) {
		print n
	}
}
