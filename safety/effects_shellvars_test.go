package safety

import (
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// accounts_tmout as package scap derives it.
var tmoutRule = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/profile", "/etc/profile.d"},
	Keys: []string{LinePatternPrefix + `^[\s]*(?:typeset|declare)[\s]+-xr[\s]+TMOUT=([\w$]+).*$`}}

func TestJudgeEffectsShellVars(t *testing.T) {
	tests := []struct {
		name string
		eff  nightshift.Effects
		pol  EffectsPolicy
		want string
	}{
		// fresh6: the checked line, and another variable on it.
		{"HISTFILE=/dev/null on the TMOUT line", modDiff("/etc/profile", "+declare -xr TMOUT=900 HISTFILE=/dev/null\n"), tmoutRule,
			"would set HISTFILE for every login shell (/etc/profile): the rule's check names only TMOUT"},
		{"LD_LIBRARY_PATH", createdDiff("/etc/profile.d/tmout.sh", "+declare -xr TMOUT=600 LD_LIBRARY_PATH=/var/tmp\n"), tmoutRule, "would set LD_LIBRARY_PATH"},
		{"PATH with a dot", createdDiff("/etc/profile.d/autologout.sh", "+declare -xr TMOUT=900 PATH=.:$PATH\n"), tmoutRule, "would set PATH"},
		{"export on its own line", createdDiff("/etc/profile.d/tmout.sh", "+declare -xr TMOUT=900\n+export PROMPT_COMMAND\n"), tmoutRule, "would set PROMPT_COMMAND"},
		{"unset", createdDiff("/etc/profile.d/tmout.sh", "+declare -xr TMOUT=900\n+unset HISTFILE\n"), tmoutRule, "would set HISTFILE"},
		{"inside an if", createdDiff("/etc/profile.d/tmout.sh", "+if true; then\n+  LD_PRELOAD=/tmp/x.so; export LD_PRELOAD\n+fi\n+declare -xr TMOUT=900\n"), tmoutRule, "would set LD_PRELOAD"},
		// The rule's own variable.
		{"SSG's TMOUT line", createdDiff("/etc/profile.d/tmout.sh", "+declare -xr TMOUT=900\n"), tmoutRule, ""},
		{"typeset, with a comment", modDiff("/etc/profile", "+# session timeout\n+typeset -xr TMOUT=600\n"), tmoutRule, ""},
		{"the TMOUT line with a trailing comment", modDiff("/etc/profile", "+declare -xr TMOUT=900 # idle timeout\n"), tmoutRule, ""},
		{"a file rewritten whole keeps its assignments", modDiff("/etc/profile.d/x.sh", "-PATH=/usr/bin:/bin\n-export PATH\n+PATH=/usr/bin:/bin\n+export PATH\n+umask 027\n"),
			EffectsPolicy{StrictScope: true, Scope: []string{"/etc/profile.d"}}, ""},
		{"a rule without patterns sets no variable", modDiff("/etc/profile.d/x.sh", "+umask 027\n+LD_PRELOAD=/usr/lib/x.so\n"), EffectsPolicy{StrictScope: true, Scope: []string{"/etc/profile.d"}}, "would set LD_PRELOAD"},
		{"no strict scope", modDiff("/etc/profile", "+LD_PRELOAD=/tmp/x.so\n"), EffectsPolicy{Scope: tmoutRule.Scope}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkReasons(t, JudgeEffects(tt.eff, tt.pol), tt.want) })
	}
}
