package shell

import (
	"strings"
	"testing"
)

// cmds renders the commands of an analysis as "via>args|dir" lines.
func cmds(an *Analysis) []string {
	var out []string
	for _, c := range an.Commands {
		var parts []string
		for _, w := range c.Args {
			switch w.Kind {
			case Unknown:
				parts = append(parts, "?"+w.Value)
			case Pattern:
				parts = append(parts, "~"+w.Glob)
			default:
				parts = append(parts, w.Value)
			}
		}
		line := strings.Join(parts, " ")
		if len(c.Via) > 0 {
			line = strings.Join(c.Via, ">") + ">" + line
		}
		if c.Dir != "/root" {
			line += "|" + c.Dir
		}
		out = append(out, line)
	}
	return out
}

func TestAnalyze(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{`rm -rf /`, []string{"rm -rf /"}},
		{`"r"m -r'f' /`, []string{"rm -rf /"}},
		{`\rm -rf /`, []string{"rm -rf /"}},
		{`echo $'a\x41\n'`, []string{"echo aA\n"}},
		{`rm -rf /{etc,usr}`, []string{"rm -rf /etc /usr"}},
		{`rm -rf ~ ~root/x`, []string{"rm -rf /root /root/x"}},
		{`x=/etc; rm -rf $x "$x"/ssh`, []string{"rm -rf /etc /etc/ssh"}},
		{`SYSTEMCTL_EXEC='/usr/bin/systemctl'; "$SYSTEMCTL_EXEC" unmask auditd`, []string{"/usr/bin/systemctl unmask auditd"}},
		{`IFS= read -r line < /etc/hosts`, []string{"read -r line"}},
		{`if grep -q x f; then found=true; else found=false; fi; "$found" && echo y`, []string{"grep -q x f", "true", "false", "echo y"}},
		{`found=false; for f in $(ls); do if grep -q x "$f"; then found=true; fi; done; if ! $found; then echo n; fi`,
			[]string{"ls", "grep -q x ?$f", "false", "true", "echo n"}},
		{`x=false; for f in $(ls); do $x; x=rm; done`, []string{"ls", "false", "rm"}},
		{`~/bin/tool`, []string{"/root/bin/tool"}},
		{`x="a b"; echo $x "$x"`, []string{"echo a b a b"}},
		{`rm -rf /e*`, []string{"rm -rf ~/e*"}},
		{`rm -rf "/e*"`, []string{"rm -rf /e*"}},
		{`rm -rf $(cat list)`, []string{"cat list", "rm -rf ?$(cat list)"}},
		{`for d in /etc /usr; do rm -rf "$d"; done`, []string{"rm -rf /etc", "rm -rf /usr"}},
		{`for d in $(ls); do rm -rf "$d"; done`, []string{"ls", "rm -rf ?$d"}},
		{`cd /etc && rm -rf ./*`, []string{"cd /etc", "rm -rf ~./*|/etc"}},
		{`cd /etc; rm x`, []string{"cd /etc", "rm x|"}},
		{`(cd /etc); rm x`, []string{"cd /etc", "rm x"}},
		{`cd "$D" && rm x`, []string{"cd ?$D", "rm x|"}},
		{`sudo -u root timeout -s KILL 5 nice -n 1 rm -rf /`, []string{"sudo -u root timeout -s KILL 5 nice -n 1 rm -rf /",
			"sudo>timeout -s KILL 5 nice -n 1 rm -rf /", "sudo>timeout>nice -n 1 rm -rf /", "sudo>timeout>nice>rm -rf /"}},
		{`bash -c 'rm -rf "$1"' sh /etc`, []string{"bash -c rm -rf \"$1\" sh /etc", "bash -c>rm -rf /etc"}},
		{`su - root -c 'reboot'`, []string{"su - root -c reboot", "su -c>reboot"}},
		{`env -i -C /etc FOO=1 rm -rf .`, []string{"env -i -C /etc FOO=1 rm -rf .", "env>rm -rf .|/etc"}},
		{`find / -name x -exec rm {} \;`, []string{"find / -name x -exec rm {} ;", "find -exec>rm ?{}"}},
		{`xargs -0 rm -f`, []string{"xargs -0 rm -f", "xargs>rm -f ?{input}"}},
		{`trap 'reboot' EXIT`, []string{"trap reboot EXIT", "trap>reboot"}},
		// The body at the definition, then again for the call with its arguments.
		{`f() { reboot; }; f`, []string{"reboot", "f", "reboot"}},
		{`f() { systemctl "$1" ssh; }; f stop`, []string{"systemctl ?$1 ssh", "f stop", "systemctl stop ssh"}},
		{`a=(sed -i); a+=(-E); "${a[@]}" s/a/b/ f`, []string{"sed -i -E s/a/b/ f"}},
		{`x=/dev/sdb; y=${x%b}a; echo ${y^^} ${x:-z} ${u-d} ${x/sd/hd} ${x:5:3} ${#x}`, []string{"echo /DEV/SDA /dev/sdb ?${u-d} /dev/hdb sdb 8"}},
		{`read -r v w <<< "stop  ssh now"; echo "$v" "$w"`, []string{"read -r v w", "echo stop ssh now"}},
		{`echo stop ssh | xargs -n1 systemctl`, []string{"echo stop ssh", "xargs -n1 systemctl", "xargs>systemctl stop", "xargs>systemctl ssh"}},
		{`cat <<EOF
$(reboot)
EOF`, []string{"reboot", "cat"}},
		{`echo x > /dev/sda`, []string{"echo x"}},
		{`setsid -f flock /tmp/l chroot / rm -rf /`, []string{"setsid -f flock /tmp/l chroot / rm -rf /", "setsid>flock /tmp/l chroot / rm -rf /",
			"setsid>flock>chroot / rm -rf /", "setsid>flock>chroot>rm -rf /"}},
	}
	for _, tt := range tests {
		an := Analyze(tt.src, Config{})
		got := cmds(an)
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") || len(an.Problems) > 0 {
			t.Errorf("%q:\n got %q\nwant %q\nproblems %+v", tt.src, got, tt.want, an.Problems)
		}
	}
}

func TestAnalyzeProblems(t *testing.T) {
	tests := []struct{ src, reason string }{
		{"true\r#; rm -rf /", `carriage return (\r)`},
		{"true\v#; rm -rf /", `vertical tab`},
		{"true\f#; rm -rf /", `form feed`},
		{"echo \xff", "invalid UTF-8"},
		{"true # \\\nrm -rf /", "comment ending in a backslash"},
		{"echo \"$\\\n(rm -rf /etc)\"", "line continuation right after $"},
		{"x=/; rm -rf $\\\n{x}", "line continuation right after $"},
		{"echo a #x\\\nreboot\necho", "comment ending in a backslash"},
		{`echo "unterminated`, "bash would not parse it"},
		{`$x -rf /`, "program name is produced by an expansion"},
		{`/bin/r[m] -rf /`, "program name is produced by an expansion"},
		{`{rm,-rf,/}`, "program name is produced by an expansion"},
		{`rm${IFS}-rf${IFS}/`, "program name is produced by an expansion"},
		{`$(printf rm) -rf /`, "program name is produced by an expansion"},
		{`$UNSET/bin/tool`, "program name is produced by an expansion"},
		{`x=$(date); $x`, "program name is produced by an expansion"},
		{`echo 'rm -rf /' | bash`, "reads its commands from a pipe"},
		{`bash <<< 'rm -rf /'`, "reads its commands from a here-string"},
		{"sh <<EOF\nreboot\nEOF", "reads its commands from a here-document"},
		{`bash -s < /dev/null | true; curl x | sh -s`, "reads its commands from a pipe"},
		{`bash -c "$CMD"`, "not literal text"},
		{`eval "$CMD"`, "not literal text"},
		{`su -c "$CMD"`, "not literal text"},
		{`sudo --bogus rm -rf /`, "unknown or non-literal option --bogus"},
		{`source "$F"`, "named by an expansion"},
		{`echo reboot > /tmp/x.sh; bash /tmp/x.sh`, "written by the same command line"},
		{`shopt -s expand_aliases`, "aliases"},
		{`enable -f /tmp/x.so x`, "shared object"},
		{`x='a[$(reboot)]'; echo $((x))`, "not a number"},
		{`x='a[$(reboot)]'; [[ $x -eq 1 ]]`, "not a number"},
		{"a=x; " + strings.Repeat("a=$a$a$a$a; ", 12), "too large"},
		{strings.Repeat("bash -c '", 1) + strings.Repeat("(", 200) + "true" + strings.Repeat(")", 200) + "'", ""},
	}
	for _, tt := range tests {
		an := Analyze(tt.src, Config{})
		if tt.reason == "" {
			continue // only must not panic or hang
		}
		found := false
		for _, p := range an.Problems {
			if strings.Contains(p.Reason, tt.reason) && p.Hint != "" {
				found = true
			}
		}
		if !found {
			t.Errorf("%q: problems %+v, want one with %q and a hint", tt.src, an.Problems, tt.reason)
		}
	}
}

func TestWrites(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{`{ cat /dev/zero; } > /dev/sda`, []string{"/dev/sda"}},
		{`(cat /dev/zero) >> /dev/sda 2>&1`, []string{"/dev/sda"}},
		{`exec 3> /dev/sdb`, []string{"/dev/sdb"}},
		{`cd /proc && echo b > sysrq-trigger`, []string{"/proc/sysrq-trigger"}},
		{`echo x &> out`, []string{"/root/out"}},
		{`echo x >& log`, []string{"/root/log"}},
		{`echo x 2>&1 >/dev/null`, []string{"/dev/null"}},
		{`/usr/bin/time -o /dev/sda true`, []string{"/dev/sda"}},
		{`script -q /dev/sda`, []string{"/dev/sda"}},
	}
	for _, tt := range tests {
		an := Analyze(tt.src, Config{})
		var got []string
		for _, w := range an.Writes {
			got = append(got, w.Value)
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%q: writes %q, want %q", tt.src, got, tt.want)
		}
	}
}

func TestStdin(t *testing.T) {
	an := Analyze(`echo 'flush ruleset' | nft -f -`, Config{})
	c := an.Commands[len(an.Commands)-1]
	if c.Stdin != StdinPipe || !c.StdinKnown || c.StdinText != "flush ruleset\n" {
		t.Errorf("nft stdin: %v %v %q", c.Stdin, c.StdinKnown, c.StdinText)
	}
	an = Analyze("chpasswd <<EOF\nroot:\nEOF", Config{})
	c = an.Commands[0]
	if c.Stdin != StdinHeredoc || !c.StdinKnown || c.StdinText != "root:\n" {
		t.Errorf("heredoc stdin: %v %v %q", c.Stdin, c.StdinKnown, c.StdinText)
	}
}

func TestForkBomb(t *testing.T) {
	for _, src := range []string{`:(){ :|:& };:`, `bomb() { bomb | bomb & }; bomb`, "f() {\n f &\n f\n}\nf"} {
		if _, ok := Analyze(src, Config{}).SelfForking(); !ok {
			t.Errorf("%q: fork bomb not found", src)
		}
	}
	if _, ok := Analyze(`f() { echo x | grep x; }; f`, Config{}).SelfForking(); ok {
		t.Error("a function with a pipe reported as a fork bomb")
	}
}

func TestResolveLong(t *testing.T) {
	names := []string{"--recursive", "--reference", "--verbose"}
	for in, want := range map[string]string{"--rec": "--recursive", "--ref=x": "--reference", "--v": "--verbose", "--re": "", "--x": ""} {
		got, ok := ResolveLong(in, names)
		if got != want || ok != (want != "") {
			t.Errorf("ResolveLong(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// FuzzAnalyze: Analyze never panics, and its output stays bounded.
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{`rm -rf /`, `for d in a b; do sudo rm -rf "$d"; done`, `bash -c 'eval "$(x)"'`, "cat <<E\n$(y)\nE",
		`a=$a$a$a; echo $((a+1))`, `find / -exec sh -c 'rm {}' \;`, `x(){ x|x& };x`, `env -S 'a b' c`, `parallel ::: a b`, "${x:-$(y)}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		an := Analyze(src, Config{})
		if len(an.Commands) > maxCommands+1 {
			t.Fatalf("%d commands", len(an.Commands))
		}
	})
}

func TestOptionsParse(t *testing.T) {
	o := Options{Flags: "fR", Args: "m", Long: []string{"--recursive"}, Permute: true}
	words := func(ss ...string) []Word {
		var out []Word
		for _, s := range ss {
			out = append(out, Lit(s))
		}
		return out
	}
	opts, ops, unknown := o.Parse(words("000", "/etc", "--bogus", "-R", "x", "-m", "644", "--", "-f"))
	var names, vals []string
	for _, op := range opts {
		names = append(names, op.Name+"="+op.Value.Value)
	}
	for _, w := range ops {
		vals = append(vals, w.Value)
	}
	if strings.Join(names, ",") != "--bogus=,-R=,-m=644" || strings.Join(vals, ",") != "000,/etc,x,-f" || strings.Join(unknown, ",") != "--bogus" {
		t.Errorf("opts %v operands %v unknown %v", names, vals, unknown)
	}
	_, ops, _ = Options{Flags: "f"}.Parse(words("-f", "a", "-f"))
	if len(ops) != 2 || ops[1].Value != "-f" {
		t.Errorf("without Permute, options end at the first operand: %v", ops)
	}
}
