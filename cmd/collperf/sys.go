package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"syscall"
)

// peakRSS returns the process's peak resident set size in bytes (VmHWM in
// /proc/self/status), or -1 where there is no such file.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	return parseVmHWM(f)
}

func parseVmHWM(f io.Reader) int64 {
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		var kb int64
		var unit string
		if n, _ := fmt.Sscan(rest, &kb, &unit); n == 2 && unit == "kB" {
			return kb << 10
		}
	}
	return -1
}

// resetPeakRSS returns freed Go heap to the OS and then sets VmHWM back to
// the current RSS (Linux: "5" into /proc/self/clear_refs), so the peak
// read after an implementation ran is that implementation's. It reports
// whether the reset worked.
func resetPeakRSS() bool {
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// fsType names the file system holding dir, from statfs's magic number.
func fsType(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "unknown"
	}
	magic := uint64(st.Type) & 0xffffffff
	if name, ok := fsMagic[magic]; ok {
		return name
	}
	return fmt.Sprintf("0x%x", magic)
}

var fsMagic = map[uint64]string{
	0x01021994: "tmpfs",
	0x0000ef53: "ext4",
	0x58465342: "xfs",
	0x9123683e: "btrfs",
	0x00006969: "nfs",
	0x0bd00bd0: "lustre",
	0x47504653: "gpfs",
	0x19830326: "beegfs",
	0x794c7630: "overlayfs",
	0x65735546: "fuse",
	0x2fc12fc1: "zfs",
	0x00c36400: "cephfs",
	0x858458f6: "ramfs",
}
