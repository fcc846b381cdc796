#!/usr/bin/env bash
# build-redis.sh VERSION DIR: builds redis-server, redis-sentinel and
# redis-cli of Redis VERSION (7.2.5 or 7.4.2) into DIR/bin, for running the
# tests against a Redis other than the Debian package's 7.0 (make test
# REDIS_VERSION=7.4.2). The source comes through the Go module proxy, pinned
# and checked by fetchsource. A DIR holding that version already is used as
# it is.
set -euo pipefail
if [ $# -ne 2 ]; then
	echo "usage: build-redis.sh VERSION DIR" >&2
	exit 2
fi
version=$1 dir=$2
here=$(cd "$(dirname "$0")" && pwd)
built() { [ -x "$dir/bin/redis-server" ] && "$dir/bin/redis-server" --version | grep -q "v=$version "; }
if built; then
	exit 0
fi
# One build at a time (CI starts one ahead, in the background).
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9
if built; then
	exit 0
fi
# TLS is built in: the harness's TLS tests need it.
if [ ! -e /usr/include/openssl/ssl.h ]; then
	if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
		echo "installing libssl-dev with apt-get"
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libssl-dev >/dev/null) ||
			{ echo "apt-get install failed: run 'sudo apt-get install -y libssl-dev'" >&2; exit 1; }
	else
		echo "missing: OpenSSL headers. Run 'sudo apt-get install -y libssl-dev'" >&2
		exit 1
	fi
fi
echo "building Redis $version in $dir"
rm -rf "$dir"
mkdir -p "$dir"
(cd "$here" && GOPROXY="$(go env GOPROXY)" go run ./fetchsource -version "$version" -out "$dir/src")
# REDIS_BUILD_FLAGS: make's settings. By default libc's allocator and -O1:
# jemalloc's build and Redis's own -O3 with link-time optimisation take
# half as much CPU again, which CI spends beside the tests, and the locks'
# tests depend on neither. Set it empty for Redis's own build (for the
# benchmarks, in a REDIS_CACHE of its own).
flags=${REDIS_BUILD_FLAGS-MALLOC=libc OPTIMIZATION=-O1}
# shellcheck disable=SC2086 # flags are words
if ! make -C "$dir/src" -j"$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)" $flags BUILD_TLS=yes >"$dir/build.log" 2>&1; then
	tail -30 "$dir/build.log" >&2
	exit 1
fi
mkdir -p "$dir/bin"
for b in redis-server redis-sentinel redis-cli; do
	ln -sf "../src/src/$b" "$dir/bin/$b"
done
"$dir/bin/redis-server" --version
