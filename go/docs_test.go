// SPDX-License-Identifier: MIT

// docs/GO.md shows the examples as they are in the example files, so
// what the page shows is what go vet and go test compile.

package tenure_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"tenure/internal/testserver"
)

func TestDocsShowTheExamplesAsTheyAre(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testserver.Src(), "docs", "GO.md"))
	if err != nil {
		t.Fatal(err)
	}
	var examples string
	for _, f := range []string{"example_test.go", "fence/example_test.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		examples += string(b)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	shown := 0
	for _, b := range blocks {
		if strings.HasPrefix(b[1], "// A ") { // an example, not the API summary
			shown++
			if !strings.Contains(examples, b[1]) {
				t.Errorf("docs/GO.md shows an example that is not in the example files:\n%s", b[1])
			}
		}
	}
	if shown < 2 {
		t.Fatalf("docs/GO.md shows %d examples, want the worker and the fence", shown)
	}
}
