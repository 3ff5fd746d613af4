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
// --conf whose key is Sensitive is Redacted, and every other argument
// goes through Value. args itself is left as it is.
func Args(args []string) []string {
	out := slices.Clone(args)
	for i := range out {
		if i > 0 && out[i-1] == "--conf" {
			if k, _, ok := strings.Cut(out[i], "="); ok && Sensitive(k) {
				out[i] = k + "=" + Redacted
				continue
			}
		}
		out[i] = Value(out[i])
	}
	return out
}

// Env returns a copy of env (NAME=value entries) to show: the value of
// every variable whose name is Sensitive is Redacted, every other value
// goes through Value.
func Env(env []string) []string {
	out := make([]string, len(env))
	for i, e := range env {
		name, value, ok := strings.Cut(e, "=")
		switch {
		case !ok:
			out[i] = e
			continue
		case Sensitive(name):
			value = Redacted
		default:
			value = Value(value)
		}
		out[i] = name + "=" + value
	}
	return out
}

// Properties returns a Java properties text (spark.properties,
// spark-defaults.conf) to show: the value of every Sensitive key is
// Redacted, every other value goes through Value.
func Properties(text string) string {
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "!") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		if Sensitive(strings.TrimSpace(k)) {
			v = Redacted
		} else {
			v = Value(v)
		}
		lines[i] = k + "=" + v
	}
	return strings.Join(lines, "\n")
}

// Value hides the secrets a value carries whatever its key: the password
// of a URL (https://user:pass@host/app.jar) or of a scheme-less DSN
// (user:pw@tcp(db:3306)/x), a bearer or basic token (AUTH=Bearer abc), and
// the value of a -D property whose name is Sensitive
// (-Djavax.net.ssl.trustStorePassword=changeit).
func Value(s string) string {
	s = redactURLs(s)
	s = redactDSNs(s)
	s = authToken.ReplaceAllString(s, "${1} "+Redacted)
	return javaProperty.ReplaceAllStringFunc(s, func(m string) string {
		k, _, _ := strings.Cut(m[2:], "=")
		if Sensitive(k) {
			return "-D" + k + "=" + Redacted
		}
		return m
	})
}

var (
	authToken    = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+`)
	javaProperty = regexp.MustCompile(`-D[A-Za-z0-9._-]+=[^\s"']*`)
	// dsnUser is user:password@ (with the colon escaped, \:, in a
	// properties file).
	dsnUser = regexp.MustCompile(`([A-Za-z0-9._~%+-]+)\\?:([^\s@/:\\]+)@`)
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

// Sensitive says whether a conf key's value must not be logged. The rules,
// on the key's words (split at anything but letters and digits, and at
// camelCase humps; spark.hadoop.fs.s3a.secret.key is spark, hadoop, fs,
// s3a, secret, key):
//
//   - spark.kubernetes.<role>.secretKeyRef.* is sensitive, whatever else;
//   - a key whose last word is file or path names a file, not the secret
//     in it (spark.kubernetes.authenticate.submission.oauthTokenFile),
//     and is shown;
//   - otherwise a key is sensitive when a word contains password, passwd,
//     secret, token or credential, or a word is, or ends in, key
//     (accessKey, APIKEY, AWS_SECRET_ACCESS_KEY).
//
// So keytab is shown (spark.kerberos.keytab is the path of a file the
// submitting side reads), and a key that names a secret without a telling
// word is not caught: keep secrets in Kubernetes Secrets (driver.secrets,
// envSecretKeyRefs), never in sparkConf.
func Sensitive(key string) bool {
	if secretKeyRef.MatchString(key) {
		return true
	}
	words := keyWords(key)
	if len(words) == 0 {
		return false
	}
	if last := words[len(words)-1]; last == "file" || last == "path" {
		return false
	}
	for _, w := range words {
		if strings.HasSuffix(w, "key") || w == "pass" || w == "pwd" || w == "sas" {
			return true
		}
		for _, s := range []string{"password", "passwd", "secret", "token", "credential"} {
			if strings.Contains(w, s) {
				return true
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
