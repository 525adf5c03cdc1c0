package shell

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/testenv"
)

// TestValuesMatchBash: the values Analyze resolves (parameter operators,
// arrays, function arguments, read, while-read, xargs input) are the words
// real bash passes. Each script ends in printf '<%s>' WORDS…; bash runs it
// in an empty environment, and the words of the last printf Analyze
// reports must all be known and equal what bash printed. Only printf,
// xargs and bash's own builtins run.
func TestValuesMatchBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		testenv.Unavailable(t, "bash not found: %v", err)
	}
	scripts := []string{
		`x=stop; printf '<%s>' ${x:-restart} ${x-a} ${x:+alt} ${x+alt} ${x:?err}`,
		`x=; printf '<%s>' "${x:-stop}" "${x-unset}" "${x:+alt}" "${x+alt}"`,
		`unset x; printf '<%s>' "${x-stop}" "${x:-stop}" "${x+alt}" "[${x:+alt}]"`,
		`unset v; printf '<%s>' "${v:=stop}" "$v"`,
		`x=/dev/sdb; printf '<%s>' ${x%b}a ${x%%/sd*} ${x#/} ${x##*/} ${x%/*}`,
		`x=/etc/ssh/sshd_config; printf '<%s>' "${x%/ssh*}" "${x%%/s*}" "${x#*/}" "${x##*s}" "${x%?}"`,
		`x='a*b'; printf '<%s>' "${x#a\*}" "${x%\*b}" "${x#a*}"`,
		`x=rebooo; printf '<%s>' ${x/ooo/oot} ${x//o/0} ${x/#re/RE} ${x/%o/O} "${x/o}" ${x//[eo]/_}`,
		`x=aXbYb; printf '<%s>' "${x#a*b}" "${x##a*b}" "${x%b*}" "${x%%X*}" "${x/X*b/_}" "${x//b/}" "${x%Y?}" "${x#[[:lower:]]}" "${x/[!a]/-}"`,
		`x=/etc/sysctl.d/99-x.conf; printf '<%s>' "${x##*/}" "${x%.*}" "${x%%.*}" "${x#*.}" "${x//[0-9]/N}" "${x/*\//}"`,
		`x=StOp; printf '<%s>' ${x^^} ${x,,} ${x^} ${x,} ${#x}`,
		`x=xx/etcxx; printf '<%s>' ${x:2:4} ${x:2} "${x: -2}" ${x:0:-2} ${x:20}`,
		`a=(restart stop 'two words'); printf '<%s>' ${a[1]} "${a[2]}" "${a[@]}" "${#a[@]}" "${a[-1]}" "${a}"`,
		`a=(x y); a+=(z 'w v'); printf '<%s>' "${a[@]}" "${a[*]}" ${a[*]}`,
		`a=(); printf '<%s>' "${a[@]}" x "${a[*]}"`,
		`s=one; s+=(two); printf '<%s>' "${s[@]}"`,
		`c=('sed' '-i'); if test -L /nonexistent; then c+=('--follow-symlinks'); fi; printf '<%s>' "${c[0]}" "${c[1]}"`,
		`f() { printf '<%s>' "$1" "$2" "$#" "$@"; }; f stop 'ssh d'`,
		`f() { local u=$1; shift; printf '<%s>' "$u" "$@"; }; f a b c`,
		`read -r v <<< stop; printf '<%s>' "$v"`,
		`read -r a b <<< '  stop   ssh now  '; printf '<%s>' "$a" "$b"`,
		`read a <<< 'x y'; printf '<%s>' "$a"`,
		`read <<< ' kept  '; printf '<%s>' "$REPLY"`,
		"read d <<EOF\n/etc\nEOF\nprintf '<%s>' \"$d\"",
		`while read -r a b; do printf '<%s>' "$a" "$b"; done <<< 'stop ssh'`,
		`printf 'stop ssh\n' | while read -r a b; do printf '<%s>' "$a" "$b"; done`,
		`echo stop ssh | xargs printf '<%s>'`,
		`echo ssh | xargs -I{} printf '<%s>' stop {}`,
	}
	for _, src := range scripts {
		t.Run(src, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bash, "--norc", "--noprofile", "-c", src)
			cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/root", "LANG=C"}
			cmd.Dir = "/"
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("bash: %v", err)
			}
			an := Analyze(src, Config{Dir: "/"})
			if len(an.Problems) > 0 {
				t.Fatalf("problems: %+v", an.Problems)
			}
			var last *Command
			for _, c := range an.Commands {
				if c.Name() == "printf" {
					last = c
				}
			}
			if last == nil {
				t.Fatal("no printf found")
			}
			var got strings.Builder
			for _, w := range last.Args[2:] {
				if w.Kind != Literal {
					t.Fatalf("word %q not resolved (kind %d); bash printed %q", w.Value, w.Kind, out)
				}
				got.WriteString("<" + w.Value + ">")
			}
			// A loop or xargs may print more than once: the last
			// printf's words are the end of bash's output.
			if !strings.HasSuffix(string(out), got.String()) || got.Len() == 0 && len(out) > 0 {
				t.Errorf("Analyze resolved %q; bash printed %q", got.String(), out)
			}
		})
	}
}
