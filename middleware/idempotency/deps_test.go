package idempotency_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencySplit keeps gRPC users from compiling Echo and Echo users from
// compiling gRPC.
func TestDependencySplit(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs go list")
	}
	for pkg, banned := range map[string][]string{
		"github.com/scriptlock/scriptlock/middleware/idempotency": {"github.com/labstack/echo", "google.golang.org/grpc"},
		"github.com/scriptlock/scriptlock/middleware/grpclock":    {"github.com/labstack/echo"},
		"github.com/scriptlock/scriptlock/middleware/echolock":    {"google.golang.org/grpc", "google.golang.org/protobuf"},
	} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, b := range banned {
				if strings.HasPrefix(dep, b) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
