package redact

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"
)

type stringer string

func (s stringer) String() string { return string(s) }

// Handler hides secrets in groups, Stringers and printed values too, and
// leaves what holds none, and the kinds that hold none, as they were.
func TestHandler(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(Handler(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})))
	log.WithGroup("g").With(slog.Group("inner", "url", "https://u:leak01@h/x")).Debug("m",
		"who", stringer("AUTH=Bearer leak02"),
		"conf", map[string]string{"k": "password=leak03"},
		"apiKey", stringer("leak04"),
		"n", 3, "took", time.Second, "ok", true,
		"pod", "pi-driver", "args", []string{"--class", "Main"})
	line := out.String()
	for _, secret := range []string{"leak01", "leak02", "leak03", "leak04"} {
		if strings.Contains(line, secret) {
			t.Errorf("log shows %s: %s", secret, line)
		}
	}
	var got struct {
		G struct {
			N    int      `json:"n"`
			Took int64    `json:"took"`
			OK   bool     `json:"ok"`
			Pod  string   `json:"pod"`
			Args []string `json:"args"`
		} `json:"g"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	if g := got.G; g.N != 3 || g.Took != int64(time.Second) || !g.OK || g.Pod != "pi-driver" || strings.Join(g.Args, " ") != "--class Main" {
		t.Errorf("harmless attributes changed: %+v in %s", got.G, line)
	}
	if Handler(Handler(slog.NewTextHandler(&out, nil))).(handler).next == nil {
		t.Error("Handler of a Handler lost its handler")
	}
}

// What Value costs on a line with nothing to hide and on spark-submit's
// whole output (64 KiB of log4j lines).
func BenchmarkValue(b *testing.B) {
	plain := "driver pod created by spark-submit node=w-1234 driver=pi-0123-driver took=1.2s"
	line := "25/01/31 12:00:00 INFO Client: --conf spark.executor.memory=4g -Dlog4j.level=INFO at https://h/x\n"
	output := strings.Repeat(line, 64<<10/len(line))
	b.Run("plain", func(b *testing.B) {
		for range b.N {
			Value(plain)
		}
	})
	b.Run("spark-submit output", func(b *testing.B) {
		b.SetBytes(int64(len(output)))
		for range b.N {
			Value(output)
		}
	})
}
