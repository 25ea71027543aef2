module tenure/fencetest

go 1.19

require (
	github.com/lib/pq v1.10.7
	github.com/mattn/go-sqlite3 v1.14.16
	tenure v0.0.0
)

// Offline and from Debian only: the module in the folder above, and the
// drivers Debian ships as source (golang-github-mattn-go-sqlite3-dev,
// golang-github-lib-pq-dev; scripts/deps.sh installs them).
replace (
	github.com/lib/pq => /usr/share/gocode/src/github.com/lib/pq
	github.com/mattn/go-sqlite3 => /usr/share/gocode/src/github.com/mattn/go-sqlite3
	tenure => ../
)
