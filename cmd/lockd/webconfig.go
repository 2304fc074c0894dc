package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

// runWebConfig is "lockd metrics-web-config USER PASSWORD_FILE": it prints
// a web configuration file for metrics_web_config_file that asks for
// basic authentication as USER with the password on the first line of
// PASSWORD_FILE (stored as a bcrypt hash, the format exporter-toolkit
// reads). The docker stack makes its file with it at start-up, so that
// Prometheus scrapes with the password from a secret file and nobody has
// to run htpasswd.
func runWebConfig(args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 {
		fmt.Fprintln(stderr, "usage: lockd metrics-web-config USER PASSWORD_FILE")
		return 2
	}
	user := args[0]
	if user == "" || strings.ContainsAny(user, ":\n\"'") {
		fmt.Fprintf(stderr, "lockd: invalid user name %q\n", user)
		return 2
	}
	data, err := os.ReadFile(args[1])
	if err != nil {
		fmt.Fprintf(stderr, "lockd: could not read password from file \"%s\": %v\n", args[1], err)
		return 1
	}
	password, _, _ := strings.Cut(string(data), "\n")
	password = strings.TrimRight(password, "\r")
	if password == "" {
		fmt.Fprintf(stderr, "lockd: password file \"%s\" is empty\n", args[1])
		return 1
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		fmt.Fprintf(stderr, "lockd: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "# made by lockd metrics-web-config\nbasic_auth_users:\n  %s: '%s'\n", user, hash)
	return 0
}
