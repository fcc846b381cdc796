// Package failover tests scriptlock's locks through failovers of a real
// Sentinel deployment (a primary, two replicas, three sentinels), driven by
// rueidis's Sentinel client: fenced read-modify-write while the deployment
// fails over by SENTINEL FAILOVER and by kill -9, and the failover guard's
// window with replication held back.
//
// The suite is its own package so that `go test ./...` runs its failovers,
// mostly spent waiting for sentinels to agree, beside the root package's
// tests rather than after them.
package failover
