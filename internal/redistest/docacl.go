package redistest

import (
	"os"
	"strings"
	"testing"
)

// DocACLUser returns the words of the line "ACL SETUSER <user> ..." that the
// documentation page at path shows, ">PASSWORD" in it set to password, so
// that a test runs the user as the page gives it.
func DocACLUser(t testing.TB, path, user, password string) []string {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(doc), "\n") {
		if w := strings.Fields(l); len(w) > 3 && w[0] == "ACL" && w[1] == "SETUSER" && w[2] == user {
			for i := range w {
				if w[i] == ">PASSWORD" {
					w[i] = ">" + password
				}
			}
			return w
		}
	}
	t.Fatalf("%s shows no ACL SETUSER %s line", path, user)
	return nil
}
