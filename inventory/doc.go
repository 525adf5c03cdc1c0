// Package inventory reads the hosts a batch run works on, from a simple
// YAML list or from Ansible's INI inventory format, and selects hosts by
// group or name.
//
// # YAML format
//
// A YAML inventory is a list of hosts, either at the top level or under a
// "hosts" key. An entry is a host name or a mapping:
//
//   - web01.example.com            # just a name: port 22, the caller's user and keys
//   - host: db01.example.com       # required: name or address
//     address: 10.0.0.5            # optional: where to connect (default: host)
//     port: 2222                   # optional: 1–65535 (0 or absent: the caller's default)
//     user: admin                  # optional
//     identity: ~/.ssh/id_ed25519  # optional: private key file
//     groups: [db, prod]           # optional: groups for selection
//     vars: {role: primary}        # optional: string values
//
// Unknown keys are errors, so a typo is not silently ignored.
//
// # Ansible INI format
//
// ParseINI reads what Ansible's ini inventory plugin reads: host lines
// before any section (group "ungrouped"), [group] sections, [group:children]
// and [group:vars] sections, key=value host variables on host lines (quoted
// with shell rules; "#" starts a comment), comments starting with "#" or
// ";", host:port, and ranges such as web[01:20].example.com, db-[a:c] and
// web[0:10:2] (zero padding is kept; several ranges in one name multiply,
// up to MaxExpansion hosts per line). The connection variables ansible_host
// (or ansible_ssh_host), ansible_port (ansible_ssh_port), ansible_user
// (ansible_ssh_user) and ansible_ssh_private_key_file (or
// ansible_private_key_file) and ansible_become (run the commands through
// sudo: a non-root login) fill Host's fields; every variable stays in
// Host.Vars. Variables follow Ansible's precedence: [all:vars], then group
// variables from the shallowest to the deepest group (ties by name), then
// host variables. As in Ansible, a group named by [group:vars] or listed
// as a child must be declared by a [group] or [group:children] section
// somewhere in the file. A value in a vars section is the rest of the line after
// "=", trimmed, with one pair of surrounding quotes removed. Not supported:
// bracketed IPv6 addresses (use ansible_host) and Ansible's YAML inventory.
//
// # Errors
//
// Every parse error is a *ParseError naming the file, the line (1-based)
// and the problem, and wraps ErrSyntax, ErrRange, ErrPort, ErrCycle,
// ErrUnknownKey or ErrDuplicateHost (a YAML list naming one host twice,
// refused with both lines rather than merged into one entry). Select returns an error wrapping ErrNoMatch naming a
// pattern that matched nothing. Parsers never panic on any input.
//
// # Concurrency
//
// An *Inventory is immutable once parsed: its methods may be called from
// any number of goroutines. Hosts returned are copies; changing them does
// not change the inventory.
package inventory
