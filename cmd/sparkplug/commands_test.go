package main

import (
	"bytes"
	"strings"
	"testing"
)

// Every command answers --help on stdout, with its flags, and succeeds.
func TestEveryCommandHasHelp(t *testing.T) {
	var top bytes.Buffer
	if err := run([]string{"--help"}, &top, &bytes.Buffer{}); err != nil {
		t.Fatalf("sparkplug --help: %v", err)
	}
	for _, c := range commands() {
		if !strings.Contains(top.String(), c.name) {
			t.Errorf("sparkplug --help does not list %s", c.name)
		}
		if c.name == "version" {
			continue
		}
		var out bytes.Buffer
		if err := run([]string{c.name, "--help"}, &out, &bytes.Buffer{}); err != nil {
			t.Errorf("sparkplug %s --help: %v", c.name, err)
		}
		if !strings.Contains(out.String(), "Usage: sparkplug "+c.name) || !strings.Contains(out.String(), "--") {
			t.Errorf("sparkplug %s --help prints no usage and flags:\n%s", c.name, out.String())
		}
	}
}

func TestServeHelpListsItsFlags(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"serve", "--help"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--addr", "--token-file", "--kubeconfig", "--requeue-pending", "--requeue-running", "--not-found-grace", "--metrics-addr"} {
		if !strings.Contains(out.String(), flag) {
			t.Errorf("serve --help lacks %s", flag)
		}
	}
}

func TestServeRejectsBadOptionsBeforeListening(t *testing.T) {
	for _, args := range [][]string{
		{"--token-file", ""},
		{"--requeue-pending", "-1s"},
		{"--log-format", "xml"},
	} {
		err := run(append([]string{"serve"}, args...), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil {
			t.Errorf("serve %v: no error", args)
		}
	}
}

func TestUnknownCommand(t *testing.T) {
	err := run([]string{"launch"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `unknown command "launch"`) {
		t.Fatalf("err = %v", err)
	}
}
