package shell

import "slices"

// programOptions is the module's one table of the options of the programs
// whose operands it reads (the files, units, packages and keys they
// change): safety's checks and distill's targets both parse them here.
// GNU coreutils and sed are as Debian 12's (coreutils 9.1, sed 4.9) --help
// lists them, which TestProgramOptionsMatchHelp checks against the real
// programs, plus the options later versions added (mv --exchange,
// --no-copy; cp and mv --update=WHICH); the others as their manuals give
// them.
var programOptions = map[string]Options{
	"rm": {Flags: "dfiIrRv", Long: []string{"--dir", "--force", "--one-file-system", "--no-preserve-root", "--recursive", "--verbose", "--help", "--version"},
		LongOpt: []string{"--interactive", "--preserve-root"}, Permute: true},
	"mv": {Flags: "bfinTuvZ", Args: "St", Long: []string{"--force", "--interactive", "--no-clobber", "--no-target-directory", "--strip-trailing-slashes",
		"--verbose", "--context", "--exchange", "--no-copy", "--debug", "--help", "--version"},
		LongArgs: []string{"--suffix", "--target-directory"}, LongOpt: []string{"--backup", "--update"}, Permute: true},
	"cp": {Flags: "abdfHilLnPpRrsTuvxZ", Args: "St", Long: []string{"--archive", "--attributes-only", "--copy-contents", "--dereference",
		"--force", "--interactive", "--link", "--no-clobber", "--no-dereference", "--no-target-directory", "--one-file-system", "--parents",
		"--recursive", "--remove-destination", "--strip-trailing-slashes", "--symbolic-link", "--verbose", "--debug", "--help", "--version"},
		LongArgs: []string{"--no-preserve", "--sparse", "--suffix", "--target-directory"},
		LongOpt:  []string{"--backup", "--context", "--preserve", "--reflink", "--update"}, Permute: true},
	"ln": {Flags: "bdfFiLnPrsTv", Args: "St", Long: []string{"--directory", "--force", "--interactive", "--logical", "--no-dereference",
		"--no-target-directory", "--physical", "--relative", "--symbolic", "--verbose", "--help", "--version"},
		LongArgs: []string{"--suffix", "--target-directory"}, LongOpt: []string{"--backup"}, Permute: true},
	"install": {Flags: "bcCdDpsTvZ", Args: "gmoSt", Long: []string{"--compare", "--directory", "--no-target-directory", "--preserve-context",
		"--preserve-timestamps", "--strip", "--verbose", "--debug", "--help", "--version"},
		LongArgs: []string{"--group", "--mode", "--owner", "--strip-program", "--suffix", "--target-directory"},
		LongOpt:  []string{"--backup", "--context"}, Permute: true},
	"chmod": {Flags: "cfvR", Long: []string{"--changes", "--silent", "--quiet", "--verbose", "--no-preserve-root", "--preserve-root",
		"--recursive", "--help", "--version"}, LongArgs: []string{"--reference"}, Permute: true},
	"chown": {Flags: "cfvhRHLP", Long: []string{"--changes", "--silent", "--quiet", "--verbose", "--dereference", "--no-dereference",
		"--no-preserve-root", "--preserve-root", "--recursive", "--help", "--version"}, LongArgs: []string{"--from", "--reference"}, Permute: true},
	"chgrp": {Flags: "cfvhRHLP", Long: []string{"--changes", "--silent", "--quiet", "--verbose", "--dereference", "--no-dereference",
		"--no-preserve-root", "--preserve-root", "--recursive", "--help", "--version"}, LongArgs: []string{"--reference"}, Permute: true},
	"chcon": {Flags: "hvRHLP", Args: "lrtu", Long: []string{"--verbose", "--dereference", "--no-dereference", "--no-preserve-root",
		"--preserve-root", "--recursive", "--help", "--version"}, LongArgs: []string{"--range", "--reference", "--role", "--type", "--user"}, Permute: true},
	"touch": {Flags: "acfhm", Args: "drt", Long: []string{"--no-create", "--no-dereference", "--help", "--version"},
		LongArgs: []string{"--date", "--reference", "--time"}, Permute: true},
	"mkdir": {Flags: "pvZ", Args: "m", Long: []string{"--parents", "--verbose", "--help", "--version"}, LongArgs: []string{"--mode"},
		LongOpt: []string{"--context"}, Permute: true},
	"rmdir": {Flags: "pv", Long: []string{"--ignore-fail-on-non-empty", "--parents", "--verbose", "--help", "--version"}, Permute: true},
	"truncate": {Flags: "co", Args: "rs", Long: []string{"--no-create", "--io-blocks", "--help", "--version"},
		LongArgs: []string{"--reference", "--size"}, Permute: true},
	"tee": {Flags: "aip", Long: []string{"--append", "--ignore-interrupts", "--help", "--version"}, LongOpt: []string{"--output-error"}, Permute: true},
	"shred": {Flags: "fuvxz", Args: "ns", Long: []string{"--exact", "--force", "--verbose", "--zero", "--help", "--version"},
		LongArgs: []string{"--iterations", "--random-source", "--size"}, LongOpt: []string{"--remove"}, Permute: true},
	"sed": {Flags: "Enrsuz", Args: "efl", Optional: "i", Long: []string{"--debug", "--follow-symlinks", "--null-data", "--zero-terminated",
		"--posix", "--quiet", "--silent", "--regexp-extended", "--sandbox", "--separate", "--unbuffered", "--binary", "--help", "--version"},
		LongArgs: []string{"--expression", "--file", "--line-length"}, LongOpt: []string{"--in-place"}, Permute: true},
	"setfacl": {Flags: "bkndRLPtv", Args: "mMxX", Long: []string{"--remove-all", "--remove-default", "--no-mask", "--mask", "--default",
		"--recursive", "--logical", "--physical", "--test", "--version", "--help"},
		LongArgs: []string{"--modify", "--modify-file", "--remove", "--remove-file", "--set", "--set-file", "--restore"}, Permute: true},
	"systemctl": {Flags: "afhilqr", Args: "HMnopPst", Long: []string{"--all", "--recursive", "--reverse", "--after", "--before",
		"--failed", "--full", "--value", "--show-types", "--fail", "--ignore-inhibitors", "--dry-run", "--quiet", "--no-warn", "--wait",
		"--no-block", "--user", "--system", "--global", "--no-wall", "--no-reload", "--no-ask-password", "--force", "--now", "--runtime",
		"--no-pager", "--no-legend", "--plain", "--firmware-setup", "--read-only", "--mkdir", "--marked", "--check-inhibitors", "--help", "--version"},
		LongArgs: []string{"--type", "--state", "--property", "--signal", "--kill-whom", "--kill-value", "--what", "--host", "--machine",
			"--output", "--lines", "--root", "--image", "--preset-mode", "--message", "--timestamp", "--boot-loader-menu", "--boot-loader-entry",
			"--reboot-argument", "--drop-in", "--when", "--job-mode", "--legend"}, Permute: true},
	"apt": {Flags: "bdfhmqsuVy", Args: "acoSt", LongArgs: []string{"--option", "--config-file", "--target-release", "--default-release"}, Permute: true},
	"dnf": {Flags: "bCqvyh", Args: "cdeiRx", LongArgs: []string{"--setopt", "--config", "--releasever", "--installroot", "--enablerepo",
		"--disablerepo", "--repo", "--repoid", "--exclude", "--downloaddir", "--destdir", "--from-repo", "--forcearch", "--color"}, Permute: true},
	"dpkg":             {Args: "ciLPrsS", LongArgs: []string{"--root", "--admindir", "--instdir", "--force", "--configure"}},
	"dpkg-reconfigure": {Flags: "u", Args: "fp", LongArgs: []string{"--frontend", "--priority"}, Permute: true},
	"rpm":              {LongArgs: []string{"--root", "--dbpath", "--define", "--macros"}, Permute: true},
	"sysctl": {Flags: "abeNnqwAXr", Args: "fp", Long: []string{"--system", "--all", "--binary", "--ignore", "--names", "--values",
		"--quiet", "--write"}, LongOpt: []string{"--load", "--pattern"}, Permute: true},
	"augtool": {Flags: "AbceiLnQsS", Args: "fIlrt", LongArgs: []string{"--root", "--include", "--load-file", "--transform", "--file"}, Permute: true},
}

// programAliases are programs that take another's options.
var programAliases = map[string]string{
	"apt-get": "apt", "aptitude": "apt",
	"yum": "dnf", "microdnf": "dnf", "zypper": "dnf",
}

// ProgramOptions returns the options of a program whose operands the
// module reads: GNU coreutils' rm, mv, cp, ln, install, chmod, chown,
// chgrp, chcon, touch, mkdir, rmdir, truncate, tee and shred, sed, setfacl,
// systemctl, the package managers (apt, apt-get, aptitude; dnf, yum,
// microdnf, zypper; dpkg, dpkg-reconfigure, rpm), sysctl and augtool. ok is
// false for other programs. The returned Options are the caller's own.
func ProgramOptions(program string) (o Options, ok bool) {
	if alias, isAlias := programAliases[program]; isAlias {
		program = alias
	}
	o, ok = programOptions[program]
	o.Long, o.LongArgs, o.LongOpt = slices.Clone(o.Long), slices.Clone(o.LongArgs), slices.Clone(o.LongOpt)
	return o, ok
}

// Resolve resolves a long option (with or without "=value") among o's long
// options by exact name or unique prefix, as GNU getopt_long does; ok is
// false when it matches none or several.
func (o Options) Resolve(option string) (full string, ok bool) {
	return ResolveLong(option, slices.Concat(o.Long, o.LongArgs, o.LongOpt))
}
