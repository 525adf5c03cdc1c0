package inventory

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift/internal/readfile"
)

// Errors wrapped by the parsers and Select.
var (
	ErrSyntax     = errors.New("syntax error")
	ErrRange      = errors.New("invalid host range")
	ErrPort       = errors.New("invalid port")
	ErrCycle      = errors.New("group cycle")
	ErrUnknownKey = errors.New("unknown key")
	ErrUndeclared = errors.New("undeclared group")
	ErrNoMatch    = errors.New("no host matches")
	ErrVar        = errors.New("invalid variable")
	// ErrDuplicateHost: a YAML inventory lists one host name twice.
	ErrDuplicateHost = errors.New("duplicate host")
)

// Caps on what one inventory may hold.
const (
	// MaxExpansion caps the hosts one range pattern may expand to.
	MaxExpansion = 100000
	// MaxHosts caps the host entries of a whole inventory, range
	// expansions included: ten lines of hN-[0:99999] are refused at the
	// second, not expanded to a million hosts.
	MaxHosts = 100000
	// MaxFileSize caps an inventory file.
	MaxFileSize = 16 << 20
)

// ParseError is a parse failure at a line of an inventory file.
type ParseError struct {
	File string // the name given to the parser
	Line int    // 1-based; 0 when the problem is not at one line
	Err  error  // the problem, wrapping one of the package's sentinels
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("inventory %s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("inventory %s: %v", e.File, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// Host is one machine of an inventory.
type Host struct {
	Name     string            `json:"name"`               // inventory name, unique
	Address  string            `json:"address"`            // where to connect (ansible_host, default Name)
	Port     int               `json:"port,omitempty"`     // 0: the caller's default (22)
	User     string            `json:"user,omitempty"`     // "": the caller's default
	Identity string            `json:"identity,omitempty"` // private key file, "" for the caller's default
	Become   bool              `json:"become,omitempty"`   // run commands through sudo (ansible_become)
	Groups   []string          `json:"groups,omitempty"`   // every group the host belongs to, sorted, without "all"
	Vars     map[string]string `json:"vars,omitempty"`     // effective variables after precedence
}

// Destination returns "[user@]address[:port]" for the host.
func (h Host) Destination() string {
	var b strings.Builder
	if h.User != "" {
		b.WriteString(h.User)
		b.WriteByte('@')
	}
	addr := h.Address
	if addr == "" {
		addr = h.Name
	}
	if h.Port != 0 {
		if strings.Contains(addr, ":") {
			addr = "[" + addr + "]"
		}
		addr += ":" + strconv.Itoa(h.Port)
	}
	b.WriteString(addr)
	return b.String()
}

func (h Host) clone() Host {
	h.Groups = slices.Clone(h.Groups)
	h.Vars = maps.Clone(h.Vars)
	return h
}

// Inventory is a parsed, immutable set of hosts and groups.
type Inventory struct {
	hosts  []Host              // in order of first appearance
	byName map[string]int      // host name → index
	groups map[string][]string // group → host names (direct and through children), inventory order
}

// Hosts returns every host in order of first appearance.
func (inv *Inventory) Hosts() []Host {
	out := make([]Host, len(inv.hosts))
	for i, h := range inv.hosts {
		out[i] = h.clone()
	}
	return out
}

// Groups returns the names of all groups, sorted, including "all".
func (inv *Inventory) Groups() []string {
	return slices.Sorted(maps.Keys(inv.groups))
}

// Host returns the host with that inventory name.
func (inv *Inventory) Host(name string) (Host, bool) {
	i, ok := inv.byName[name]
	if !ok {
		return Host{}, false
	}
	return inv.hosts[i].clone(), true
}

// Select returns the hosts named by the patterns, in inventory order and
// without duplicates. A pattern is a group name (every host in the group and
// its child groups; "all" is every host) or a host name; a pattern with a
// leading "!" removes what it names from the result. With no patterns it
// returns every host. A name that is both a group and a host selects both.
// A pattern that names nothing is an error wrapping
// ErrNoMatch.
func (inv *Inventory) Select(patterns ...string) ([]Host, error) {
	if len(patterns) == 0 {
		return inv.Hosts(), nil
	}
	in := map[string]bool{}
	out := map[string]bool{}
	onlyExclusions := true
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		name := strings.TrimPrefix(p, "!")
		members, isGroup := inv.groups[name]
		names := members
		_, isHost := inv.byName[name]
		if isHost {
			// A name that is both a group and a host means both.
			names = append(slices.Clone(members), name)
		}
		if !isGroup && !isHost {
			return nil, fmt.Errorf("select %q: %w", p, ErrNoMatch)
		}
		set := in
		if neg {
			set = out
		} else {
			onlyExclusions = false
		}
		for _, n := range names {
			set[n] = true
		}
	}
	if onlyExclusions {
		for _, h := range inv.hosts {
			in[h.Name] = true
		}
	}
	var hosts []Host
	for _, h := range inv.hosts {
		if in[h.Name] && !out[h.Name] {
			hosts = append(hosts, h.clone())
		}
	}
	return hosts, nil
}

// Load reads an inventory file: YAML when its name ends in .yaml or .yml,
// Ansible INI otherwise.
func Load(path string) (*Inventory, error) {
	data, err := readfile.Read(path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("read inventory: %w", err)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		return ParseYAML(path, data)
	default:
		return ParseINI(path, data)
	}
}

// builder accumulates hosts and groups while parsing.
type builder struct {
	file     string
	order    []string
	hostVars map[string]map[string]string
	hostLine map[string]int
	direct   map[string][]string // group → hosts listed directly
	children map[string][]string // group → child groups
	gvars    map[string]map[string]string
	// childLine is the line where a group was first named as a child
	// (INI only), for cycle errors.
	childLine map[string]int
	member    map[[2]string]bool // {group, host} listed directly
	entries   int                // host entries added, for MaxHosts
}

func newBuilder(file string) *builder {
	return &builder{
		file:      file,
		hostVars:  map[string]map[string]string{},
		hostLine:  map[string]int{},
		direct:    map[string][]string{"all": nil, "ungrouped": nil},
		children:  map[string][]string{},
		gvars:     map[string]map[string]string{},
		childLine: map[string]int{},
		member:    map[[2]string]bool{},
	}
}

func (b *builder) errf(line int, sentinel error, format string, args ...any) error {
	return &ParseError{File: b.file, Line: line, Err: fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))}
}

func (b *builder) addGroup(g string) {
	if _, ok := b.direct[g]; !ok {
		b.direct[g] = nil
	}
}

func (b *builder) addHost(name, group string, vars map[string]string, line int) {
	b.entries++
	if _, ok := b.hostVars[name]; !ok {
		b.order = append(b.order, name)
		b.hostVars[name] = map[string]string{}
		b.hostLine[name] = line
	}
	maps.Copy(b.hostVars[name], vars)
	b.addGroup(group)
	key := [2]string{group, name}
	if !b.member[key] {
		b.member[key] = true
		b.direct[group] = append(b.direct[group], name)
	}
}

// build resolves groups, variable precedence and connection fields.
func (b *builder) build() (*Inventory, error) {
	// Every group without a parent is a child of "all"; a host in no
	// group but "all" is in "ungrouped".
	hasParent := map[string]bool{}
	for _, kids := range b.children {
		for _, k := range kids {
			hasParent[k] = true
		}
	}
	// Depth and cycle detection.
	depth := map[string]int{"all": 0}
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(g string, d int) error
	visit = func(g string, d int) error {
		if state[g] == 1 {
			return b.errf(b.childLine[g], ErrCycle, "group %q is its own descendant", g)
		}
		if d > depth[g] {
			depth[g] = d
		} else if state[g] == 2 {
			return nil
		}
		state[g] = 1
		for _, k := range b.children[g] {
			if err := visit(k, d+1); err != nil {
				return err
			}
		}
		state[g] = 2
		return nil
	}
	groups := slices.Sorted(maps.Keys(b.direct))
	for _, g := range groups {
		if g != "all" && !hasParent[g] {
			if err := visit(g, 1); err != nil {
				return nil, err
			}
		}
	}
	for _, g := range groups {
		if state[g] == 0 && g != "all" {
			// Only reachable through a cycle.
			if err := visit(g, 1); err != nil {
				return nil, err
			}
		}
	}
	inGroup := map[string]bool{}
	for g, hs := range b.direct {
		if g == "all" || g == "ungrouped" {
			continue
		}
		for _, h := range hs {
			inGroup[h] = true
		}
	}
	// As in Ansible, "ungrouped" holds exactly the hosts in no other group.
	b.direct["ungrouped"] = nil
	for _, h := range b.order {
		if !inGroup[h] {
			b.direct["ungrouped"] = append(b.direct["ungrouped"], h)
		}
	}
	// Members through children.
	memo := map[string]map[string]bool{}
	var members func(g string) map[string]bool
	members = func(g string) map[string]bool {
		if m, ok := memo[g]; ok {
			return m
		}
		m := map[string]bool{}
		memo[g] = m
		for _, h := range b.direct[g] {
			m[h] = true
		}
		for _, k := range b.children[g] {
			maps.Copy(m, members(k))
		}
		return m
	}
	inv := &Inventory{byName: map[string]int{}, groups: map[string][]string{}}
	hostGroups := map[string][]string{}
	for _, g := range groups {
		var m map[string]bool
		if g == "all" {
			m = map[string]bool{}
			for _, h := range b.order {
				m[h] = true
			}
		} else {
			m = members(g)
		}
		list := []string{}
		for _, h := range b.order {
			if m[h] {
				list = append(list, h)
				if g != "all" {
					hostGroups[h] = append(hostGroups[h], g)
				}
			}
		}
		inv.groups[g] = list
	}
	for _, name := range b.order {
		gs := hostGroups[name]
		ordered := slices.Clone(gs)
		slices.SortStableFunc(ordered, func(x, y string) int {
			if depth[x] != depth[y] {
				return depth[x] - depth[y]
			}
			return strings.Compare(x, y)
		})
		layers := []map[string]string{b.gvars["all"]}
		for _, g := range ordered {
			layers = append(layers, b.gvars[g])
		}
		layers = append(layers, b.hostVars[name])
		vars := map[string]string{}
		for _, l := range layers {
			maps.Copy(vars, l)
		}
		h := Host{Name: name, Address: name, Groups: gs, Vars: vars}
		for _, l := range layers {
			if err := b.connection(&h, l); err != nil {
				return nil, err
			}
		}
		if len(h.Vars) == 0 {
			h.Vars = nil
		}
		inv.byName[name] = len(inv.hosts)
		inv.hosts = append(inv.hosts, h)
	}
	return inv, nil
}

// connection sets the connection fields from one layer of Ansible's
// variables; layers are applied from the lowest precedence to the highest,
// so an alias (ansible_ssh_port) in a higher layer beats the main name
// (ansible_port) in a lower one.
func (b *builder) connection(h *Host, layer map[string]string) error {
	pick := func(keys ...string) (string, bool) {
		for _, k := range keys {
			if v, ok := layer[k]; ok {
				return v, true
			}
		}
		return "", false
	}
	if v, ok := pick("ansible_host", "ansible_ssh_host"); ok && v != "" {
		h.Address = v
	}
	if v, ok := pick("ansible_port", "ansible_ssh_port"); ok {
		p, err := parsePort(v)
		if err != nil {
			return b.errf(b.hostLine[h.Name], ErrPort, "host %q: ansible_port %q: %v", h.Name, v, err)
		}
		h.Port = p
	}
	if v, ok := pick("ansible_user", "ansible_ssh_user"); ok {
		h.User = v
	}
	if v, ok := pick("ansible_ssh_private_key_file", "ansible_private_key_file"); ok {
		h.Identity = v
	}
	if v, ok := pick("ansible_become"); ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "yes", "1", "on":
			h.Become = true
		case "false", "no", "0", "off", "":
			h.Become = false
		default:
			return b.errf(b.hostLine[h.Name], ErrVar, "host %q: ansible_become %q is not a boolean (true or false)", h.Name, v)
		}
	}
	return nil
}

func parsePort(s string) (int, error) {
	p, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, errors.New("not a number")
	}
	if p < 1 || p > 65535 {
		return 0, errors.New("out of range 1-65535")
	}
	return p, nil
}
