package bashoracle

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// hx formats s as strace -xx prints strings.
func hx(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, `\x%02x`, s[i])
	}
	return b.String()
}

func q(s string) string { return `"` + hx(s) + `"` }

func TestParseTrace(t *testing.T) {
	lines := []string{
		// The launcher's events come before bash starts and are skipped.
		`2     execve(` + q("/run/nightshift-oracle/prlimit") + `, [` + q("prlimit") + `], 0x7ffd /* 4 vars */) = 0`,
		`2     openat(AT_FDCWD<` + hx("/") + `>, ` + q("/etc/ld.so.cache") + `, O_RDONLY|O_CLOEXEC) = 3<` + hx("/etc/ld.so.cache") + `>`,
		`2     execve(` + q(insideBash) + `, [` + q(insideBash) + `, ` + q("-c") + `, ` + q("rm -rf /") + `], 0x7ffd /* 4 vars */) = 0`,
		`2     openat(AT_FDCWD<` + hx("/") + `>, ` + q("/dev/tty") + `, O_RDWR|O_NONBLOCK) = -1 ENXIO (No such device or address)`,
		`2     openat(AT_FDCWD<` + hx("/") + `>, ` + q("/etc/passwd") + `, O_RDONLY) = 3<` + hx("/etc/passwd") + `>`,
		`3     execve(` + q("/usr/bin/rm") + `, [` + q("rm") + `, ` + q("-rf") + `, ` + q("/, x") + `], 0x55 /* 5 vars */ <unfinished ...>`,
		`2     kill(1, SIGINT)                   = -1 EPERM (Operation not permitted)`,
		`3     <... execve resumed>)             = 0`,
		`3     openat(AT_FDCWD<` + hx("/etc") + `>, ` + q("/etc/ld.so.cache") + `, O_RDONLY|O_CLOEXEC) = 3`,
		`2     openat(AT_FDCWD<` + hx("/etc") + `>, ` + q("shadow") + `, O_WRONLY|O_CREAT|O_TRUNC, 0666) = -1 EROFS (Read-only file system)`,
		`4     openat(5<` + hx("/var/lib") + `>, ` + q("../x") + `, O_WRONLY|O_APPEND) = 3<` + hx("/var/x") + `>`,
		`4     openat2(AT_FDCWD<` + hx("/") + `>, ` + q("dev/sda") + `, {flags=O_RDWR, mode=0, resolve=0}, 24) = 3`,
		`4     creat(` + q("/boot/vmlinuz") + `, 0644) = -1 EROFS (Read-only file system)`,
		`4     tgkill(7, 7, SIGTERM)             = 0`,
		`4     kill(-1, 0)                       = 0`,
		`4     execve(` + q("/nope") + `, [` + q("/nope") + `], 0x55 /* 5 vars */) = -1 ENOENT (No such file or directory)`,
		`4     +++ exited with 0 +++`,
		`4     execve(` + q(insideStub) + `, [` + q("frob") + `, ` + q("-x") + `], 0x55 /* 5 vars */) = 0`,
		`4     openat(AT_FDCWD<` + hx("/tmp") + `>, ` + q("/proc/self/root/proc/1/root/dev/sda") + `, O_WRONLY) = -1 EACCES (Permission denied)`,
		`4     clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 9`,
		`4     clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = -1 EAGAIN (Resource temporarily unavailable)`,
		`4     clone3({flags=CLONE_VM|CLONE_THREAD|CLONE_SIGHAND, exit_signal=0}, 88) = 10`,
		`4     openat(AT_FDCWD<` + hx("/") + `>, ` + q("/trunc"), // cut short by a kill
	}
	var tr Trace
	if err := parseTrace(strings.NewReader(strings.Join(lines, "\n")), insideBash, &tr); err != nil {
		t.Fatal(err)
	}
	wantExecs := []Exec{
		{Pid: 3, Path: "/usr/bin/rm", Dir: "/etc", Program: "/usr/bin/rm", Argv: []string{"rm", "-rf", "/, x"}},
		{Pid: 4, Path: "/nope", Dir: "/", Program: "/nope", Argv: []string{"/nope"}, Err: "ENOENT"},
		{Pid: 4, Path: insideStub, Dir: "/tmp", Program: "frob", Argv: []string{"frob", "-x"}},
	}
	wantWrites := []Write{
		{Pid: 2, Syscall: "openat", Path: "/dev/tty", Flags: "O_RDWR|O_NONBLOCK", Err: "ENXIO"},
		{Pid: 2, Syscall: "openat", Path: "/etc/shadow", Flags: "O_WRONLY|O_CREAT|O_TRUNC", Err: "EROFS"},
		{Pid: 4, Syscall: "openat", Path: "/var/x", Flags: "O_WRONLY|O_APPEND"},
		{Pid: 4, Syscall: "openat2", Path: "/dev/sda", Flags: "O_RDWR"},
		{Pid: 4, Syscall: "creat", Path: "/boot/vmlinuz", Flags: "O_CREAT|O_WRONLY|O_TRUNC", Err: "EROFS"},
		{Pid: 4, Syscall: "openat", Path: "/dev/sda", Flags: "O_WRONLY", Err: "EACCES"},
	}
	wantSignals := []Signal{
		{Pid: 2, Syscall: "kill", Target: 1, Signal: "SIGINT", Err: "EPERM"},
		{Pid: 4, Syscall: "tgkill", Target: 7, Signal: "SIGTERM"},
		{Pid: 4, Syscall: "kill", Target: -1, Signal: "0"},
	}
	if tr.Forks != 1 || tr.ForkLimited != 1 {
		t.Errorf("forks %d limited %d, want 1 and 1", tr.Forks, tr.ForkLimited)
	}
	if !reflect.DeepEqual(tr.Execs, wantExecs) {
		t.Errorf("execs\n got %#v\nwant %#v", tr.Execs, wantExecs)
	}
	if !reflect.DeepEqual(tr.Writes, wantWrites) {
		t.Errorf("writes\n got %+v\nwant %+v", tr.Writes, wantWrites)
	}
	if !reflect.DeepEqual(tr.Signals, wantSignals) {
		t.Errorf("signals\n got %+v\nwant %+v", tr.Signals, wantSignals)
	}
}

func TestParseTraceNoStart(t *testing.T) {
	line := `2     execve(` + q("/run/nightshift-oracle/prlimit") + `, [` + q("prlimit") + `], 0x7ffd /* 4 vars */) = -1 EACCES (Permission denied)`
	var tr Trace
	if err := parseTrace(strings.NewReader(line), insideBash, &tr); !errors.Is(err, ErrSandbox) {
		t.Fatalf("got %v, want ErrSandbox", err)
	}
}

// FuzzParseTrace: the parser never panics on any input.
func FuzzParseTrace(f *testing.F) {
	f.Add(`2 execve("\x2f", ["\x2f"], 0x0) = 0` + "\n" + `2 kill(1, SIGINT) = 0`)
	f.Add(`3 openat(AT_FDCWD<\x2f>, "\x2f", O_WRONLY <unfinished ...>` + "\n3 <... openat resumed>) = 3")
	f.Fuzz(func(t *testing.T, s string) {
		var tr Trace
		_ = parseTrace(strings.NewReader(s), "/", &tr)
	})
}
