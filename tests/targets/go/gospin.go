// SPDX-License-Identifier: MIT
//
// gospin: a Go program for the tests of files without a GNU build-id: the
// Go linker writes its own build ID note instead (.note.go.buildid), and
// t4012 checks that xprof keeps the binary under that identity, so that a
// report is the same once it is deleted or rebuilt.  main -> spin, which
// burns the CPU for SECONDS (default 1) of wall time, then prints its
// result.  Built by the test with 'go build' (Debian golang-go), the
// build-time constant variant changed with -ldflags -X to make a rebuilt
// binary with another build ID.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

var variant = "1"

//go:noinline
func spin(d time.Duration) uint64 {
	var x uint64 = 1
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		for i := 0; i < 20000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	return x
}

func main() {
	secs := 1.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			secs = v
		}
	}
	fmt.Printf("gospin %s: %x\n", variant, spin(time.Duration(secs*float64(time.Second))))
}
