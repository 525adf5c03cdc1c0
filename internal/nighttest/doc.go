// Package nighttest is the simulated night that package batch's and
// package fleet's tests run: rules r000… of five kinds by index
// (RuleKind), simulated hosts h00… reached over real SSH
// (internal/simhost), and the vLLM simulator answering by Policy. Every
// remediation command is unique per rule and attempt ("set rK tryN", "set
// rK ok"), so the hosts' exec logs tell how often each recorded command
// really ran.
//
// It is for tests only: its functions take a testing.TB and fail the test
// on an error. Everything it starts is stopped by the test's cleanup. The
// built-in qwen3 model is loaded once per test binary (LoadModel).
package nighttest
