package submit

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Redacted replaces a secret value in a logged command line.
const Redacted = "<redacted>"

// Redact returns a copy of args to log: the value of every --conf whose
// key is Sensitive is Redacted, and so is the password of any URL
// (https://user:pass@host/app.jar). args itself is left as it is.
func Redact(args []string) []string {
	out := slices.Clone(args)
	for i := range out {
		if i > 0 && out[i-1] == "--conf" {
			if k, _, ok := strings.Cut(out[i], "="); ok && Sensitive(k) {
				out[i] = k + "=" + Redacted
				continue
			}
		}
		out[i] = redactURLs(out[i])
	}
	return out
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
		if strings.HasSuffix(w, "key") {
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
