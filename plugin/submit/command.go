package submit

import (
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// Input is the submission of a run whose objects the native launcher
// built: its body s, its conf (objects.Properties) and its driver pod, on
// the API server and with the credentials of o's Client.
func (o *Options) Input(s *spec.SparkApplicationSpec, conf map[string]string, driver *corev1.Pod) Input {
	return Input{
		Master:         o.Client.Master,
		Spec:           s,
		Conf:           conf,
		Driver:         driver,
		RequestTimeout: o.RequestTimeout,
		AuthConf:       o.Client.AuthConf,
	}
}

// Command is one spark-submit run as it is exec'd: the program, its
// arguments and its whole environment, and the files written for it
// first. plugin/execute writes the files and runs it; sparkplug render
// shows it.
type Command struct {
	Program string
	Args    []string
	Env     []string
	Files   []File
}

// File is a file written for one run.
type File struct {
	Path string
	Data []byte
}

// Command is the run of in with its files in dir: the driver pod template
// (DriverTemplate of in.Driver) and the executor pod template, the native
// run's (executorTemplate, as sparkplug's ConfigMap carries it), named in
// the arguments (Args, if checkArgs accepts in); the environment is
// Environ.
func (o *Options) Command(in Input, dir, executorTemplate string) (Command, error) {
	if err := checkArgs(&in); err != nil {
		return Command{}, err
	}
	driver, err := podYAML(DriverTemplate(in.Driver, in.Spec, in.Conf))
	if err != nil {
		return Command{}, fmt.Errorf("encode driver pod template: %w", err)
	}
	in.DriverTemplateFile = filepath.Join(dir, DriverTemplateFileName)
	in.ExecutorTemplateFile = filepath.Join(dir, ExecutorTemplateFileName)
	return Command{
		Program: o.Program(),
		Args:    Args(&in),
		Env:     o.Environ(),
		Files: []File{
			{Path: in.DriverTemplateFile, Data: driver},
			{Path: in.ExecutorTemplateFile, Data: []byte(executorTemplate)},
		},
	}, nil
}

// WriteFiles writes c's files, readable by the plugin's user only, into
// directories that exist.
func (c Command) WriteFiles() error {
	for _, f := range c.Files {
		if err := os.WriteFile(f.Path, f.Data, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", filepath.Base(f.Path), err)
		}
	}
	return nil
}
