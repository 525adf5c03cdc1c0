// Package safety is Nightshift's security boundary: it decides, before a
// command runs as root on a host, whether it may run. (Work in progress:
// the full contract is written with the implementation.)
package safety
