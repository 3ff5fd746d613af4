package redact

// Object hides, in place, the secrets a Kubernetes object decoded from
// JSON (maps, lists, strings) shows, wherever they are: the values of its
// containers' env whose name is Sensitive (Redacted; the others through
// Value), its containers' args and command (Args), the annotations and
// labels whose key is Sensitive (the others through Value), and every
// other string through Value. A field's own name does not make its value
// secret (secretName, key and token name Secrets, keys and files), only
// its shape does.
func Object(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			switch child := child.(type) {
			case string:
				v[k] = Value(child)
			case []any:
				switch k {
				case "env":
					redactEnvList(child)
				case "args", "command":
					redactArgList(child)
				default:
					Object(child)
				}
			case map[string]any:
				if k == "annotations" || k == "labels" {
					for name, value := range child {
						if s, ok := value.(string); ok {
							child[name] = EnvValue(name, s)
						}
					}
					continue
				}
				Object(child)
			}
		}
	case []any:
		for i, child := range v {
			if s, ok := child.(string); ok {
				v[i] = Value(s)
				continue
			}
			Object(child)
		}
	}
}

// redactEnvList redacts a container's env: [{name, value}, ...].
func redactEnvList(list []any) {
	for _, item := range list {
		e, ok := item.(map[string]any)
		if !ok {
			Object(item)
			continue
		}
		name, _ := e["name"].(string)
		for k, child := range e {
			if s, ok := child.(string); ok && k == "value" {
				e[k] = EnvValue(name, s)
			} else if k != "name" {
				Object(child)
			}
		}
	}
}

// redactArgList redacts a list of arguments as Args does; what is not a
// string goes through Object.
func redactArgList(list []any) {
	args := make([]string, len(list))
	for i, a := range list {
		if s, ok := a.(string); ok {
			args[i] = s
		}
	}
	for i, s := range Args(args) {
		if _, ok := list[i].(string); ok {
			list[i] = s
		} else {
			Object(list[i])
		}
	}
}
