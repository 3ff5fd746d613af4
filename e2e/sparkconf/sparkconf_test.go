package sparkconf

import (
	"maps"
	"testing"
)

func TestLoad(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       map[string]string
	}{
		{"separators", "a=1\nb:2\nc 3\nd = 4\ne\t:\t5\nf  =  \ng\n", map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "", "g": ""}},
		{"space separator then equals", "a   =b\n", map[string]string{"a": "b"}},
		{"only the first separator", "a=b=c:d\n", map[string]string{"a": "b=c:d"}},
		{"comments and blank lines", "# c\n! c\n   # c\n\n   \na=1\n", map[string]string{"a": "1"}},
		{"escaped separators in the key", `a\=b\:c\ d=e` + "\n", map[string]string{"a=b:c d": "e"}},
		{"escapes", `a=x\ty\nz\\w\#\!\q` + "\n", map[string]string{"a": "x\ty\nz\\w#!q"}},
		{"unicode escapes and a surrogate pair", `a=caf\u00e9 \ud83d\ude00` + "\n", map[string]string{"a": "café 😀"}},
		{"raw UTF-8", "a=café\n", map[string]string{"a": "café"}},
		{"continuation", "a=one \\\n    two\\\n three\nb=2\n", map[string]string{"a": "one twothree", "b": "2"}},
		{"an even number of backslashes does not continue", "a=x\\\\\nb=2\n", map[string]string{"a": `x\`, "b": "2"}},
		{"a continued line is not a comment", "a=x\\\n#y\n", map[string]string{"a": "x#y"}},
		{"CR and CRLF", "a=1\r\nb=2\rc=3", map[string]string{"a": "1", "b": "2", "c": "3"}},
		{"leading space of a value is dropped, trailing kept", "a=  x  \n", map[string]string{"a": "x  "}},
		{"an escaped leading space is kept", `a=\ x` + "\n", map[string]string{"a": " x"}},
		{"later wins", "a=1\na=2\n", map[string]string{"a": "2"}},
		{"what sparkplug writes", "#comment\nspark.master=k8s\\://https\\://x\\:443\nspark.kubernetes.executor.label.sparkplug.io/node=abc\n",
			map[string]string{"spark.master": "k8s://https://x:443", "spark.kubernetes.executor.label.sparkplug.io/node": "abc"}},
		{"backslash at the end of the file", "a=x\\", map[string]string{"a": "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Load(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("Load(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestLoadRefusesMalformedUnicodeEscapes(t *testing.T) {
	for _, text := range []string{`a=\u12`, `a=\u12g4`, `\uzzzz=1`} {
		if _, err := Load(text); err == nil {
			t.Errorf("Load(%q): no error", text)
		}
	}
}

func TestExecutorCount(t *testing.T) {
	for _, tc := range []struct {
		conf    map[string]string
		want    int
		wantErr bool
	}{
		{map[string]string{}, 2, false},
		{map[string]string{"spark.executor.instances": "5"}, 5, false},
		{map[string]string{"spark.executor.instances": "0"}, 0, false},
		{map[string]string{"spark.dynamicAllocation.enabled": "true", "spark.dynamicAllocation.minExecutors": "3", "spark.dynamicAllocation.initialExecutors": "1"}, 3, false},
		{map[string]string{"spark.dynamicAllocation.enabled": "true"}, 0, false},
		{map[string]string{"spark.executor.instances": "two"}, 0, true},
	} {
		got, err := ExecutorCount(tc.conf)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("ExecutorCount(%v) = %d, %v; want %d, error %v", tc.conf, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestExecutorMemoryMiB(t *testing.T) {
	for _, tc := range []struct {
		conf    map[string]string
		want    int64
		wantErr bool
	}{
		{map[string]string{}, 1024 + 384, false},
		{map[string]string{"spark.executor.memory": "8g"}, 8192 + 819, false},
		{map[string]string{"spark.executor.memory": "512"}, 512 + 384, false},
		{map[string]string{"spark.executor.memory": "64m", "spark.executor.memoryOverhead": "16m"}, 80, false},
		{map[string]string{"spark.executor.memory": "2048k", "spark.executor.memoryOverhead": "0"}, 2, false},
		{map[string]string{"spark.executor.memory": "4g", "spark.kubernetes.memoryOverheadFactor": "0.5"}, 4096 + 2048, false},
		{map[string]string{"spark.executor.memory": "4g", "spark.kubernetes.resource.type": "python", "spark.executor.pyspark.memory": "1g"}, 4096 + 1638 + 1024, false},
		{map[string]string{"spark.executor.memory": "4x"}, 0, true},
		{map[string]string{"spark.kubernetes.memoryOverheadFactor": "-1"}, 0, true},
	} {
		got, err := ExecutorMemoryMiB(tc.conf)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("ExecutorMemoryMiB(%v) = %d, %v; want %d, error %v", tc.conf, got, err, tc.want, tc.wantErr)
		}
	}
}
