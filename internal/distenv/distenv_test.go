package distenv

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, test := range []struct {
		name    string
		env     []string
		want    Env
		wantErr string
	}{
		{
			name: "unset: single process",
			want: Env{WorldSize: 1, LocalRank: -1, LocalWorldSize: -1, MasterAddr: DefaultMasterAddr, MasterPort: DefaultMasterPort},
		},
		{
			name: "everything",
			env: []string{"RANK=2", "WORLD_SIZE=4", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=2", "MASTER_ADDR=10.0.0.1",
				"MASTER_PORT=1234", "FATHOM_JOB_TOKEN=s3cret", "FATHOM_BIND_ADDR=10.0.0.2", "FATHOM_SHM=0",
				"FATHOM_SHM_BYTES=65536", "FATHOM_MAX_EARLY_BYTES= 100 ", "FATHOM_TIMEOUT=90s",
				"FATHOM_HEARTBEAT_TIMEOUT=1500ms"},
			want: Env{Rank: 2, WorldSize: 4, LocalRank: 0, LocalWorldSize: 2, MasterAddr: "10.0.0.1", MasterPort: 1234,
				JobToken: "s3cret", BindAddr: "10.0.0.2", NoSHM: true, SHMBytes: 65536, MaxEarlyBytes: 100, Timeout: 90 * time.Second,
				HeartbeatTimeout: 1500 * time.Millisecond},
		},
		{
			name: "empty values count as unset; last entry wins",
			env:  []string{"RANK=", "MASTER_ADDR=", "WORLD_SIZE=3", "WORLD_SIZE=2", "FATHOM_SHM=1"},
			want: Env{WorldSize: 2, LocalRank: -1, LocalWorldSize: -1, MasterAddr: DefaultMasterAddr, MasterPort: DefaultMasterPort},
		},
		{name: "bad integer", env: []string{"WORLD_SIZE=two"}, wantErr: `WORLD_SIZE="two" is not an integer`},
		{name: "bad duration", env: []string{"FATHOM_TIMEOUT=5"}, wantErr: "FATHOM_TIMEOUT"},
		{name: "bad heartbeat", env: []string{"FATHOM_HEARTBEAT_TIMEOUT=soon"}, wantErr: "FATHOM_HEARTBEAT_TIMEOUT"},
	} {
		got, err := Parse(Lookup(test.env))
		if test.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), test.wantErr) {
				t.Errorf("%s: error %v, want one containing %q", test.name, err, test.wantErr)
			}
			continue
		}
		if err != nil || got != test.want {
			t.Errorf("%s: Parse = %+v, %v; want %+v", test.name, got, err, test.want)
		}
	}
}

func TestNewJobToken(t *testing.T) {
	a, err := NewJobToken()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewJobToken()
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 64 || strings.Trim(a, "0123456789abcdef") != "" || a == b {
		t.Errorf("tokens %q and %q: want two different 64-digit hex strings", a, b)
	}
}
