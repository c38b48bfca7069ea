package cbench

import (
	"errors"
	"strings"
	"testing"
)

func TestClusterFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	c, err := clusterFromEnv("/repo", env())
	if c != nil || err != nil {
		t.Fatalf("no CLUSTER: %v, %v; want nothing", c, err)
	}
	c, err = clusterFromEnv("/repo", env("CLUSTER", "2x4"))
	if err != nil || c.nodes != 2 || c.ppn != 4 || c.fs != "gluster" || c.vc != "/repo/bin/vcluster" {
		t.Fatalf("CLUSTER=2x4: %+v, %v", c, err)
	}
	e := c.env(env("SIZES", "1m"))
	if got := e("MPIRUN"); got != "/repo/bin/vcluster mpirun -ppn 4" {
		t.Errorf("MPIRUN = %q", got)
	}
	if e("NP") != "8" || e("E3SM_NP") != "8" || e("DIRS") != "/mnt/vcluster/gluster" || e("SIZES") != "1m" {
		t.Errorf("NP %q E3SM_NP %q DIRS %q SIZES %q", e("NP"), e("E3SM_NP"), e("DIRS"), e("SIZES"))
	}
	if err := c.checkNP(env("NP", "2 4")); err == nil || !strings.Contains(err.Error(), "runs 8 ranks") {
		t.Errorf("NP='2 4' with 2x4: %v", err)
	}
	if err := c.checkNP(env("NP", "8")); err != nil {
		t.Errorf("NP=8 with 2x4: %v", err)
	}
	for _, tc := range []struct{ kv []string }{
		{[]string{"CLUSTER", "2"}}, {[]string{"CLUSTER", "0x2"}}, {[]string{"CLUSTER", "2x2", "FS", "nfs"}},
		{[]string{"FS", "gluster"}}, {[]string{"CLUSTER", "2x2", "MPIRUN", "mpirun"}},
		{[]string{"CLUSTER", "2x2", "DIRS", "/dev/shm"}},
	} {
		if _, err := clusterFromEnv("/repo", env(tc.kv...)); !errors.As(err, new(BadSetting)) {
			t.Errorf("%v: %v, want a bad setting", tc.kv, err)
		}
	}
	if _, err := clusterFromEnv("/repo", env("CLUSTER", "4x1", "FS", "shared", "DIRS", "/mnt/vcluster/shared")); err != nil {
		t.Errorf("the rerun line's own DIRS: %v", err)
	}
}

func TestWireBytesFromCounters(t *testing.T) {
	before, err := parseCounters("node\tsent_bytes\treceived_bytes\nlogin\t100\t200\nnode0\t1000\t2000\nnode1\t10\t20\nstor0\t5\t7\n")
	if err != nil {
		t.Fatal(err)
	}
	after, err := parseCounters("node\tsent_bytes\treceived_bytes\nlogin\t900\t900\nnode0\t1600\t2100\nnode1\t410\t520\nstor0\t305\t1007\n")
	if err != nil {
		t.Fatal(err)
	}
	wire, storage := wireBytes(before, after)
	// sent: node0 600, node1 400, stor0 300 (login left out); storage 300 + 1000.
	if wire != 1300 || storage != 1300 {
		t.Errorf("wire %d storage %d, want 1300 and 1300", wire, storage)
	}
	for _, bad := range []string{"", "host sent received\n", "node\tsent_bytes\treceived_bytes\nnode0\t1\n", "node\tsent_bytes\treceived_bytes\nnode0\tx\t1\n", "node\tsent_bytes\treceived_bytes\nnode0\t-1\t1\n"} {
		if _, err := parseCounters(bad); err == nil {
			t.Errorf("parseCounters(%q) accepted", bad)
		}
	}
}
