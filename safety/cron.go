package safety

import (
	"path"
	"strings"

	"github.com/nightshift-dev/nightshift/shell"
)

// Writing a crontab defers commands to cron, where nothing checks them, so
// the lines written are checked now: a cron file written with content
// known before running (echo/printf of literal words, a literal
// here-document or here-string fed to cat or tee) has each entry's command
// matched like a command; unknown content is refused.

func cronFile(p string) (withUser bool, ok bool) {
	p = path.Clean(p)
	switch {
	case p == "/etc/crontab" || strings.HasPrefix(p, "/etc/cron.d/"):
		return true, true
	case strings.HasPrefix(p, "/var/spool/cron/"):
		return false, true
	case strings.HasPrefix(p, "/etc/cron.hourly/") || strings.HasPrefix(p, "/etc/cron.daily/") ||
		strings.HasPrefix(p, "/etc/cron.weekly/") || strings.HasPrefix(p, "/etc/cron.monthly/"):
		return false, true // scripts run by run-parts: checked as a whole script
	}
	return false, false
}

// cronWrites checks what c writes into cron's files.
func (b *BanList) cronWrites(c *shell.Command) (Ban, bool) {
	var targets []shell.Word
	for _, r := range c.Redirs {
		if r.Write {
			targets = append(targets, r.Target)
		}
	}
	if n := progName(c); n == "tee" || n == "cp" || n == "install" || n == "mv" {
		targets = append(targets, fileWrites(c)...)
	}
	for _, t := range targets {
		t = shell.Abs(t, c.Dir)
		if t.Kind != shell.Literal {
			continue
		}
		if unitFile(t.Value) {
			if ban, bad := b.unitWrite(c, t.Value); bad {
				return ban, true
			}
			continue
		}
		withUser, isCron := cronFile(t.Value)
		if !isCron {
			continue
		}
		text, known := written(c)
		e := entries[entDeferred]
		if !known {
			return Ban{Entry: e.id, Pattern: e.covers, Reason: e.reason, Construct: normalForms(c)[0] + " > " + t.Value,
				Hint: "write cron entries as literal text (echo 'LINE' >> FILE or a quoted here-document)"}, true
		}
		script := strings.Contains(t.Value, "/cron.") && !strings.HasPrefix(t.Value, "/etc/cron.d/")
		for _, line := range strings.Split(text, "\n") {
			cmd := line
			if !script {
				cmd = cronCommand(line, withUser)
			}
			if strings.TrimSpace(cmd) == "" {
				continue
			}
			if ban, bad := b.Match(cmd); bad {
				ban.Reason = e.reason + " (a cron entry): " + ban.Reason
				return ban, true
			}
		}
	}
	return Ban{}, false
}

// written returns the text a command writes to its output when it is known.
func written(c *shell.Command) (string, bool) {
	switch progName(c) {
	case "echo", "printf":
		var words []string
		for _, a := range c.Args[1:] {
			if a.Kind == shell.Unknown {
				return "", false
			}
			words = append(words, a.Value)
		}
		if progName(c) == "printf" {
			return printfText(words)
		}
		for len(words) > 0 && (words[0] == "-e" || words[0] == "-n" || words[0] == "-en" || words[0] == "-ne" || words[0] == "-E") {
			if strings.Contains(words[0], "e") {
				words[len(words)-1] = escapes.Replace(words[len(words)-1])
				for i := range words[1:] {
					words[i+1] = escapes.Replace(words[i+1])
				}
			}
			words = words[1:]
		}
		return strings.Join(words, " ") + "\n", true
	case "cat", "tee":
		for _, a := range c.Args[1:] {
			if !strings.HasPrefix(a.Value, "-") && progName(c) == "cat" {
				return "", false // a file's content
			}
		}
		return c.StdinText, c.StdinKnown
	}
	return "", false
}

// cronCommand returns the command of one crontab line ("" for comments,
// blank lines and variable settings).
func cronCommand(line string, withUser bool) string {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return ""
	}
	f := strings.Fields(line)
	if len(f) > 0 && strings.Contains(f[0], "=") && !strings.HasPrefix(f[0], "@") {
		return ""
	}
	skip := 5
	if strings.HasPrefix(line, "@") {
		skip = 1
	}
	if withUser {
		skip++
	}
	rest := line
	for i := 0; i < skip; i++ {
		rest = strings.TrimLeft(rest, " \t")
		j := strings.IndexAny(rest, " \t")
		if j < 0 {
			return ""
		}
		rest = rest[j:]
	}
	// cron turns unescaped % into newlines (standard input).
	if i := strings.Index(strings.ReplaceAll(rest, `\%`, "  "), "%"); i >= 0 {
		rest = rest[:i]
	}
	return strings.TrimSpace(rest)
}

// unitFile reports a systemd unit or drop-in file: its Exec lines run
// commands when the unit starts, later, unchecked.
//
// Only the unit directories count (system/, user/ and their drop-ins) and
// the directories of programs systemd runs (generators, shutdown and
// sleep hooks); the daemons' own settings (/etc/systemd/journald.conf,
// logind.conf, timesyncd.conf.d/…) run nothing.
func unitFile(p string) bool {
	p = path.Clean(p)
	for _, d := range []string{"/etc/systemd/", "/run/systemd/", "/lib/systemd/", "/usr/lib/systemd/", "/usr/local/lib/systemd/"} {
		rel, ok := strings.CutPrefix(p, d)
		if !ok {
			continue
		}
		top, _, _ := strings.Cut(rel, "/")
		switch top {
		case "system", "user", "system.control", "user.control", "transient":
			ext := path.Ext(p)
			return ext == ".service" || ext == ".conf" || ext == ".socket" || ext == ".timer" || ext == ".path" || ext == ".mount"
		case "system-generators", "user-generators", "system-shutdown", "system-sleep", "system-environment-generators", "user-environment-generators":
			return true
		}
		return false
	}
	return false
}

// unitWrite checks the Exec lines a command writes into a unit file.
func (b *BanList) unitWrite(c *shell.Command, file string) (Ban, bool) {
	e := entries[entDeferred]
	text, known := written(c)
	if !known {
		return Ban{Entry: e.id, Pattern: e.covers, Reason: e.reason, Construct: normalForms(c)[0] + " > " + file,
			Hint: "write unit files as literal text (a quoted here-document)"}, true
	}
	for _, line := range strings.Split(text, "\n") {
		key, val, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || !strings.HasPrefix(strings.TrimSpace(key), "Exec") {
			continue
		}
		cmd := strings.TrimLeft(strings.TrimSpace(val), "@-:+!|")
		if cmd == "" {
			continue
		}
		if ban, bad := b.Match(cmd); bad {
			ban.Reason = e.reason + " (a systemd unit's " + strings.TrimSpace(key) + "): " + ban.Reason
			return ban, true
		}
	}
	return Ban{}, false
}

var escapes = strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`, `\"`, `"`, `\'`, "'")

// printfText renders printf FORMAT ARGS… for %s, %b and %d conversions,
// reusing the format while arguments remain, as printf does; other
// conversions make the output unknown.
func printfText(words []string) (string, bool) {
	if len(words) == 0 {
		return "", false
	}
	if words[0] == "-v" {
		return "", true // assigns a variable, writes nothing
	}
	format, args := escapes.Replace(words[0]), words[1:]
	var b strings.Builder
	for first := true; first || len(args) > 0; first = false {
		for i := 0; i < len(format); i++ {
			if format[i] != '%' || i+1 >= len(format) {
				b.WriteByte(format[i])
				continue
			}
			i++
			switch format[i] {
			case '%':
				b.WriteByte('%')
			case 's', 'b', 'd':
				if len(args) > 0 {
					v := args[0]
					if format[i] == 'b' {
						v = escapes.Replace(v)
					}
					b.WriteString(v)
					args = args[1:]
				}
			default:
				return "", false
			}
		}
		if !strings.Contains(format, "%") {
			break
		}
	}
	return b.String(), true
}
