package cli

import "testing"

func TestSuggest(t *testing.T) {
	cmds := []string{"serve", "render", "convert", "schedule", "completion", "version"}
	tests := []struct{ word, want string }{
		{"rendr", "render"},
		{"redner", "render"},
		{"convet", "convert"},
		{"sched", "schedule"},
		{"compl", "completion"},
		{"verison", "version"},
		{"serv", "serve"},
		{"launch", ""},
		{"x", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Suggest(tt.word, cmds); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
	flags := []string{"file", "workflow", "namespace", "uid", "node", "attempt", "parameter", "templates-dir", "launcher", "spark-home"}
	for word, want := range map[string]string{"flie": "file", "namespce": "namespace", "paramter": "parameter", "templates": "templates-dir", "sparkhome": "spark-home", "output": ""} {
		if got := Suggest(word, flags); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", word, got, want)
		}
	}
}
