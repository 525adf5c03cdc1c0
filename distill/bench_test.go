package distill

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// BenchmarkSummarizeLine distils a two-step turn whose outputs total about
// 3,000 tokens (12 KB: a dpkg-lock apt-get run and a sed/sshd session),
// with the default estimate counter.
func BenchmarkSummarizeLine(b *testing.B) {
	read := func(f string) string {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "outputs", f))
		if err != nil {
			b.Fatal(err)
		}
		return string(data)
	}
	out1 := read("ls-la-etc.txt") + read("apt-get-install-dpkg-lock.txt")
	out2 := read("sed-errors.txt")
	turn := Turn{Number: 12, Check: nightshift.CheckFail, Steps: []Step{
		{Action: nightshift.ActionRan, Tool: nightshift.ToolApply, Command: "sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -o Dpkg::Options::=--force-confold aide aide-common && ls -la /etc", ExitCode: 100, Stdout: out1},
		{Action: nightshift.ActionRan, Tool: nightshift.ToolApply, Command: `sudo sed -i 's/^#\?PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config && sudo sshd -t && sudo systemctl reload ssh`, ExitCode: 1, Stderr: out2},
	}}
	d := New(Config{})
	b.SetBytes(int64(len(out1) + len(out2)))
	b.ReportAllocs()
	for b.Loop() {
		_ = d.Summarize(turn).Line()
	}
}

func BenchmarkCanonical(b *testing.B) {
	cmd := "cat > /etc/aide/aide.conf.d/99_x <<'EOF'\n/etc/ssh p+i+n+u+g+s+sha512\nEOF\n" +
		`sudo sed -i 's/^#\?PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config && sudo systemctl restart "sshd"`
	b.ReportAllocs()
	for b.Loop() {
		_ = Canonical(cmd)
	}
}
