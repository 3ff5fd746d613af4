package redact

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Redacted replaces a secret value in a logged command line.
const Redacted = "<redacted>"

// Args returns a copy of a command line to show: the value of every
// --conf (-c, --conf=) whose key is Sensitive is Redacted, so is the
// argument after an option whose name is Sensitive (--password secret,
// the application's arguments included), and every other argument goes
// through Value. args itself is left as it is.
func Args(args []string) []string {
	out := slices.Clone(args)
	for i, a := range args {
		prev := ""
		if i > 0 {
			prev = args[i-1]
		}
		switch {
		case prev == "--conf" || prev == "-c":
			if k, _, ok := strings.Cut(a, "="); ok && Sensitive(k) {
				out[i] = k + "=" + Redacted
				continue
			}
		case strings.HasPrefix(a, "--conf="):
			if k, _, ok := strings.Cut(a[len("--conf="):], "="); ok && Sensitive(k) {
				out[i] = "--conf=" + k + "=" + Redacted
				continue
			}
		case isOption(prev) && !strings.Contains(prev, "=") && Sensitive(strings.TrimLeft(prev, "-")) && !strings.HasPrefix(a, "--"):
			out[i] = Redacted
			continue
		}
		out[i] = Value(a)
	}
	return out
}

// isOption says whether an argument is an option's name (-p, --password).
func isOption(a string) bool {
	return len(a) > 1 && a[0] == '-' && (a[1] == '-' || isLetter(a[1]))
}

// Env returns a copy of env (NAME=value entries) to show: the value of
// every variable whose name is Sensitive is Redacted, every other value
// goes through Value.
func Env(env []string) []string {
	out := make([]string, len(env))
	for i, e := range env {
		name, value, ok := strings.Cut(e, "=")
		if !ok {
			out[i] = e
			continue
		}
		out[i] = name + "=" + EnvValue(name, value)
	}
	return out
}

// EnvValue is the value of variable name to show: Redacted when name is
// Sensitive, else through Value. Annotations go the same way.
func EnvValue(name, value string) string {
	if Sensitive(name) {
		return Redacted
	}
	return Value(value)
}

// Value hides the secrets a value or a free text (a log line, a node's
// message, an Event) carries whatever its key, by their shape:
//
//   - the password of a URL (https://user:pass@host/app.jar,
//     jdbc:mysql://u:pw@h/db) or of a scheme-less DSN
//     (user:pw@tcp(db:3306)/x), and of an Oracle thin URL
//     (jdbc:oracle:thin:scott/tiger@h:1521/db);
//   - a bearer or basic token (AUTH=Bearer abc);
//   - the value of name=value whose name is Sensitive: a -D property
//     (-Djavax.net.ssl.trustStorePassword=changeit), an option
//     (--db-password=x), a query parameter (?user=u&password=x), a
//     variable (PGPASSWORD=x); the value ends at white space, & or ;
//     unless it is quoted ("..." or '...', also \"...\"), and = may be
//     escaped (\=) as spark.properties writes it;
//   - the value after an option whose name is Sensitive (--password x);
//   - a JSON member whose name is Sensitive ("token": "x").
//
// Value is idempotent, and cheap on text with none of the characters
// these shapes need (=, @, ", a dash, "bearer", "basic").
func Value(s string) string {
	if strings.IndexByte(s, '@') >= 0 {
		s = redactURLs(s)
		s = redactDSNs(s)
		s = redactGroup(s, oracleThin, 2)
	}
	if hasFold(s, "bearer") || hasFold(s, "basic") {
		s = authToken.ReplaceAllString(s, "${1} "+Redacted)
	}
	if strings.IndexByte(s, '=') >= 0 {
		s = redactAssignments(s)
	}
	if strings.Contains(s, `":`) || strings.Contains(s, `" :`) {
		s = redactJSON(s)
	}
	if strings.HasPrefix(s, "-") || strings.Contains(s, " -") || strings.Contains(s, "\t-") {
		s = redactOptions(s)
	}
	return s
}

var (
	authToken = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+`)
	// dsnUser is user:password@ (with the colon escaped, \:, in a
	// properties file).
	dsnUser = regexp.MustCompile(`([A-Za-z0-9._~%+-]+)\\?:([^\s@/:\\]+)@`)
	// oracleThin is Oracle's user/password@ after jdbc:oracle:thin:.
	oracleThin = regexp.MustCompile(`(?i)(oracle:[a-z0-9]+:[^\s/@:]+/)([^\s@]+)@`)
	// jsonMember is "name": "value".
	jsonMember = regexp.MustCompile(`"([A-Za-z0-9_.-]+)"\s*:\s*"((?:[^"\\]|\\.)*)"`)
	// option is an option and its value after white space, the value
	// not itself an option.
	option = regexp.MustCompile(`(?:^|\s)--?([A-Za-z][A-Za-z0-9_.-]*)[ \t]+([^\s-]\S*)`)
)

// redactDSNs hides the password of user:password@host, but for an image
// pinned by digest (spark:3.5.3@sha256:...) and what is already hidden.
func redactDSNs(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range dsnUser.FindAllStringSubmatchIndex(s, -1) {
		end := m[1]
		if strings.HasPrefix(s[end:], "sha256:") || s[m[4]:m[5]] == Redacted {
			continue
		}
		b.WriteString(s[last:m[4]])
		b.WriteString(Redacted)
		last = m[5]
	}
	b.WriteString(s[last:])
	return b.String()
}

// redactGroup hides submatch group of every match of re in s.
func redactGroup(s string, re *regexp.Regexp, group int) string {
	return redactMatches(s, re, func(m []int) (int, int, bool) {
		return m[2*group], m[2*group+1], true
	})
}

// redactMatches replaces, for every match of re in s, the span pick
// chooses (start, end; false: none) by Redacted, in the quotes the span
// has.
func redactMatches(s string, re *regexp.Regexp, pick func(m []int) (int, int, bool)) string {
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
		start, end, ok := pick(m)
		if !ok || start < last || strings.Trim(s[start:end], `\"'`) == Redacted || start == end {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(quoted(s[start:end], Redacted))
		last = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// redactJSON hides the value of a JSON member whose name is Sensitive.
func redactJSON(s string) string {
	return redactMatches(s, jsonMember, func(m []int) (int, int, bool) {
		return m[4], m[5], Sensitive(s[m[2]:m[3]])
	})
}

// redactOptions hides the value after an option whose name is Sensitive,
// the whole of it when it is quoted.
func redactOptions(s string) string {
	return redactMatches(s, option, func(m []int) (int, int, bool) {
		if !Sensitive(s[m[2]:m[3]]) {
			return 0, 0, false
		}
		return m[4], valueEnd(s, m[4], true), true
	})
}

// redactAssignments hides the value of every name=value (or name\=value)
// whose name is Sensitive; see Value.
func redactAssignments(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			continue
		}
		end := i
		if end > last && s[end-1] == '\\' {
			end--
		}
		start := end
		for start > last && isKeyByte(s[start-1]) {
			start--
		}
		name := s[start:end]
		if strings.HasPrefix(name, "-D") {
			name = name[2:]
		}
		if !Sensitive(strings.TrimLeft(name, "-")) {
			continue
		}
		vEnd := valueEnd(s, i+1, false)
		v := strings.Trim(s[i+1:vEnd], `\"'`)
		if v == "" || v == Redacted {
			i = vEnd - 1
			continue
		}
		b.WriteString(s[last : i+1])
		b.WriteString(quoted(s[i+1:vEnd], Redacted))
		last = vEnd
		i = vEnd - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// valueEnd is where the value that starts at s[start] ends: after its
// closing quote when it is quoted ("...", '...', \"...\"; the end of s
// when the quote is not closed), else at white space or, in a name=value
// (not option), at & or ;.
func valueEnd(s string, start int, option bool) int {
	rest := s[start:]
	for _, q := range []string{`\"`, `\'`, `"`, `'`} {
		if strings.HasPrefix(rest, q) {
			for j := len(q); j < len(rest); j++ {
				if strings.HasPrefix(rest[j:], q) && (len(q) == 2 || rest[j-1] != '\\') {
					return start + j + len(q)
				}
			}
			return len(s)
		}
	}
	for j := 0; j < len(rest); j++ {
		switch c := rest[j]; {
		case c == ' ', c == '\t', c == '\n', c == '\r', c == '\f', c == '"', c == '\'':
			return start + j
		case !option && (c == '&' || c == ';'):
			return start + j
		}
	}
	return len(s)
}

// quoted is Redacted in the quotes v has.
func quoted(v, with string) string {
	for _, q := range []string{`\"`, `\'`, `"`, `'`} {
		if strings.HasPrefix(v, q) {
			if strings.HasSuffix(v, q) && len(v) >= 2*len(q) {
				return q + with + q
			}
			return q + with
		}
	}
	return with
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isKeyByte(c byte) bool {
	return isLetter(c) || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// hasFold says whether s holds word, in any case; word is lower-case.
func hasFold(s, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		if s[i]|0x20 == word[0] && strings.EqualFold(s[i:i+len(word)], word) {
			return true
		}
	}
	return false
}

// Sensitive says whether a conf key's value must not be logged. The rules,
// on the key's words (split at anything but letters and digits, and at
// camelCase humps; spark.hadoop.fs.s3a.secret.key is spark, hadoop, fs,
// s3a, secret, key; githubPat is github, pat):
//
//   - spark.kubernetes.<role>.secretKeyRef.* is sensitive, whatever else:
//     its value names a Secret and a key, no secret, but it is hidden on
//     the safe side as every key whose words say secret (the pod's
//     secretKeyRef shows the same names);
//   - a key whose last word is file or path, or ends in file (keyfile;
//     not profile), names a file, not the secret in it
//     (spark.kubernetes.authenticate.submission.oauthTokenFile), and is
//     shown;
//   - otherwise a key is sensitive when a word contains password, passwd,
//     passphrase, secret, token, credential or authorization, or a word
//     is, or ends in, key (accessKey, APIKEY, AWS_SECRET_ACCESS_KEY), pass
//     (keytool's storepass) or pwd, or a word is one of the short ones
//     (wholeWords: cred, creds, auth, pat, private, sas, sig).
//
// The short words match whole words only, never inside one: GITHUB_PAT,
// my.pat and --creds are sensitive; path, patch, authenticate (the
// spark.kubernetes.authenticate.* account names) and incredible are not.
// So keytab is shown (spark.kerberos.keytab is the path of a file the
// submitting side reads), and a key that names a secret without a telling
// word is not caught: keep secrets in Kubernetes Secrets (driver.secrets,
// envSecretKeyRefs), never in sparkConf.
func Sensitive(key string) bool {
	if !mayBeSensitive(key) {
		return false
	}
	if secretKeyRef.MatchString(key) {
		return true
	}
	words := keyWords(key)
	if len(words) == 0 {
		return false
	}
	if last := words[len(words)-1]; last == "path" || strings.HasSuffix(last, "file") && last != "profile" {
		return false
	}
	for _, w := range words {
		if strings.HasSuffix(w, "key") || strings.HasSuffix(w, "pass") || strings.HasSuffix(w, "pwd") || slices.Contains(wholeWords, w) {
			return true
		}
		for _, s := range []string{"password", "passwd", "passphrase", "secret", "token", "credential", "authorization"} {
			if strings.Contains(w, s) {
				return true
			}
		}
	}
	return false
}

// wholeWords are the words that make a key sensitive only as a whole
// word: inside another they mean something else (path, sigma,
// authenticate, incredible, privateer).
var wholeWords = []string{
	"cred", "creds", // --creds x, -Dcreds=x
	"auth",       // a filter's param.auth, AUTH=Basic ...
	"pat",        // a personal access token: GITHUB_PAT
	"private",    // SSH_PRIVATE, a private key's text
	"sas", "sig", // Azure's shared access signatures
}

// telling are the pieces one of which every sensitive key holds, in any
// case: mayBeSensitive spares most keys the words.
var telling = []string{"key", "pass", "pwd", "sas", "sig", "secret", "token", "cred", "auth", "pat", "private"}

func mayBeSensitive(key string) bool {
	for i := 0; i < len(key); i++ {
		switch key[i] | 0x20 {
		case 'k', 'p', 's', 't', 'c', 'a':
			for _, t := range telling {
				if len(key)-i >= len(t) && strings.EqualFold(key[i:i+len(t)], t) {
					return true
				}
			}
		}
	}
	return false
}

var secretKeyRef = regexp.MustCompile(`^spark\.kubernetes\.[^.]+\.secretKeyRef\.`)

// keyWords splits a conf key into lower-case words, at anything but
// letters and digits, and where a lower-case letter or digit is followed
// by an upper-case one.
func keyWords(key string) []string {
	var words []string
	var w []rune
	flush := func() {
		if len(w) > 0 {
			words = append(words, strings.ToLower(string(w)))
			w = w[:0]
		}
	}
	var prev rune
	for _, r := range key {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			flush()
			w = append(w, r)
		default:
			w = append(w, r)
		}
		prev = r
	}
	flush()
	return words
}

var urlWithUser = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s/@]+@[^\s,]*`)

// redactURLs hides the passwords of the URLs in s.
func redactURLs(s string) string {
	return urlWithUser.ReplaceAllStringFunc(s, func(m string) string {
		u, err := url.Parse(m)
		if err != nil || u.User == nil {
			return m
		}
		if _, ok := u.User.Password(); !ok {
			return m
		}
		return strings.Replace(u.Redacted(), ":xxxxx@", ":"+Redacted+"@", 1)
	})
}
