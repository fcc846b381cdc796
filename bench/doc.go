// Package bench compares scriptlock with other Go Redis lock libraries
// (redsync, bsm/redislock, rueidislock) side by side, in one run, against the
// same real redis-server. It is its own module so the library's module does not
// depend on its competitors.
//
//	cd bench && go test -run '^$' -bench . -benchmem -count 8 | tee new.txt
//	benchstat new.txt
package bench
