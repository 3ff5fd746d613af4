package get

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/duration"
)

// TableMessage is how much of a message the default table shows; -o wide
// and the structured outputs show it whole.
const TableMessage = 50

// Table prints steps as kubectl prints a table: a header, then a row per
// step, columns three spaces apart. The widths are set by the first
// rows printed and kept afterwards, so the rows --watch adds line up
// with them (a longer value pushes its row's later columns out, as in
// kubectl).
type Table struct {
	// Wide adds the namespace, the driver's status, the attempt and the
	// start and end times, and shows messages whole.
	Wide bool
	// AllNamespaces puts the namespace first (it always is when Wide).
	AllNamespaces bool

	widths []int
}

func (t *Table) columns() []string {
	cols := []string{"WORKFLOW", "NODE", "PHASE", "MESSAGE", "APPLICATION ID", "DRIVER"}
	if t.Wide {
		cols = append(cols, "DRIVER STATUS", "ATTEMPT", "STARTED", "FINISHED")
	}
	cols = append(cols, "AGE")
	if t.Wide || t.AllNamespaces {
		cols = append([]string{"NAMESPACE"}, cols...)
	}
	return cols
}

func (t *Table) cells(s Step, now time.Time) []string {
	msg := s.Message
	if !t.Wide {
		msg = truncate(msg, TableMessage)
	}
	c := []string{s.Workflow, s.Node, s.Phase, dash(msg), dash(s.ApplicationID), dash(s.DriverPod)}
	if t.Wide {
		attempt := ""
		if s.Attempt > 0 {
			attempt = strconv.Itoa(s.Attempt)
		}
		c = append(c, dash(s.DriverStatus), dash(attempt), dash(s.StartedAt), dash(s.FinishedAt))
	}
	c = append(c, age(s, now))
	if t.Wide || t.AllNamespaces {
		c = append([]string{s.Namespace}, c...)
	}
	return c
}

// Print is the header and the rows of steps at now when nothing was
// printed yet, else the rows alone, in the widths first printed.
func (t *Table) Print(steps []Step, now time.Time) string {
	rows := make([][]string, 0, len(steps)+1)
	if t.widths == nil {
		rows = append(rows, t.columns())
	}
	for _, s := range steps {
		rows = append(rows, t.cells(s, now))
	}
	if t.widths == nil {
		t.widths = make([]int, len(t.columns()))
		for _, r := range rows {
			for i, c := range r {
				t.widths[i] = max(t.widths[i], utf8.RuneCountInString(c))
			}
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", max(t.widths[i]-utf8.RuneCountInString(c), 0)+3))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// age is how long ago the step started (the Workflow was created, when it
// has not), as kubectl's AGE says it.
func age(s Step, now time.Time) string {
	from := s.StartedAt
	if from == "" {
		from = s.Created
	}
	t, err := time.Parse(time.RFC3339, from)
	if err != nil {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// truncate keeps the first n runes of s, ending it with "..." when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-3]) + "..."
}
